"""``--kedi-rerun``: every run stores each scored suite's rows in pytest's cache; a rerun
runs again only the rows that broke last time and carries the others over.

The cache (``config.cache``, the ``.pytest_cache`` directory) holds one entry for every
suite (``kedi/rerun-rows``): a mapping of node id to the suite's rows as the JSON report
has them, encoded as one compact JSON string per suite (pytest indents what it stores,
with Python's slow pure-Python encoder; a string is encoded at once, and a process reads
only the rows of the suites it runs). One entry, read once and written once per run,
costs a few milliseconds where an entry per suite cost a file write each (a third of a
millisecond per suite in a run of 1,000 files). A run keeps the rows of the suites it
did not run. The entry is written by the xdist controller (or the only process) from the
records it collected, and read by whichever process runs the suite; it is read again and
written under a lock (``.pytest_cache/d/kedi-rerun/lock``), so rows another session
stored meanwhile are kept. Earlier versions kept an entry per suite
(``kedi/rows/<hash>``): such an entry is still read for a suite the shared entry does
not hold. A row is carried over only when the previous run had a
row at the same index with the same input and expected reprs (a changed dataset reruns
the changed rows; a row whose reprs were cut to 200 characters, or failed, always runs, as
they cannot tell), and that row did not break:

* ``errors``: it did not error;
* ``failures``: it did not error and scored at least ``--kedi-row-min-score``.

Without a cache (``-p no:cacheprovider``) or without a previous run of the suite, every
row runs.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_kedi.plugin.cachefiles import exclusive_lock
from pytest_kedi.plugin.records import SuiteRecord
from pytest_kedi.plugin.reportwriter import rows_text

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult
    from pytest_kedi.evals.runner import CarryOver

__all__ = ["cache_key", "carry_over", "previous_rows", "store_rows"]

_PREFIX = "kedi/rows/"  # the entries of earlier versions, one per suite
_KEY = "kedi/rerun-rows"
_STORED = pytest.StashKey[dict[str, str]]()


def cache_key(nodeid: str) -> str:
    """The entry an earlier version kept for a suite (node ids hold characters that are
    not file names)."""
    return _PREFIX + hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:24]


def _cache(config: pytest.Config) -> Any:
    return getattr(config, "cache", None)


def _stored(config: pytest.Config, cache: Any) -> dict[str, str]:
    """The shared entry's rows (JSON text) by node id, read once per process."""
    stored = config.stash.get(_STORED, None)
    if stored is None:
        stored = config.stash[_STORED] = _read_stored(cache)
    return stored


def _read_stored(cache: Any) -> dict[str, str]:
    """The shared entry's rows (JSON text) by node id, as the entry is now; anything else
    in the entry is ignored."""
    entry = cache.get(_KEY, None)
    suites = entry.get("suites") if isinstance(entry, Mapping) else None
    if not isinstance(suites, Mapping):
        return {}
    return {k: v for k, v in suites.items() if isinstance(k, str) and isinstance(v, str)}


def _earlier_entry(cache: Any, nodeid: str) -> object:
    """The rows an earlier version stored for the suite (a list, or one JSON string)."""
    entry = cache.get(cache_key(nodeid), None)
    if not isinstance(entry, Mapping) or entry.get("nodeid") != nodeid:
        return None
    return entry.get("rows_json", entry.get("rows"))


def previous_rows(config: pytest.Config, nodeid: str) -> dict[int, RowResult] | None:
    """The rows of the suite's previous run, by index (``None``: no usable previous run)."""
    cache = _cache(config)
    if cache is None:
        return None
    stored: object = _stored(config, cache).get(nodeid)
    if stored is None:
        stored = _earlier_entry(cache, nodeid)
        if stored is None:
            return None
    try:
        data = json.loads(stored) if isinstance(stored, str) else stored
        from pytest_kedi.evals.results import RowResult

        rows = [RowResult.from_json(row) for row in data]  # type: ignore[union-attr]
    # damaged, or of another version (a text field that is no text: AttributeError; an
    # infinite index: OverflowError): run every row
    except (AttributeError, KeyError, OverflowError, TypeError, ValueError):
        return None
    if not all(_usable(row) for row in rows):
        return None
    return {row.index: row for row in rows}


def _usable(row: RowResult) -> bool:
    """A stored row that a run could have made: finite scores (a metric's NaN or infinite
    score is a row error) and an error class that is text or None."""
    scores = (row.score, *row.scores)
    return all(math.isfinite(score) for score in scores) and (
        row.error_class is None or isinstance(row.error_class, str)
    )


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
    """Remember the rows of every scored suite for the next ``--kedi-rerun`` (with those
    stored before for the suites that did not run)."""
    cache = _cache(config)
    if cache is None:
        return
    ran = {
        record.nodeid: _rows_json(record.rows)
        for record in records
        if record.result.completed and record.outcome != "skipped"
    }
    if not ran:
        return
    try:
        lock = Path(cache.mkdir("kedi-rerun"), "lock")
    except OSError:  # a read-only cache directory: pytest's cache writes nothing either
        return
    # Read again and written under the lock: another session on the same project may have
    # stored the rows of other suites since this run read the entry.
    with exclusive_lock(lock):
        stored = config.stash[_STORED] = {**_read_stored(cache), **ran}
        cache.set(_KEY, {"suites": stored})


def _rows_json(rows: Sequence[RowResult]) -> str:
    """``json.dumps([row.to_json() for row in rows], ensure_ascii=False)``: built as the
    reports build their rows (a third of the time), unless a number is not finite."""
    try:
        return rows_text(rows)
    except ValueError:  # NaN or infinity: written as Python's encoder writes them
        return json.dumps([row.to_json() for row in rows], ensure_ascii=False)
