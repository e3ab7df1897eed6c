"""A Python syntax error inside backticks or a fence is a located collection error,
never row feedback naming an internal file (with and without xdist)."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import DEMO, Kedi

BROKEN = """\
@eval: e:
  > data: rows:
    = `[(1, 1), (2, 2`
  > metric: m(rows):
    = `rows == expected`
"""


def test_python_syntax_error_is_a_located_collection_error(kedi: Kedi) -> None:
    kedi.write("b.kedi", BROKEN)
    kedi.write("demo.kedi", DEMO)
    result = kedi.subprocess("--kedi-eval")
    output = result.stdout.str()
    result.assert_outcomes(passed=3, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting b.kedi*",
            "Kedi parse error:",
            '  File "*b.kedi", line 3, column 17',
            "      = `[(1, 1), (2, 2`",
            "                  ^",
            "Kedi error: ParseError",
            "  Python syntax error: '(' was never closed",
        ]
    )
    assert "<kedi" not in output
    assert "Traceback" not in output


# Python warns of each invalid escape sequence (`\d`, ...) when it parses the code: in a
# backtick expression (line 2), a procedure's fence (line 6), a backtick type and an
# expression starting at a later column (lines 10 and 11), case bodies (lines 18, 21).
ESCAPES = """\
@digits(text: str) -> int:
  = `len(__import__("re").findall("\\d", text))`

@spaces(text: str) -> int:
  = ```
  found = __import__("re").findall("\\s", text)
  return len(found)
  ```

@tagged(x: `Annotated[str, "\\p"]`) -> int:
  [size: int] = `len(x) + len("\\q") - 2`
  = `size`

@test: all:
  > case: one:
    ```
    assert digits("a1b2") == 2
    assert spaces("a b") == 1, "\\y"
    ```
  > case: two:
    `letters = "\\z"`
    ```
    assert tagged("ab") == 2 and letters
    ```
"""
# ... and in a prelude (line 2).
PRELUDE = """\
```
WORD = __import__("re").compile("\\w+")
```

@test: prelude:
  > case: word:
    `assert WORD.match("a")`
"""
WARNED = {"t.kedi": "dspqyz", "p.kedi": "w"}


def _line_of(text: str, letter: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if f"\\{letter}" in line)


def _warnings_summary(output: str) -> dict[str, list[str]]:
    """The warnings summary: each warning's first line, with the locations above it."""
    lines = output.split("=== warnings summary ===", 1)[1].split("-- Docs:", 1)[0]
    found: dict[str, list[str]] = {}
    locations: list[str] = []
    for line in lines.splitlines()[1:]:
        if not line.strip():
            locations = []
        elif line.startswith("  "):
            if locations:
                found.setdefault(line.strip(), []).extend(locations)
                locations = []
        else:
            locations.append(line)
    return found


def test_python_warnings_are_reported_once_at_their_kedi_line(kedi: Kedi) -> None:
    """Python's warnings about embedded Python (an invalid escape sequence) name the
    `.kedi` file and the line of the code, each once, as pytest reports a ``.py`` test
    module's: not ``<unknown>:1`` nor the first line of the snippet's procedure. Under
    xdist each worker that compiles the file reports them, at the same lines."""
    kedi.write("t.kedi", ESCAPES)
    kedi.write("p.kedi", PRELUDE)
    result = kedi.subprocess("--kedi-eval")
    result.assert_outcomes(passed=3)
    output = result.stdout.str()
    assert "<unknown>" not in output
    summary = _warnings_summary(output)
    assert len(summary) == 7, output
    for name, letters in WARNED.items():
        text = ESCAPES if name == "t.kedi" else PRELUDE
        for letter in letters:
            line = _line_of(text, letter)
            where = f"{kedi.pytester.path / name}:{line}"
            locations = [
                summary.get(f"{where}: {category}: invalid escape sequence '\\{letter}'")
                for category in ("DeprecationWarning", "SyntaxWarning")  # Python 3.12: Syntax
            ]
            found = locations[0] or locations[1]
            assert found, (where, letter, output)
            if kedi.workers is None:  # reported by collection, which compiles the file
                assert found == [f"{name}:{line}"], output
            else:
                assert 1 <= len(found) <= kedi.workers, output
                assert all(
                    w in (f"{name}:{line}", name) or w.startswith(f"{name}::") for w in found
                )
    # A second run reads the compiled code from the cache, as pytest reads a `.pyc`.
    again = kedi.subprocess("--kedi-eval")
    again.assert_outcomes(passed=3)
    assert "warnings summary" not in again.stdout.str()


