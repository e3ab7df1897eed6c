"""``--kedi-rerun``: every run stores each scored suite's rows in pytest's cache; a rerun
runs again only the rows that broke last time and carries the others over.

The rows are kept in one file in pytest's cache directory
(``.pytest_cache/d/kedi-rerun/rows``): a line for every suite, its node id as a JSON
string, a tab, and the suite's rows as the JSON report has them (one compact JSON array).
The file is written a suite's rows at a time, in batches, and the lines of the suites a
run did not run are copied from the file as it was, line by line, so storing the rows
holds no more than a batch of them at once (pytest's own entries are indented JSON,
encoded whole: for a 100,000-row suite, a copy of every row's text four times over). A
process parses only the rows of the suites it runs. The file is written by the xdist
controller (or the only process) from the records it collected, and read by whichever
process runs the suite; it is read again and written under a lock
(``.pytest_cache/d/kedi-rerun/lock``), so rows another session stored meanwhile are kept.
Earlier versions kept the rows in pytest's own entries: one for every suite
(``kedi/rerun-rows``), folded into the file the first time a run stores its rows, and
before that one per suite (``kedi/rows/<hash>``), still read for a suite the others do
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
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_kedi.atomicwrite import AtomicWriter
from pytest_kedi.plugin.cachefiles import LOG, exclusive_lock
from pytest_kedi.plugin.records import SuiteRecord
from pytest_kedi.plugin.reportwriter import rows_pieces

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult
    from pytest_kedi.evals.runner import CarryOver

__all__ = ["cache_key", "carry_over", "previous_rows", "store_rows"]

_PREFIX = "kedi/rows/"  # the entries of earlier versions, one per suite
_KEY = "kedi/rerun-rows"  # an earlier version's entry for every suite
_FILE = "rows"
_STORED = pytest.StashKey[dict[str, str]]()


def cache_key(nodeid: str) -> str:
    """The entry an earlier version kept for a suite (node ids hold characters that are
    not file names)."""
    return _PREFIX + hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:24]


def _cache(config: pytest.Config) -> Any:
    return getattr(config, "cache", None)


def _folder(cache: Any) -> Path | None:
    """``.pytest_cache/d/kedi-rerun`` (None: the cache directory cannot be written)."""
    try:
        return Path(cache.mkdir("kedi-rerun"))
    except OSError:  # a read-only cache directory: pytest's cache writes nothing either
        return None


def _stored(config: pytest.Config, cache: Any) -> dict[str, str]:
    """The stored rows (JSON text) by node id, read once per process."""
    stored = config.stash.get(_STORED, None)
    if stored is None:
        stored = _earlier_suites(cache)
        folder = _folder(cache)
        if folder is not None:
            stored.update(_read_lines(folder / _FILE))
        config.stash[_STORED] = stored
    return stored


def _read_lines(path: Path) -> Iterator[tuple[str, str]]:
    """The file's suites: node id and rows (JSON text); a damaged line is left out."""
    try:
        with open(path, encoding="utf-8", newline="\n") as lines:
            yield from _parsed(lines)
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as exc:
        LOG.debug("pytest-kedi: cannot read %s: %s", path, exc)


def _parsed(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    for line in lines:
        nodeid, tab, rows = line.partition("\t")
        if tab and rows.endswith("\n"):
            try:
                name = json.loads(nodeid)
            except ValueError:
                continue
            if isinstance(name, str):
                yield name, rows[:-1]


def _earlier_suites(cache: Any) -> dict[str, str]:
    """The rows an earlier version kept in one pytest entry for every suite."""
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
        record.nodeid: record
        for record in records
        if record.result.completed and record.outcome != "skipped"
    }
    if not ran:
        return
    folder = _folder(cache)
    if folder is None:
        return
    if _STORED in config.stash:  # (what this run read is not needed any more)
        del config.stash[_STORED]
    # Read again and written under the lock: another session on the same project may have
    # stored the rows of other suites since this run read them.
    with exclusive_lock(folder / "lock"):
        try:
            _write(folder / _FILE, ran, _earlier_suites(cache))
        except OSError as exc:  # a full cache directory: the next rerun runs every row
            LOG.debug("pytest-kedi: cannot store rows in %s: %s", folder, exc)
            return
        if cache.get(_KEY, None) is not None:  # folded into the file: not read again
            cache.set(_KEY, None)


def _write(path: Path, ran: Mapping[str, SuiteRecord], earlier: dict[str, str]) -> None:
    """The file of ``path`` with the rows of the suites that ran, then the lines of the
    others as they were (and the suites ``earlier`` holds that the file does not)."""
    writer = AtomicWriter(path)
    try:
        write = writer.write
        for nodeid, record in ran.items():
            write(json.dumps(nodeid) + "\t")
            for piece in rows_pieces(record.rows):
                write(piece)
            write("\n")
        try:
            with open(path, encoding="utf-8", newline="\n") as lines:
                for line in lines:
                    kept = _nodeid(line)
                    if kept is not None and kept not in ran:
                        earlier.pop(kept, None)
                        write(line)
        except FileNotFoundError:
            pass
        except UnicodeDecodeError:  # a damaged file: its lines are dropped
            pass
        for nodeid, rows in earlier.items():
            if nodeid not in ran:
                write(f"{json.dumps(nodeid)}\t{rows}\n")
    except BaseException:
        writer.abort()
        raise
    writer.commit()


def _nodeid(line: str) -> str | None:
    """The node id of a well-formed line of the file (None for a damaged line)."""
    for nodeid, _ in _parsed((line,)):
        return nodeid
    return None
