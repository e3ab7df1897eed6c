"""Source positions of embedded Python: a unit's tree moved to its `.kedi` lines and columns
(`relocate`), and missing positions completed from the parent node (`fix_locations`), each in
one walk without recursion (docs/language.md#python-interop)."""

from __future__ import annotations

import ast
from typing import Any

from pytest_kedi.lang.nodes import PyCode
from pytest_kedi.lang.scanner import fence_dedent
from pytest_kedi.runtime.sourcefile import SourceFile

__all__ = ["first_line_shift", "fix_locations", "move_lines", "relocate"]


def first_line_shift(code: PyCode, source_file: SourceFile, stripped: int) -> int:
    """UTF-8 byte offset, on its `.kedi` line, of the unit's first character (after the
    ``stripped`` characters the runtime strips from an expression)."""
    skipped = code.source[:stripped]
    if "\n" in skipped:  # the text starts on a later line, after the skipped indentation
        return len(skipped.rsplit("\n", 1)[1].encode("utf-8"))
    prefix = source_file.line_text(code.line)[: code.col - 1 + stripped]
    return len(prefix.encode("utf-8"))


def _fence_shifts(code: PyCode, source_file: SourceFile) -> list[int] | None:
    """The characters (bytes: they are blanks) the dedent took from each line of a fence
    (a tab is four columns of indentation but one character, docs/language.md#indentation);
    None when each line lost ``code.col - 1`` spaces."""
    lines = source_file.lines[code.line - 1 : code.line - 1 + code.source.count("\n") + 1]
    pad = " " * (code.col - 1)
    if all(line.startswith(pad) or not line.strip() for line in lines):
        return None
    return [fence_dedent(line, code.col) for line in lines]


def relocate(
    tree: ast.AST, code: PyCode, source_file: SourceFile, stripped: int, delta: int = 0
) -> bool:
    """Give ``tree``, as `parse_snippet` parsed it (its line numbers plus ``delta`` are
    `.kedi` lines), `.kedi` line numbers and column offsets; whether it holds an
    assignment expression (``:=``). A position a node lacks (a transformed tree may lack
    some) is its parent's, as `fix_locations` completes them, in the same pass."""
    shifts: list[int] | None = None  # a fence's shift per line, where tabs vary it
    if code.kind == "block":
        shift_first = shift_rest = code.col - 1
        first = code.line - delta
        shifts = _fence_shifts(code, source_file)
    else:
        shift_first, shift_rest = first_line_shift(code, source_file, stripped), 0
        first = code.line + code.source.count("\n", 0, stripped) - delta
    walrus = False
    # Each entry: a node and its parent's positions in the tree (before relocation).
    stack: list[tuple[Any, int, int, int, int]] = [(tree, first, 0, first, 0)]
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node, line, col, end_line, end_col = pop()
        fields = node.__dict__
        if node._attributes:  # every node with positions has all four
            if type(node) is ast.NamedExpr:
                walrus = True
            value = fields.get("lineno")
            if value is not None:
                line = value
            value = fields.get("end_lineno")
            if value is not None:
                end_line = value
            value = fields.get("col_offset")
            if value is not None:
                col = value
            value = fields.get("end_col_offset")
            if value is not None:
                end_col = value
            node.lineno = line + delta
            node.end_lineno = end_line + delta
            if shifts is None:
                shift = shift_first if line == first else shift_rest
                end_shift = shift_first if end_line == first else shift_rest
            else:
                shift = shifts[line - first] if 0 <= line - first < len(shifts) else 0
                at = end_line - first
                end_shift = shifts[at] if 0 <= at < len(shifts) else 0
            node.col_offset = col + shift if col >= 0 else col
            node.end_col_offset = end_col + end_shift if end_col >= 0 else end_col
        for name in node._fields:
            value = fields.get(name)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type) and (item._fields or item._attributes):
                        push((item, line, col, end_line, end_col))
            elif isinstance(value, node_type) and (value._fields or value._attributes):
                push((value, line, col, end_line, end_col))
    return walrus


def fix_locations(tree: ast.AST) -> None:
    """`ast.fix_missing_locations` without its recursive closure, which is cyclic garbage
    left behind by every call (one per compiled unit: a cyclic GC pass per few hundred
    statements of a program run). A node missing a position takes its parent's.

    Runs once per compiled unit and generated procedure body, so it reads each node's
    ``__dict__`` (where a node keeps its fields and positions) instead of going through
    `ast.iter_child_nodes`, and skips the childless nodes without positions (contexts and
    operators), which it would leave unchanged."""
    stack: list[tuple[Any, int, int, int, int]] = [(tree, 1, 0, 1, 0)]
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node, line, col, end_line, end_col = pop()
        fields = node.__dict__
        if node._attributes:  # every node with positions has all four
            value = fields.get("lineno")
            if value is None:
                node.lineno = line
            else:
                line = value
            value = fields.get("end_lineno")
            if value is None:
                node.end_lineno = end_line
            else:
                end_line = value
            value = fields.get("col_offset")
            if value is None:
                node.col_offset = col
            else:
                col = value
            value = fields.get("end_col_offset")
            if value is None:
                node.end_col_offset = end_col
            else:
                end_col = value
        for name in node._fields:
            value = fields.get(name)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type) and (item._fields or item._attributes):
                        push((item, line, col, end_line, end_col))
            elif isinstance(value, node_type) and (value._fields or value._attributes):
                push((value, line, col, end_line, end_col))


def move_lines(tree: ast.AST, delta: int) -> None:
    """Add ``delta`` to the line numbers of every node of ``tree`` (a parsed tree: every
    node with positions has them all)."""
    stack: list[Any] = [tree]
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node = pop()
        fields = node.__dict__
        if node._attributes:
            node.lineno += delta
            node.end_lineno += delta
        for name in node._fields:
            value = fields.get(name)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type) and (item._fields or item._attributes):
                        push(item)
            elif isinstance(value, node_type) and (value._fields or value._attributes):
                push(value)
