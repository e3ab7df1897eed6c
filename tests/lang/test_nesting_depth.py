"""The nesting-depth error points at the line where the limit was crossed."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import KediParseError, parse


def test_deep_block_nesting_is_reported_where_the_limit_was_crossed() -> None:
    depth = 1_500
    lines = ["[x] = a"]  # line 1: not the culprit
    lines += ["  " * i + "> if: `True`:" for i in range(depth)]
    lines.append("  " * depth + "[y] = b")
    with pytest.raises(KediParseError) as info:
        parse("\n".join(lines) + "\n", "deep.kedi")
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.message == "the program is nested too deeply"
    assert 2 < diagnostic.line <= depth + 2
    assert diagnostic.source_line == lines[diagnostic.line - 1]
    assert diagnostic.column == len(lines[diagnostic.line - 1]) - len("> if: `True`:") + 1


def test_deep_nesting_inside_one_line_is_reported_at_that_line() -> None:
    source = "[x] = a\n\n[y] = " + "<f(" * 3_000 + "a" + ")>" * 3_000 + "\n"
    with pytest.raises(KediParseError) as info:
        parse(source, "deep.kedi")
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.message == "the program is nested too deeply"
    assert (diagnostic.line, diagnostic.column) == (3, 1)


def _at_depth(depth: int, fn):  # type: ignore[no-untyped-def]
    """``fn()`` called from ``depth`` more frames of the caller's stack."""
    return fn() if depth == 0 else _at_depth(depth - 1, fn)


def _outcome(source: str):  # type: ignore[no-untyped-def]
    from pytest_kedi.lang import check_python

    try:
        check_python(parse(source, "deep.kedi"))
    except KediParseError as exc:
        d = exc.diagnostics[0]
        return (d.line, d.column, d.message)
    return "ok"


@pytest.mark.parametrize(
    "source",
    [
        # nested bodies, nested substitutions, deeply nested embedded Python
        "\n".join(["  " * i + "> if: `True`:" for i in range(250)] + ["  " * 250 + "[y] = b"]),
        "[y] = " + "<f(" * 200 + "a" + ")>" * 200,
        "[y] = `" + "-" * 900 + "1`",
        "```\nx = " + "not " * 900 + "1\n```",
    ],
    ids=["bodies", "substitutions", "python_expression", "python_fence"],
)
def test_how_deep_a_file_may_nest_does_not_depend_on_the_callers_stack(source: str) -> None:
    """The same file parses the same whoever calls the parser (it was accepted by the command
    line and rejected under pytest, whose stack is deeper)."""
    assert _at_depth(0, lambda: _outcome(source + "\n")) == "ok"
    assert _at_depth(500, lambda: _outcome(source + "\n")) == "ok"


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        ("[y] = `" + "-" * 2_000 + "1`", 1, 8),
        ("[a] = x\n```\nx = " + "not " * 2_000 + "1\n```", 3, 1),
    ],
)
def test_python_too_deep_for_its_compiler_is_the_same_error_from_any_stack(
    source: str, line: int, column: int
) -> None:
    """Python's parser accepts it, its compiler gives up (the code failed when it ran, with
    a bare `RecursionError`): a located error from any stack."""
    message = (
        "Python syntax error: this code is too deeply nested or too large for Python's "
        "compiler (RecursionError: maximum recursion depth exceeded"
    )
    for depth in (0, 500):
        found = _at_depth(depth, lambda: _outcome(source + "\n"))
        assert found[:2] == (line, column)
        assert found[2].startswith(message)


def test_too_deep_nesting_gives_the_same_located_error_from_any_stack() -> None:
    depth = 1_000
    source = "[x] = a\n" + "[y] = " + "<f(" * depth + "a" + ")>" * depth + "\n"
    shallow = _at_depth(0, lambda: _outcome(source))
    assert shallow == (2, 1, "the program is nested too deeply")
    assert _at_depth(500, lambda: _outcome(source)) == shallow


def test_whether_deep_python_compiles_does_not_depend_on_the_callers_stack() -> None:
    from pytest_kedi.runtime import load

    source = "[y: int] = `" + "-" * 900 + "1`\n= <y>\n"

    def run() -> object:
        return load("deep.kedi", source=source).run()

    assert _at_depth(0, run) == "1"
    assert _at_depth(500, run) == "1"
