"""A ``.kedi`` file's items run in source order, whoever reorders the session's items.

A file's suites and cases share one runtime and run in source order (docs/language.md
§5.1: mutations leak from one case to the next). A plugin that reorders items (pytest-
randomly shuffles modules, then the items within each) may move a file's items as a unit,
or interleave them with others: a file whose items were moved runs as a unit, in source
order, where its first item was put (so ``--ff`` runs a file holding a failure first).
"""

from __future__ import annotations

import pytest

from pytest_kedi.plugin.itembase import KediItem

__all__ = ["keep_source_order"]


def _line(item: pytest.Item) -> int:
    return item.reportinfo()[1] or 0  # the suite's or case's header line (unique in its file)


def keep_source_order(items: list[pytest.Item]) -> None:
    """Put each ``.kedi`` file's items back in source order. A file whose items were moved
    out of it runs as a unit, in source order, where its first item was put: pytest's
    ``--ff`` runs a file holding a failure first, as it would its failed item."""
    groups: dict[object, list[pytest.Item]] = {}
    last: dict[object, int] = {}  # each file's line of its latest item so far
    moved: set[object] = set()
    for item in items:
        if isinstance(item, KediItem):  # a file's items share its module (`LazyModule`)
            key, line = item.lazy, _line(item)
            before = last.get(key)
            if before is None:
                groups[key] = [item]
            else:
                groups[key].append(item)
                if before >= line:
                    moved.add(key)
            last[key] = line
    if not moved:
        return  # the common case: nothing moved
    placed: list[pytest.Item] = []
    for item in items:
        if isinstance(item, KediItem) and item.lazy in moved:
            group = groups.pop(item.lazy, None)
            if group is not None:  # the file's first item: the whole file, here
                placed.extend(sorted(group, key=_line))
            continue
        placed.append(item)
    items[:] = placed
