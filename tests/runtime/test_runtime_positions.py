"""Positions given to generated and rewritten Python trees before they are compiled."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

from pytest_kedi.lang import nodes
from pytest_kedi.lang.pycheck import parse_snippet
from pytest_kedi.runtime import pyinterop, pypositions
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
    pypositions.fix_locations(ours)
    ast.fix_missing_locations(theirs)
    assert ast.dump(ours, include_attributes=True) == ast.dump(theirs, include_attributes=True)


def test_a_generated_tree_without_positions_takes_its_parents() -> None:
    call = ast.Call(func=ast.Name(id="f", ctx=ast.Load()), args=[ast.Constant(1)], keywords=[])
    stmt = ast.Expr(value=call, lineno=7, col_offset=2, end_lineno=7, end_col_offset=9)
    module = ast.Module(body=[stmt], type_ignores=[])
    pypositions.fix_locations(module)
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


def _relocated_in_two_passes(
    tree: ast.AST, code: nodes.PyCode, file: SourceFile, stripped: int
) -> bool:
    """What `relocate` gives, as it was first written (on a tree parsed from the unit's
    text alone, its first line 1): every missing position completed (`fix_locations`),
    then every node moved by one walk; the walrus found on the way."""
    if code.kind == "block":
        shift_first = shift_rest = code.col - 1
    else:
        shift_first, shift_rest = pypositions.first_line_shift(code, file, stripped), 0
    delta = code.line - 1
    pypositions.fix_locations(tree)
    walrus = False
    for node in ast.walk(tree):
        if isinstance(node, ast.NamedExpr):
            walrus = True
        if "lineno" not in node._attributes:
            continue
        line, end_line = node.lineno, node.end_lineno
        if node.col_offset >= 0:
            node.col_offset += shift_first if line == 1 else shift_rest
        if node.end_col_offset >= 0:
            node.end_col_offset += shift_first if end_line == 1 else shift_rest
        node.lineno, node.end_lineno = line + delta, end_line + delta
    return walrus


def _expression(source: str) -> tuple[nodes.PyCode, SourceFile]:
    kedi = f"@p(x: int) -> int:\n  = `{source}`\n"
    code = nodes.PyCode(
        nodes.Span("p.kedi", 2, 6, 2, 6, 0, 0),
        source,
        "expr",
        2,
        kedi.splitlines()[1].index("`") + 2,
    )
    return code, SourceFile("p.kedi", kedi)


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_a_parsed_expression_relocates_as_in_two_passes(source: str) -> None:
    """`relocate` moves a tree parsed at its `.kedi` lines (`parse_snippet`) where the
    two passes moved the tree parsed from the text alone."""
    code, file = _expression(source)
    stripped = len(source) - len(source.lstrip())
    tree, delta = parse_snippet(source, True, code.line, "p.kedi")
    assert delta == 0  # parsed at its `.kedi` lines
    trees = [tree, ast.parse(source.strip(), "p.kedi", mode="eval")]
    walrus = [pypositions.relocate(trees[0], code, file, stripped)]
    walrus.append(_relocated_in_two_passes(trees[1], code, file, stripped))
    assert ast.dump(trees[0], include_attributes=True) == ast.dump(
        trees[1], include_attributes=True
    )
    assert walrus == [":=" in source] * 2
    assert trees[0].body.lineno == 2


@pytest.mark.parametrize("every", [1, 2, 3, 7])
@pytest.mark.parametrize("kind", ["block", "expr"])
def test_a_tree_missing_positions_relocates_as_in_two_passes(every: int, kind: str) -> None:
    """A transformed tree (assertion rewriting, say) lacks positions: each takes its
    parent's, and moves with it to the `.kedi` line and column."""
    source = Path(pyinterop.__file__).read_text(encoding="utf-8")
    body = "\n".join("    " + line for line in source.split("\n"))  # the fence's lines
    kedi = "@test: t:\n  > case: c:\n    ```\n" + body + "\n    ```\n"
    if kind == "block":
        code = nodes.PyCode(nodes.Span("p.kedi", 4, 5, 4, 5, 0, 0), source, "block", 4, 5)
        file = SourceFile("p.kedi", kedi)
    else:
        code, file = _expression("é + (y := 2)")
        source = "é + (y := 2)"
    # The same nodes lose their positions in the tree parsed at the `.kedi` lines (ours)
    # and in the tree parsed from the text alone (the two passes').
    tree, delta = parse_snippet(source, False, code.line, "p.kedi")
    ours = _without_some_positions(tree, every)
    theirs = _without_some_positions(ast.parse(source), every)
    walrus = pypositions.relocate(ours, code, file, 0, delta)
    assert walrus == _relocated_in_two_passes(theirs, code, file, 0)
    assert ast.dump(ours, include_attributes=True) == ast.dump(theirs, include_attributes=True)