def test_without_pytest_cache_python_warnings_are_still_reported_once(kedi: Kedi) -> None:
    """With pytest's cache disabled, the code collection compiled is kept in memory for the
    run (`MemoryCodeStore`): the run parses nothing again, so each warning is given once."""
    kedi.write("t.kedi", ESCAPES)
    kedi.write("p.kedi", PRELUDE)
    result = kedi.subprocess("--kedi-eval", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    output = result.stdout.str()
    summary = _warnings_summary(output)
    assert len(summary) == 7, output
    for found in summary.values():
        if kedi.workers is None:  # every warning given by collection, once
            assert len(found) == 1 and "::" not in found[0], output
        else:  # each worker collects every file
            assert 1 <= len(found) <= kedi.workers, output


def test_a_python_warning_made_an_error_is_a_located_collection_error(kedi: Kedi) -> None:
    """``-W error`` makes each of Python's warnings a syntax error: a collection error
    with a located Kedi diagnostic for each."""
    kedi.write("t.kedi", ESCAPES)
    result = kedi.subprocess("--kedi-eval", "-W", "error")
    output = result.stdout.str()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting t.kedi*",
            "Kedi parse error:",
            '  File "*t.kedi", line 6, column 36',
            '    found = __import__("re").findall("\\s", text)',
            "                                     ^",
            "Kedi error: ParseError",
            "  Python syntax error: invalid escape sequence '\\s'",
        ]
    )
    for letter in WARNED["t.kedi"]:
        line = _line_of(ESCAPES, letter)
        column = ESCAPES.splitlines()[line - 1].index(f'"\\{letter}') + 1
        assert f'File "t.kedi", line {line}, column {column}' in output, (letter, output)
    assert "Traceback" not in output


YIELDING_CASE = """\
@test: t:
  > case: c:
    `assert False, "should fail"`
    `yield`
  > case: ok:
    `assert True`
"""


def test_a_case_body_that_yields_is_a_located_collection_error(kedi: Kedi) -> None:
    """A case body compiles as a function's body: a ``yield`` made it a generator that
    never ran, and the failing case passed. It is Python's error, located, as any error
    Python gives when compiling (not only parsing) the code."""
    kedi.write("y.kedi", YIELDING_CASE)
    kedi.write("b.kedi", "@f() -> int:\n  = ```\n  break\n  ```\n")
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting b.kedi*",
            '  File "*b.kedi", line 3, column 3',
            "  Python syntax error: 'break' outside loop",
            "*ERROR collecting y.kedi*",
            '  File "*y.kedi", line 4, column 6',
            "      `yield`",
            "       ^",
            "  Python syntax error: 'yield' outside function",
        ]
    )
    assert "__kedi_block__" not in result.stdout.str()


def test_a_file_s_python_syntax_errors_are_all_shown_its_kedi_error_first(kedi: Kedi) -> None:
    """docs/language.md#diagnostics: every Python syntax error of a file is shown, in line
    order; of its Kedi errors only the first (the parse stops there)."""
    kedi.write("py.kedi", "[a] = `1 +`\n[b] = `2`\n[c] = `(`\n")
    kedi.write("kedi.kedi", "[a] = <x y>\n[b] = <c d>\n[c] = `(`\n")
    result = kedi.run("--kedi-eval", "-p", "no:randomly")
    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert out.count('File "kedi.kedi", line') == 1
    assert 'File "kedi.kedi", line 1, column 7' in out
    shown = [line for line in out.splitlines() if line.startswith('  File "py.kedi"')]
    assert shown == ['  File "py.kedi", line 1, column 11', '  File "py.kedi", line 3, column 8']
    result.stdout.fnmatch_lines(["ERROR py.kedi - py.kedi:1:11: Python syntax error*"])
