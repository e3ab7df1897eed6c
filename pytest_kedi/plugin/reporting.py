"""Controller-side output from records: the report files and the ``kedi`` terminal section.

`write_reports` writes the JSON report (`RunRecord.to_json`) and the rows JSONL
(`SuiteRecord.row_lines`) in one streaming pass (`reportwriter`), then the views;
`write_summary` prints the ``kedi`` section. Neither keeps state: `KediSession` owns the
records and calls them at the end of the session.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pytest_kedi.plugin.outputs import Output
from pytest_kedi.plugin.records import CaseRecord, RunRecord, SuiteRecord, source_order
from pytest_kedi.plugin.reportwriter import stream_reports
from pytest_kedi.plugin.rows import row_line
from pytest_kedi.plugin.settings import KediSettings
from pytest_kedi.plugin.sparkline import histogram_line
from pytest_kedi.plugin.summary import (
    case_line,
    flaky_line,
    models_line,
    rerun_lines,
    suite_line,
    usage_line,
    xfail_note,
)
from pytest_kedi.plugin.views import write_views
from pytest_kedi.text import printable

__all__ = ["Output", "Summary", "write_reports", "write_summary"]

_SUMMARY_FEEDBACK = 200


def write_reports(
    settings: KediSettings,
    run: RunRecord,
    *,
    xfailed: Collection[str],
    exitstatus: int,
    started: datetime,
) -> Output:
    """Write the JSON report, the rows JSONL and the views that ``settings`` ask for."""
    streamed = stream_reports(run, settings.report_path, settings.rows_jsonl_path)
    views = write_views(settings, run, xfailed=xfailed, exitstatus=exitstatus, started=started)
    written, errors = (*streamed.written, *views.written), (*streamed.errors, *views.errors)
    return Output(written, errors, tuple(views.notes))


@dataclass(frozen=True, slots=True)
class Summary:
    """Everything the ``kedi`` terminal section shows."""

    suites: Sequence[SuiteRecord]
    tests: Sequence[CaseRecord]
    xfailed: Collection[str]  # node ids of suites and cases that xfailed
    model_calls: Mapping[str, int]
    default_models: Collection[str]  # labels of the default models of the files that ran
    written: Sequence[Path]
    untouched: Sequence[Path]  # report paths left alone because no Kedi item ran
    errors: Sequence[str]
    baseline: Sequence[str] = ()  # the comparison with --kedi-baseline, when given
    notes: Sequence[str] = ()  # what could not be written but fails nothing (job summary)
    dropped: Collection[str] = ()  # node ids of suites --kedi-max-drop failed
    max_drop: float | None = None


def _width(tr: Any) -> int:
    """The terminal's width (pytest's terminal writer)."""
    return int(tr.config.get_terminal_writer().fullwidth)


class _Printable:
    """The terminal reporter, its lines shown with control characters escaped
    (`printable`): feedback and model answers reach the ``kedi`` section."""

    def __init__(self, tr: Any) -> None:
        self._tr = tr

    def write_line(self, line: str, **markup: bool) -> None:
        self._tr.write_line(printable(line), **markup)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tr, name)


def write_summary(tr: Any, summary: Summary, *, verbose: bool) -> None:
    """Print the ``kedi`` section (only write errors under pytest's ``--no-summary``)."""
    if not (
        summary.suites
        or summary.tests
        or summary.errors
        or summary.notes
        or summary.untouched
        or summary.written
    ):
        return
    tr = _Printable(tr)
    if tr.no_summary:
        for error in summary.errors:
            tr.write_line(f"kedi: {error}", red=True)
        return
    tr.write_sep("=", "kedi")
    if summary.suites or summary.tests:
        tr.write_line(models_line(summary.model_calls, summary.default_models))
        usage = usage_line(summary.suites)
        if usage:
            tr.write_line(usage)
    limit = None if verbose else _SUMMARY_FEEDBACK
    if summary.tests:
        tr.write_line("Tests:")
        for case in source_order(summary.tests):
            line = case_line(case, feedback_limit=limit)  # a marker's xfail, as for suites
            expected = case.outcome == "failed" and case.nodeid in summary.xfailed
            tr.write_line(line + xfail_note(case, limit) if expected else line)
    if summary.suites:
        tr.write_line("Evals:")
        for suite in source_order(summary.suites):
            dropped = summary.max_drop if suite.nodeid in summary.dropped else None
            line = suite_line(suite, feedback_limit=limit, dropped=dropped)
            tr.write_line(
                line + xfail_note(suite, limit) if suite.nodeid in summary.xfailed else line
            )
            flaky = flaky_line(suite)
            if flaky is not None:
                tr.write_line(f"    {flaky}")
            if verbose:
                tr.write_line(f"    {suite.nodeid}")
                scores = histogram_line([row.score for row in suite.rows], _width(tr))
                if scores is not None:
                    tr.write_line(scores)
                for row in suite.rows:
                    tr.write_line(f"    {row_line(row, limit=None)}")  # -v: unclipped
    for line in rerun_lines(summary.suites):
        tr.write_line(line)
    for line in summary.baseline:
        tr.write_line(line)
    for path in summary.written:
        tr.write_line(f"kedi report written: {path}")
    for path in summary.untouched:
        tr.write_line(f"kedi report not written (no Kedi item ran): {path}")
    for error in summary.errors:
        tr.write_line(f"kedi: {error}", red=True)
    for note in summary.notes:
        tr.write_line(f"kedi: {note}")
