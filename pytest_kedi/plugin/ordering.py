"""A ``.kedi`` file's items run in source order, whoever reorders the session's items.

A file's suites and cases share one runtime and run in source order (docs/language.md
§5.1: mutations leak from one case to the next). A plugin that reorders items (pytest-
randomly shuffles modules, then the items within each) may move a file's items as a unit,
or interleave them with others: each keeps its place in the session, and the file's items
fill the places its items had, in source order.
"""

from __future__ import annotations

from itertools import pairwise

import pytest

from pytest_kedi.plugin.itembase import KediItem

__all__ = ["keep_source_order"]


def _line(item: pytest.Item) -> int:
    return item.reportinfo()[1] or 0  # the suite's or case's header line (unique in its file)


def keep_source_order(items: list[pytest.Item]) -> None:
    """Put each ``.kedi`` file's items back in source order, in the places they hold."""
    places: dict[object, list[int]] = {}
    for index, item in enumerate(items):
        if isinstance(item, KediItem):  # a file's items share its module (`LazyModule`)
            places.setdefault(item.lazy, []).append(index)
    for indexes in places.values():
        group = [items[index] for index in indexes]
        lines = [_line(item) for item in group]
        if all(a < b for a, b in pairwise(lines)):
            continue  # the common case: nothing moved
        ordered = sorted(group, key=_line)
        for index, item in zip(indexes, ordered, strict=True):
            items[index] = item