@pytest.mark.parametrize("source", ["", "one", "a\nb", "a\n\nb\n", "\n\n", "é\r\nz\n  last"])
def test_source_file_line_spans_and_offsets(source: str) -> None:
    file = SourceFile("p.kedi", source)
    starts = [0] + [index + 1 for index, char in enumerate(source) if char == "\n"]
    for line, start in enumerate(starts, 1):
        span = file.line_span(line)
        assert span.start_offset == start
        assert source[span.start_offset : span.end_offset] == file.line_text(line)
        assert file.line_of_offset(start) == line


def _top_level_targets_recursively(body: list[ast.stmt]) -> set[str]:
    """`top_level_targets` as a recursive visit: a lambda's defaults and a comprehension's
    first iterable are evaluated at the block's level, and a `:=` in a comprehension binds
    there (PEP 572)."""
    found: set[str] = set()
    comprehensions = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    functions = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

    def walrus_targets(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, functions):
                continue
            if isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
                found.add(child.target.id)
            walrus_targets(child)

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            for deco in node.decorator_list:
                visit(deco)
            return
        if isinstance(node, ast.Lambda):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    visit(default)
            return
        if isinstance(node, comprehensions):
            visit(node.generators[0].iter)
            walrus_targets(node)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    found.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
        elif isinstance(node, ast.Global):
            found.update(node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return found


BLOCK = """\
import os.path, json as j
from x import *
from y import a as b, c
@deco(d := 1)
def f(g=(h := 2)):
    inner = 1
class K:
    attr = 2
for i, (k, *rest) in pairs:
    del gone
try:
    pass
except E as err:
    pass
with open(p) as (w1, w2):
    global g1, g2
lam = lambda q: (z := q)
lam2 = lambda q=(y := 1): q
comp = [u for u in range(3) if (v := u)]
nest = [[(w := a) for a in b] for b in (c2 := cs) if (lambda: (x9 := 1))]
match point:
    case [m1, *m2] | {"k": m3}:
        pass
    case {"k": int() as m4, **m5}:
        pass
"""


@pytest.mark.parametrize("source", [BLOCK, Path(pyinterop.__file__).read_text(encoding="utf-8")])
def test_top_level_targets_as_found_by_a_recursive_visit(source: str) -> None:
    from pytest_kedi.runtime.pyanalysis import top_level_targets

    body = ast.parse(source).body
    assert top_level_targets(body) == _top_level_targets_recursively(body)
    if source is BLOCK:  # `:=` in a comprehension or a lambda default binds here; not in a lambda
        assert {"v", "w", "y", "c2"} <= top_level_targets(body)
        # a `match` statement's captures bind here too (they were missed: not written back)
        assert {"m1", "m2", "m3", "m4", "m5"} <= top_level_targets(body)
        assert not {"z", "x9", "u", "a"} & top_level_targets(body)


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_an_expression_parsed_alone_relocates_as_parsed_at_its_line(source: str) -> None:
    """Far down a file an expression Python cannot warn of is parsed alone: `relocate`
    moves it to the `.kedi` positions it has parsed at its `.kedi` lines."""
    code, file = _expression(source)
    code = nodes.PyCode(code.span, source, "expr", 300, code.col)
    file = SourceFile("p.kedi", "\n" * 298 + file.source)
    stripped = len(source) - len(source.lstrip())
    alone, delta = parse_snippet(source, True, code.line, "p.kedi")
    assert delta == 299
    at_line = ast.parse("\n" * 299 + source.strip(), "p.kedi", mode="eval")
    walrus = [
        pypositions.relocate(t, code, file, stripped, d) for t, d in ((alone, delta), (at_line, 0))
    ]
    assert walrus == [":=" in source] * 2
    assert ast.dump(alone, include_attributes=True) == ast.dump(at_line, include_attributes=True)
    assert isinstance(alone, ast.Expression) and alone.body.lineno == 300
