"""``--kedi-rerun``: every run stores each scored suite's rows in pytest's cache; a rerun
runs again only the rows that broke last time and carries the others over.

The cache (``config.cache``, the ``.pytest_cache`` directory) holds one entry per suite,
keyed by a hash of its node id (``kedi/rows/<hash>``), holding the node id and the rows as
the JSON report has them, encoded once more as one compact JSON string (``rows_json``: pytest
indents what it stores, with Python's slow pure-Python encoder, and this entry is written
for every suite of every run). It is written by the xdist controller (or the only process) from
the records it collected, and read by whichever process runs the suite. A row is carried
over only when the previous run had a row at the same index with the same input and
expected reprs (a changed dataset reruns the changed rows), and that row did not break:

* ``errors``: it did not error;
* ``failures``: it did not error and scored at least ``--kedi-row-min-score``.

Without a cache (``-p no:cacheprovider``) or without a previous run of the suite, every
row runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from pytest_kedi.evals import RowResult
from pytest_kedi.evals.runner import CarryOver
from pytest_kedi.plugin.records import SuiteRecord

__all__ = ["cache_key", "carry_over", "previous_rows", "store_rows"]

_PREFIX = "kedi/rows/"


def cache_key(nodeid: str) -> str:
    """The cache entry of a suite (node ids hold characters that are not file names)."""
    return _PREFIX + hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:24]


def _cache(config: pytest.Config) -> Any:
    return getattr(config, "cache", None)


def previous_rows(config: pytest.Config, nodeid: str) -> dict[int, RowResult] | None:
    """The rows of the suite's previous run, by index (``None``: no usable previous run)."""
    cache = _cache(config)
    if cache is None:
        return None
    entry = cache.get(cache_key(nodeid), None)
    if not isinstance(entry, Mapping) or entry.get("nodeid") != nodeid:
        return None
    try:
        stored = entry["rows_json"] if "rows_json" in entry else entry["rows"]
        data = json.loads(stored) if isinstance(stored, str) else stored
        rows = [RowResult.from_json(row) for row in data]
    except (KeyError, TypeError, ValueError):  # damaged, or of another version: run every row
        return None
    return {row.index: row for row in rows}


def carry_over(previous: Mapping[int, RowResult], mode: str, row_min_score: float) -> CarryOver:
    """`run_suite`'s ``carry``: the previous result of a row that did not break."""

    def carry(index: int, shown: str | None, expected: str | None) -> RowResult | None:
        row = previous.get(index)
        if row is None or (row.input, row.expected) != (shown, expected) or row.errored:
            return None
        if mode == "failures" and row.score < row_min_score:
            return None
        return row

    return carry


def store_rows(config: pytest.Config, records: Iterable[SuiteRecord]) -> None:
    """Remember the rows of every scored suite for the next ``--kedi-rerun``."""
    cache = _cache(config)
    if cache is None:
        return
    for record in records:
        if record.result.completed and record.outcome != "skipped":
            rows = json.dumps([row.to_json() for row in record.rows], ensure_ascii=False)
            cache.set(cache_key(record.nodeid), {"nodeid": record.nodeid, "rows_json": rows})
