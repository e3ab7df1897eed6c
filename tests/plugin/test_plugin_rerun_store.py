"""The rows kept for ``--kedi-rerun``: stored a batch at a time, read back as they were."""

from __future__ import annotations

import dataclasses
import json
import tracemalloc

import pytest
from test_plugin_report_stream import _odd_rows, _suite

from pytest_kedi.evals.results import RowResult
from pytest_kedi.plugin.reportwriter import rows_text
from pytest_kedi.plugin.rerun import previous_rows, store_rows


def _config(pytester: pytest.Pytester) -> pytest.Config:
    config = pytester.parseconfigure()
    assert config.cache is not None
    return config


def test_stored_rows_read_back_as_they_were(pytester: pytest.Pytester) -> None:
    """Rows of every shape (a lone surrogate, a line separator, repeats, usage, calls)."""
    odd, many = _odd_rows(), _suite("a.kedi::eval:first", 1, 1500)
    store_rows(_config(pytester), [odd, many])
    again = _config(pytester)  # a later run
    for record in (odd, many):
        stored = previous_rows(again, record.nodeid)
        assert stored is not None
        got = [row.to_json() for row in stored.values()]
        assert got == json.loads(rows_text(record.rows))
    assert previous_rows(again, "elsewhere.kedi::eval:x") is None


def test_storing_holds_no_copy_of_every_row(pytester: pytest.Pytester) -> None:
    """A 20,000-row suite's rows were held whole several times over (their text, pytest's
    indented JSON of it, its bytes): storing them now allocates a batch at a time."""
    record = _suite("a.kedi::eval:first", 1, 20_000)
    config = _config(pytester)
    size = len(rows_text(record.rows))
    tracemalloc.start()
    try:
        store_rows(config, [record])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size / 4  # (before: more than three times the size)
    stored = previous_rows(_config(pytester), record.nodeid)
    assert stored is not None and len(stored) == 20_000


def test_a_later_run_replaces_its_suites_and_keeps_the_others(pytester: pytest.Pytester) -> None:
    first, second = _suite("a.kedi::eval:first", 1, 3), _suite("b.kedi::eval:second", 1, 2)
    store_rows(_config(pytester), [first, second])
    rows = [dataclasses.replace(row, score=0.25) for row in first.rows[:1]]
    changed = dataclasses.replace(first, result=dataclasses.replace(first.result, rows=rows))
    store_rows(_config(pytester), [changed])
    later = _config(pytester)
    got = previous_rows(later, first.nodeid)
    assert got is not None and [row.score for row in got.values()] == [0.25]
    kept = previous_rows(later, second.nodeid)
    assert kept is not None and list(kept.values()) == [
        RowResult.from_json(row) for row in json.loads(rows_text(second.rows))
    ]
