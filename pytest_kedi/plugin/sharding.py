"""``--kedi-shard K/N``: run only the K-th of N shares of the Kedi items, for CI matrices.

The share is decided from the node ids alone (so every machine and every xdist worker agrees):
the selected ``@eval:`` suites are sorted by node id and dealt out round-robin, and so are the
test cases; shard K keeps every N-th item starting with the K-th. Python tests are not
sharded. Items outside the share are deselected, as ``-k`` would.
"""

from __future__ import annotations

import pytest

from pytest_kedi.plugin.items import KediCaseItem, KediEvalItem

__all__ = ["select_shard"]


def select_shard(config: pytest.Config, items: list[pytest.Item], shard: tuple[int, int]) -> None:
    """Deselect the Kedi items outside shard ``K/N`` (``shard`` is ``(K, N)``)."""
    number, total = shard
    dropped: set[str] = set()
    for kind in (KediEvalItem, KediCaseItem):
        ids = sorted(item.nodeid for item in items if isinstance(item, kind))
        dropped.update(nodeid for i, nodeid in enumerate(ids) if i % total != number - 1)
    if not dropped:
        return
    deselected = [item for item in items if item.nodeid in dropped]
    items[:] = [item for item in items if item.nodeid not in dropped]
    config.hook.pytest_deselected(items=deselected)
