"""Mutated corpus snippets: the parser returns a Module or raises KediParseError, never
anything else (and never an internal error); parse time grows linearly."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_kedi.lang import KediParseError, check_python, parse
from pytest_kedi.lang import nodes as n

from .conftest import CORPUS, load_manifest, read_corpus

_SNIPPETS: list[str] = []
#: what a terminal acts on rather than shows (a tab is shown as one)
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def snippets() -> list[str]:
    if not _SNIPPETS:
        _SNIPPETS.extend(read_corpus(e["file"]) for e in load_manifest())
    return _SNIPPETS


#: what a mutation inserts: Kedi's delimiters, and what terminals and editors treat specially
_INSERTS = [*'<>[]`\\#:=@~()," \t\n', ">>", "```", "###", "\r", "\r\n", "\x1b[31m", "\x00"]
_INSERTS += ["\ufeff", "\u200b", "日", "\u0301"]


def _mutate(source: str, data: st.DataObject) -> str:
    for _ in range(data.draw(st.integers(1, 4))):
        if not source:
            break
        op = data.draw(
            st.sampled_from(
                ["delete", "insert", "dup", "truncate", "indent", "dup_line", "del_line"]
            )
        )
        i = data.draw(st.integers(0, len(source) - 1))
        lines = source.split("\n")
        k = data.draw(st.integers(0, len(lines) - 1))
        if op == "delete":
            source = source[:i] + source[i + 1 :]
        elif op == "insert":
            ch = data.draw(st.sampled_from(_INSERTS))
            source = source[:i] + ch + source[i:]
        elif op == "dup":
            j = min(len(source), i + data.draw(st.integers(1, 30)))
            source = source[:j] + source[i:j] + source[j:]
        elif op == "truncate":
            source = source[:i]
        elif op == "indent":
            lines[k] = " " * data.draw(st.integers(0, 9)) + lines[k].lstrip()
            source = "\n".join(lines)
        elif op == "dup_line":
            lines.insert(k, lines[data.draw(st.integers(0, len(lines) - 1))])
            source = "\n".join(lines)
        else:
            del lines[k]
            source = "\n".join(lines)
    return source


@pytest.mark.skipif(not (CORPUS / "MANIFEST.json").is_file(), reason="corpus not available")
# a mutated program's Python may draw the warnings Python gives when it compiles code
# (`'\y'`: an invalid escape sequence), located at its `.kedi` line as for a user's file
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_corpus_never_leaks(data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(snippets()))
    mutated = _mutate(source, data)
    try:
        module = check_python(parse(mutated, "m.kedi"))
    except KediParseError as exc:
        assert exc.diagnostics
        assert "internal error" not in exc.message, (mutated, exc.message)
        lines = mutated.removeprefix("\ufeff").split("\n")
        for d in exc.diagnostics:
            assert 1 <= d.line <= max(1, len(lines)), (mutated, d)
            # the caret is on the line shown, or just after its end
            assert 1 <= d.column <= len(lines[d.line - 1].rstrip("\r")) + 1, (mutated, d)
            # the quoted line is the located one, and nothing shown can garble a terminal
            assert d.source_line.rstrip("\r") == lines[d.line - 1].rstrip("\r"), (mutated, d)
            assert _CONTROL.search(d.message) is None, (mutated, d.message)
    else:
        assert isinstance(module, n.Module)


_PIECES = [*"ab <>[]`\\#:=@~(),\n\t>\"'", "```", "###", ">> ", "> if: ", "@f(", "[x] = "]
_PIECES += ["\r", "\x1b", "\x00", "\ufeff", "> profile: ", "> adapter: ", "~T("]


@given(st.lists(st.sampled_from(_PIECES), max_size=60).map("".join))
@settings(max_examples=400, deadline=None)
def test_random_text_never_leaks(source: str) -> None:
    try:
        parse(source)
    except KediParseError as exc:
        assert "internal error" not in exc.message, (source, exc.message)
        assert not any(_CONTROL.search(d.message) for d in exc.diagnostics), (source, exc)


def _composable(source: str) -> bool:
    """Parses alone, no prelude, no top-level return or branch (no dead code when joined)."""
    try:
        module = parse(source)
    except KediParseError:
        return False
    return module.prelude is None and not any(_blocks_joining(s) for s in module.body)


def _blocks_joining(stmt: n.Stmt) -> bool:
    """Top-level statements that conflict when snippets are concatenated."""
    if isinstance(stmt, n.Return | n.If):
        return True  # later snippets would be dead code
    return isinstance(stmt, n.Directive) and stmt.name in ("agent", "package")


def _program(lines: int) -> str:
    parts: list[str] = []
    total = 0
    good = [s for s in snippets() if _composable(s)]
    while total < lines:
        snippet = good[len(parts) % len(good)]
        parts.append(snippet)
        total += snippet.count("\n") + 1
    program = "\n".join(parts)
    parse(program)  # the timing below must cover a complete parse
    return program


def _best_time(source: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()  # CPU time: robust against a loaded machine
        parse(source)
        best = min(best, time.process_time() - start)
    return best


def test_parse_time_is_linear() -> None:
    load_manifest()
    small = _program(500)
    large = "\n".join([small] * 10)  # the same mix of constructs, ten times over
    parse(large)
    ratio = _best_time(large, 5) / _best_time(small, 15)
    print(f"linearity: 5000/500-line parse time ratio {ratio:.1f}")
    assert ratio < 20, f"5000/500-line parse time ratio {ratio:.1f} (linear would be ~10)"


@given(
    text=st.text(alphabet="ab <x>", min_size=1, max_size=12).filter(str.strip),
    indent=st.sampled_from(["", "  ", "\t"]),
    blank=st.sampled_from(["", "  ", "\t", " \t "]),
    after=st.sampled_from(["", "= B\n", "  B\n", "[y] = z\n", "# c\n"]),
    crlf=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_a_continued_return_before_a_blank_line_says_so(
    text: str, indent: str, blank: str, after: str, crlf: bool
) -> None:
    head = "@f():\n" if indent else ""
    source = f"{head}{indent}= {text} \\\n{blank}\n{after}"
    if crlf:
        source = source.replace("\n", "\r\n")
    with pytest.raises(KediParseError) as info:
        parse(source, "m.kedi")
    d = info.value.diagnostics[0]
    assert "but the next line is blank" in d.message, (source, d.message)
    assert (d.line, d.source_line) == (1 + bool(head), f"{indent}= {text} \\")
