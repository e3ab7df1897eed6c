"""Controller-side reporting: entries travel on reports, are aggregated here and written once.

Items put builtin-only dicts on their reports (``report.kedi_suite``, ``report.kedi_case``,
``report.kedi_model``), so the xdist controller sees exactly what a single process sees.
`KediReporter` (registered on the controller only) collects them in
``pytest_runtest_logreport``, prints the terminal summary and writes the JSON report and
the rows JSONL atomically (temporary file, then ``os.replace``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.evals.results import write_text_atomic
from pytest_kedi.plugin.entries import REPORT_VERSION, case_entry, placeholder_suite_entry
from pytest_kedi.plugin.items import (
    CASE_ENTRY,
    MODEL_INFO,
    SUITE_ENTRY,
    KediCaseItem,
    KediEvalItem,
)
from pytest_kedi.plugin.options import KediSettings
from pytest_kedi.plugin.rows import row_label
from pytest_kedi.plugin.state import get_state

__all__ = ["KediReporter", "attach_entries", "build_report"]

_SUMMARY_FEEDBACK = 200


def _crash_message(report: pytest.TestReport) -> str | None:
    """``<ExceptionType>: <message>`` of an unexpected exception (its first line)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if message and str(message).strip():
        return str(message).strip().splitlines()[0]
    text = report.longreprtext.strip()
    return text.splitlines()[-1] if text else None


def _suite_entry_for(item: KediEvalItem, when: str, report: pytest.TestReport) -> Any:
    threshold = get_state(item.config).settings.threshold_for(item.nodeid)
    if when == "call":
        entry = item.stash.get(SUITE_ENTRY, None)
        if entry is not None:
            return entry
        # runtest raised before publishing: not a Kedi failure (e.g. a hook raised)
        error = _crash_message(report) or "internal error"
        return placeholder_suite_entry(
            item.nodeid, item.suite, threshold=threshold, outcome="failed", error=error
        )
    if when == "setup" and not report.passed:
        outcome = "skipped" if report.skipped else "failed"
        setup_error = None if report.skipped else "setup failed"
        return placeholder_suite_entry(
            item.nodeid, item.suite, threshold=threshold, outcome=outcome, error=setup_error
        )
    return None


def _case_entry_for(item: KediCaseItem, when: str, report: pytest.TestReport) -> Any:
    if when == "call":
        entry = item.stash.get(CASE_ENTRY, None)
        if entry is not None:
            return entry
        message = _crash_message(report) if report.failed else None
        return case_entry(
            item.nodeid, item.suite, item.case, outcome=report.outcome, message=message
        )
    if when == "setup" and not report.passed:
        outcome = "skipped" if report.skipped else "failed"
        message = None if report.skipped else "setup failed"
        return case_entry(item.nodeid, item.suite, item.case, outcome=outcome, message=message)
    return None


def attach_entries(item: pytest.Item, when: str, report: pytest.TestReport) -> None:
    """Copy an item's entry onto its report (called from ``pytest_runtest_makereport``).

    Only builtins are attached, so xdist carries them to the controller unchanged.
    """
    if isinstance(item, KediEvalItem):
        entry = _suite_entry_for(item, when, report)
        if entry is not None:
            report.kedi_suite = entry  # type: ignore[attr-defined]
    elif isinstance(item, KediCaseItem):
        entry = _case_entry_for(item, when, report)
        if entry is not None:
            report.kedi_case = entry  # type: ignore[attr-defined]
    else:
        return
    model_info = item.stash.get(MODEL_INFO, None)
    if when == "call" and model_info is not None:
        report.kedi_model = dict(model_info)  # type: ignore[attr-defined]


def build_report(
    suites: Mapping[str, dict[str, Any]], tests: Mapping[str, dict[str, Any]]
) -> dict[str, Any]:
    """The JSON report document (schema version 1), entries in node-id order."""
    return {
        "version": REPORT_VERSION,
        "suites": [suites[nodeid] for nodeid in sorted(suites)],
        "tests": [tests[nodeid] for nodeid in sorted(tests)],
    }


