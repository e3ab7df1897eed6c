"""Positions given to generated and rewritten Python trees before they are compiled."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

from pytest_kedi.lang import nodes
from pytest_kedi.runtime import pyinterop
from pytest_kedi.runtime.sourcefile import SourceFile

POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def _without_some_positions(tree: ast.AST, every: int) -> ast.AST:
    """``tree`` with every ``every``-th position removed (a pattern that reaches parents,
    children and each of the four fields)."""
    count = 0
    for node in ast.walk(tree):
        for name in POSITIONS:
            if name in node._attributes and hasattr(node, name):
                count += 1
                if count % every == 0:
                    delattr(node, name)
    return tree


@pytest.mark.parametrize("every", [1, 2, 3, 7])
def test_missing_positions_are_filled_as_the_standard_library_fills_them(every: int) -> None:
    source = Path(pyinterop.__file__).read_text(encoding="utf-8")
    tree = _without_some_positions(ast.parse(source), every)
    ours, theirs = copy.deepcopy(tree), copy.deepcopy(tree)
    pyinterop._fix_locations(ours)
    ast.fix_missing_locations(theirs)
    assert ast.dump(ours, include_attributes=True) == ast.dump(theirs, include_attributes=True)


def test_a_generated_tree_without_positions_takes_its_parents() -> None:
    call = ast.Call(func=ast.Name(id="f", ctx=ast.Load()), args=[ast.Constant(1)], keywords=[])
    stmt = ast.Expr(value=call, lineno=7, col_offset=2, end_lineno=7, end_col_offset=9)
    module = ast.Module(body=[stmt], type_ignores=[])
    pyinterop._fix_locations(module)
    for node in (call, call.func, call.args[0]):
        assert (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset) == (7, 2, 7, 9)
    namespace = {"f": lambda value: value}
    exec(compile(module, "<generated>", "exec"), namespace)  # complete enough to compile


EXPRESSIONS = [
    "x * 2",
    "  [(n, n * 2) for n in range(5)]",
    "f(a, *b, key=lambda v: v.name)[1:2]",
    "(total := sum(xs)) / len(xs)",
    "{k: [v async for v in w] for k, w in d.items()}",
    "(f'é{x!r:>{width}}'\n  + 'next line')",
]


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_a_parsed_expression_relocates_as_one_whose_positions_were_completed(
    source: str,
) -> None:
    """A tree straight from `ast.parse` has every position: relocating it without first
    completing them gives the same tree; the walrus is detected either way."""
    kedi = f"@p(x: int) -> int:\n  = `{source}`\n"
    code = nodes.PyCode(
        nodes.Span("p.kedi", 2, 6, 2, 6, 0, 0),
        source,
        "expr",
        2,
        kedi.splitlines()[1].index("`") + 2,
    )
    file = SourceFile("p.kedi", kedi)
    stripped = len(source) - len(source.lstrip())
    trees = [ast.parse(source.strip(), "p.kedi", mode="eval") for _ in range(2)]
    walrus = [pyinterop._relocate(trees[0], code, file, stripped, parsed=True)]
    walrus.append(pyinterop._relocate(trees[1], code, file, stripped))
    assert ast.dump(trees[0], include_attributes=True) == ast.dump(
        trees[1], include_attributes=True
    )
    assert walrus == [":=" in source] * 2
    assert trees[0].body.lineno == 2


@pytest.mark.parametrize("source", ["", "one", "a\nb", "a\n\nb\n", "\n\n", "é\r\nz\n  last"])
def test_source_file_line_spans_and_offsets(source: str) -> None:
    file = SourceFile("p.kedi", source)
    starts = [0] + [index + 1 for index, char in enumerate(source) if char == "\n"]
    for line, start in enumerate(starts, 1):
        span = file.line_span(line)
        assert span.start_offset == start
        assert source[span.start_offset : span.end_offset] == file.line_text(line)
        assert file.line_of_offset(start) == line
