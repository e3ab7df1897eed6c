"""A ``> case:`` body as one Python unit (docs/language.md#test-suites), and a file's
embedded Python compiled ahead of its run into a `CodeStore`.

`precompile_module` is what pytest collection calls on a file it has just parsed, as
pytest compiles (and assertion-rewrites) a ``.py`` test module when it collects it: the
run that follows finds every unit in the store instead of compiling it.
"""

from __future__ import annotations

import ast
from typing import Any

from pytest_kedi.lang import nodes
from pytest_kedi.lang.pycheck import Parsed, may_warn, snippets
from pytest_kedi.runtime.pyinterop import CodeStore, Transform, precompile, type_code
from pytest_kedi.runtime.pypositions import move_lines
from pytest_kedi.runtime.sourcefile import SourceFile
from pytest_kedi.text import line_list

__all__ = ["MemoryCodeStore", "case_code", "precompile_module"]


def case_code(case: nodes.Case) -> nodes.PyCode:
    """Join a case body into one Python block whose line k is `.kedi` line ``first + k - 1``
    (fence delimiters and blank lines become empty Python lines)."""
    first = case.body[0].code
    if len(case.body) == 1 and first.kind == "block":
        return first
    lines: list[str] = []
    for item in case.body:
        lines.extend("" for _ in range(item.code.line - first.line - len(lines)))
        lines.extend(line_list(item.code.source) or [""])
    last = case.body[-1].span
    span = nodes.Span(
        first.span.path,
        first.span.start_line,
        first.span.start_col,
        last.end_line,
        last.end_col,
        first.span.start_offset,
        last.end_offset,
    )
    return nodes.PyCode(span, "\n".join(lines), "block", first.line, 1)


def _case_tree(case: nodes.Case, trees: dict[int, Parsed]) -> Parsed | None:
    """`case_code` parsed, from its items' trees: the statements of each in turn, at
    their `.kedi` lines, as the joined text parses (None: an item has no tree)."""
    if len(case.body) == 1:
        return trees.pop(id(case.body[0].code), None)
    body: list[ast.stmt] = []
    for item in case.body:
        tree, delta = trees.pop(id(item.code), None) or (None, 0)
        if not isinstance(tree, ast.Module):
            return None
        if delta:
            move_lines(tree, delta)
        body.extend(tree.body)
    return ast.Module(body=body, type_ignores=[]), 0


def precompile_module(
    module: nodes.Module,
    path: str,
    store: CodeStore,
    case_transform: Transform,
    trees: dict[int, Parsed] | None = None,
) -> None:
    """Compile into ``store`` what running ``module`` (read from ``path``) compiles: the
    prelude, each case's body with ``case_transform``, and every other backtick
    expression, Python block and backtick type. ``trees``: the snippets `check_python`
    parsed for ``module`` (used instead of parsing them again, which would give Python's
    warnings about them again, and taken out). Code that does not compile is left to the
    run, which reports it."""
    source_file = SourceFile(path, module.source)
    found = trees if trees is not None else {}
    if module.prelude is not None:
        code = module.prelude.code
        precompile(code, source_file, store, mode="prelude", parsed=found.pop(id(code), None))
    for node in module.body:
        walked: object = node
        if isinstance(node, nodes.TestSuite):
            for case in node.cases:
                if case.body:
                    parsed = _case_tree(case, found) if found else None
                    code = case_code(case)
                    precompile(code, source_file, store, transform=case_transform, parsed=parsed)
            walked = node.directives
        for snippet in snippets(walked):
            parsed = found.pop(id(snippet), None)
            if isinstance(snippet, nodes.PyCode):
                precompile(snippet, source_file, store, parsed=parsed)
            else:
                precompile(type_code(snippet), source_file, store, parsed=parsed)


class WarnedTrees(dict[int, Parsed]):
    """Where `check_python` keeps the trees it parses (`load`'s path), keeping only those of
    the snippets of ``module`` that Python's parser may warn about (an invalid escape
    sequence): `compile_into` compiles them from these trees, so that running them later
    does not parse them again, which would give the warnings a second time. The others are
    compiled when they first run, as usual (compiling a whole file up front would cost its
    load about as much again; the plugin precompiles at collection: `precompile_module`).
    Keeping every tree of a large file while it loads would double its memory."""

    def __init__(self, module: nodes.Module) -> None:
        super().__init__()
        #: the snippets wanted, by id, with the mode each is compiled in (cases are not)
        self.wanted: dict[int, tuple[nodes.PyCode | nodes.TypeRef, str | None]] = {}
        prelude = module.prelude
        if prelude is not None and may_warn(prelude.code.source):
            self.wanted[id(prelude.code)] = (prelude.code, "prelude")
        for node in module.body:
            walked: object = node.directives if isinstance(node, nodes.TestSuite) else node
            for snippet in snippets(walked):
                if may_warn(snippet.source):
                    self.wanted[id(snippet)] = (snippet, None)

    def __setitem__(self, key: int, value: Parsed) -> None:
        if key in self.wanted:
            super().__setitem__(key, value)

    def compile_into(self, source_file: SourceFile, store: CodeStore | None) -> CodeStore | None:
        """Compile the kept trees into ``store``; the store, a new `MemoryCodeStore` when
        there was none and a tree needed one."""
        if not self:
            return store
        kept = store if store is not None else MemoryCodeStore()
        for key, parsed in self.items():
            snippet, mode = self.wanted[key]
            code = snippet if isinstance(snippet, nodes.PyCode) else type_code(snippet)
            precompile(code, source_file, kept, mode=mode, parsed=parsed)
        return kept


class MemoryCodeStore:
    """A `CodeStore` in this process's memory. The pytest plugin's store when pytest's
    cache is off (``-p no:cacheprovider``, or no cache directory): what collection compiled
    stays for the run, so a file's Python is parsed once, and Python's warnings about it
    are given once, as with the plugin's code cache on disk."""

    def __init__(self) -> None:
        self.units: dict[tuple[object, ...], tuple[Any, ...]] = {}

    def get(self, key: tuple[object, ...]) -> tuple[Any, ...] | None:
        return self.units.get(key)

    def put(self, key: tuple[object, ...], value: tuple[Any, ...]) -> None:
        self.units[key] = value

    def close(self) -> None:
        """Forget every unit (the session is over)."""
        self.units.clear()
