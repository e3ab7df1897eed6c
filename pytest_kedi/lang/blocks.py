"""Indentation structure (docs/language.md#indentation): a flat item list -> a tree of bodies.

A body is the run of following items indented deeper than its header; a dedent
must return to an enclosing level. Blank lines never close a block. A ``###``
block directly after a header (before any body line) is attached to it as a
possible docstring; elsewhere it is a comment.
"""

from __future__ import annotations

from pytest_kedi.lang.scanner import Item
from pytest_kedi.lang.source import KediSyntaxError

__all__ = ["build_tree"]


def build_tree(items: list[Item]) -> list[Item]:
    root: list[Item] = []
    # stack of (indentation level, list receiving items at that level)
    levels: list[int] = [0]
    lists: list[list[Item]] = [root]
    last: Item | None = None
    for item in items:
        if item.kind == "doc":
            if (
                last is not None
                and not last.children
                and item.indent > last.indent
                and last.doc is None
                and last.text.endswith(":")
            ):
                last.doc = item.doc
            continue
        width = item.indent
        if width > levels[-1]:
            current = lists[-1]
            if not current:
                raise KediSyntaxError(
                    item.start, "unexpected indentation: no statement opens a body here"
                )
            parent = current[-1]
            if parent.children:
                raise KediSyntaxError(
                    item.start,
                    "unexpected indentation: this line is deeper than the body it belongs to",
                )
            levels.append(width)
            lists.append(parent.children)
        elif width < levels[-1]:
            while width < levels[-1]:
                levels.pop()
                lists.pop()
            if width != levels[-1]:
                raise KediSyntaxError(
                    item.start,
                    "unexpected dedent: this indentation matches no enclosing block",
                )
        lists[-1].append(item)
        last = item
    return root
