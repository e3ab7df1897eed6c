"""``--kedi-baseline`` and ``--kedi-max-drop`` in the plugin: load the baseline report
(a usage error when it cannot be read), judge a suite's drop, put the deltas on the run's
records and word the ``kedi`` section's comparison. The comparison itself is
`pytest_kedi.reports.compare`, shared with ``pytest-kedi compare``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from pytest_kedi.plugin.records import RunRecord, SuiteRecord
from pytest_kedi.reports.compare import compare_runs, compare_suites, comparison_lines, drop_reason
from pytest_kedi.reports.load import ReportReadError, read_run

__all__ = ["drop", "load", "summary_lines", "with_deltas"]


def load(path: Path) -> dict[str, SuiteRecord]:
    """The baseline's suites by node id; an unusable file is a one-line usage error."""
    try:
        run = read_run(path)
    except ReportReadError as exc:
        raise pytest.UsageError(f"kedi baseline: {exc}") from None
    return {suite.nodeid: suite for suite in run.suites}


def drop(
    baseline: Mapping[str, SuiteRecord] | None, record: SuiteRecord, max_drop: float | None
) -> str | None:
    """Why ``record`` fails the max drop against its baseline suite, if it does (None
    without a baseline or a max drop)."""
    if baseline is None or max_drop is None:
        return None
    return drop_reason(compare_suites(record.nodeid, baseline.get(record.nodeid), record), max_drop)


def with_deltas(run: RunRecord, baseline: Mapping[str, SuiteRecord]) -> RunRecord:
    """``run`` with each suite's ``baseline_score``/``delta`` and its rows' deltas."""
    deltas = compare_runs(baseline.values(), run.suites).deltas()
    suites = tuple(
        dataclasses.replace(suite, baseline=deltas.get(suite.nodeid)) for suite in run.suites
    )
    return dataclasses.replace(run, suites=suites)


def summary_lines(
    path: Path | str,
    baseline: Mapping[str, SuiteRecord],
    suites: Iterable[SuiteRecord],
    *,
    max_drop: float | None,
) -> list[str]:
    """The ``kedi`` section's comparison: ``Baseline PATH: ...`` and a line per suite
    (``path`` as the user should read it)."""
    head, *rest = comparison_lines(compare_runs(baseline.values(), suites), max_drop=max_drop)
    return [f"Baseline {path}: {head}", *rest]