def _row_records(suites: Mapping[str, dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for nodeid in sorted(suites):
        suite = suites[nodeid]
        for row in suite["rows"]:
            yield {
                "nodeid": nodeid,
                "procedure": suite["procedure"],
                "metric": suite["metric"],
                "split": suite["split"],
                **row,
            }


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _verdict(suite: Mapping[str, Any]) -> str:
    outcome = suite["outcome"]
    word = "FAILED" if outcome == "failed" else outcome
    if suite["threshold"] is not None and outcome != "skipped":
        return f"[{word}, min score {suite['threshold']:.4f}]"
    return f"[{word}]"


def suite_line(suite: Mapping[str, Any], *, feedback_limit: int | None) -> str:
    """Kedi's line ``- procedure::metric: 0.7500 | feedback`` plus threshold and verdict."""
    from pytest_kedi.evals import SuiteResult, format_suite_line

    if suite["outcome"] == "skipped" and suite["error"] is None:
        head = (
            f"- {suite['procedure']}::{suite['metric']}"
            if suite["metric"]
            else f"- {suite['procedure']}"
        )
        return f"{head}: not run {_verdict(suite)}"
    error = suite["error"]
    if error and "\n" in error.strip():  # a rendered stack trace: its last line says what failed
        error = error.strip().splitlines()[-1].strip()
    feedback = suite["feedback"]
    if feedback_limit is not None:
        feedback = _clip(feedback, feedback_limit) if feedback else feedback
        error = _clip(error, feedback_limit) if error else error
    result = SuiteResult(
        suite=suite["procedure"],
        metric=suite["metric"],
        dataset=suite["dataset"],
        split=suite["split"],
        score=suite["score"],
        rows=[],
        rows_total=suite["rows_total"],
        rows_errored=suite["rows_errored"],
        errors_by_class=dict(suite["errors_by_class"]),
        feedback=feedback,
        error=error,
        duration_s=suite["duration_s"],
    )
    return f"{format_suite_line(result)}  {_verdict(suite)}"


def _source_order(entry: Mapping[str, Any]) -> tuple[str, int, str]:
    return (entry["path"], entry["line"], entry["nodeid"])


def case_line(entry: Mapping[str, Any], *, feedback_limit: int | None) -> str:
    """Kedi's ``--test`` line: ``- suite::case: OK`` or ``- suite::case: FAIL | <message>``."""
    status = {"passed": "OK", "skipped": "SKIPPED"}.get(entry["outcome"], "FAIL")
    line = f"- {entry['procedure']}::{entry['case']}: {status}"
    message = entry["message"]
    if message:
        first = message.strip().splitlines()[0]
        line += f" | {_clip(first, feedback_limit) if feedback_limit else first}"
    return line


class KediReporter:
    """Aggregates Kedi entries on the controller (or the only process) and reports them."""

    def __init__(self, config: pytest.Config, settings: KediSettings) -> None:
        self.config = config
        self.settings = settings
        self.suites: dict[str, dict[str, Any]] = {}
        self.tests: dict[str, dict[str, Any]] = {}
        self.models: dict[str, bool] = {}
        self.xfailed: set[str] = set()
        self.written: list[Path] = []
        self.write_errors: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if isinstance(report, getattr(pytest, "SubtestReport", ())):
            return
        suite = getattr(report, "kedi_suite", None)
        if suite is not None:
            self.suites[report.nodeid] = suite
            if hasattr(report, "wasxfail"):
                self.xfailed.add(report.nodeid)
        case = getattr(report, "kedi_case", None)
        if case is not None:
            self.tests[report.nodeid] = case
        model = getattr(report, "kedi_model", None)
        if model is not None:
            self.models[str(model["label"])] = bool(model["synthetic"])

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        targets: list[tuple[Path, str]] = []
        if self.settings.report_path is not None:
            document = build_report(self.suites, self.tests)
            text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
            targets.append((self.settings.report_path, text))
        if self.settings.rows_jsonl_path is not None:
            lines = (
                json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
                for record in _row_records(self.suites)
            )
            targets.append((self.settings.rows_jsonl_path, "".join(lines)))
        for path, text in targets:
            try:
                write_text_atomic(path, text)
                self.written.append(path)
            except OSError as exc:
                self.write_errors.append(f"cannot write {path}: {exc}")
        if self.write_errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _model_line(self) -> str:
        if not self.models:
            name = self.settings.model or "test"
            models = {name: name == "test"}
        else:
            models = self.models
        labels = [
            f"{label} (offline default: synthetic output, not a real model)" if synthetic else label
            for label, synthetic in sorted(models.items())
        ]
        return ("model: " if len(labels) == 1 else "models: ") + "; ".join(labels)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not (self.suites or self.tests or self.write_errors):
            return
        tr = terminalreporter
        if tr.no_summary:  # pytest's --no-summary: hide the section, keep write errors
            for error in self.write_errors:
                tr.write_line(f"kedi: {error}", red=True)
            return
        verbose = self.config.get_verbosity() > 0
        tr.write_sep("=", "kedi")
        tr.write_line(self._model_line())
        limit = None if verbose else _SUMMARY_FEEDBACK
        if self.tests:
            tr.write_line("Tests:")
            for entry in sorted(self.tests.values(), key=_source_order):
                tr.write_line(case_line(entry, feedback_limit=limit))
        if self.suites:
            tr.write_line("Evals:")
            for nodeid in sorted(self.suites):
                suite = self.suites[nodeid]
                line = suite_line(suite, feedback_limit=limit)
                tr.write_line(f"{line} (xfail)" if nodeid in self.xfailed else line)
                if verbose:
                    tr.write_line(f"    {nodeid}")
                    for row in suite["rows"]:
                        tr.write_line(f"    {row_label(row, limit=_SUMMARY_FEEDBACK)}")
        for path in self.written:
            tr.write_line(f"kedi report written: {path}")
        for error in self.write_errors:
            tr.write_line(f"kedi: {error}", red=True)
