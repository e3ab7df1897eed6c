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
