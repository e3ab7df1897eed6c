"""Controller-side reporting: entries travel on reports, are aggregated here and written once.

Items put builtin-only dicts on their reports (``report.kedi_suite``, ``report.kedi_case``,
``report.kedi_model``), so the xdist controller sees exactly what a single process sees.
`KediReporter` (registered on the controller only) collects them in
``pytest_runtest_logreport``, prints the terminal summary and writes the JSON report and
the rows JSONL through `pytest_kedi.evals.files.write_text_atomic`. Every text of a Kedi
item's report is cleaned once, in `attach_entries` (surrogates escaped, keys redacted).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.evals.files import write_text_atomic
from pytest_kedi.evals.safetext import clean_data, clean_text
from pytest_kedi.plugin.crashes import crash_entry
from pytest_kedi.plugin.entries import REPORT_VERSION, case_entry, placeholder_suite_entry
from pytest_kedi.plugin.items import (
    CASE_ENTRY,
    MODEL_INFO,
    SUITE_ENTRY,
    KediCaseItem,
    KediEvalItem,
)
from pytest_kedi.plugin.options import KediSettings
from pytest_kedi.plugin.outcomes import case_outcome
from pytest_kedi.plugin.rows import row_label
from pytest_kedi.plugin.state import MODEL_CALLS_KEY, TEST_MODEL, get_state
from pytest_kedi.plugin.summary import case_line, models_line, source_order, suite_line
from pytest_kedi.plugin.views import write_views

__all__ = ["KediReporter", "RunStatus", "attach_entries", "build_report"]

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
        if report.skipped:  # pytest.skip() while loading the file or the suite's data
            return placeholder_suite_entry(
                item.nodeid, item.suite, threshold=threshold, outcome="skipped", error=None
            )
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
            item.nodeid, item.suite, item.case, outcome=case_outcome(report), message=message
        )
    if when == "setup" and not report.passed:
        outcome = "skipped" if report.skipped else "failed"
        message = None if report.skipped else "setup failed"
        return case_entry(item.nodeid, item.suite, item.case, outcome=outcome, message=message)
    return None


def attach_entries(item: pytest.Item, when: str, report: pytest.TestReport) -> None:
    """Copy an item's entry onto its report (called from ``pytest_runtest_makereport``).

    Only builtins are attached, so xdist carries them to the controller unchanged. Every
    text on a Kedi item's report (entries, failure text, properties, sections) passes
    `clean_data` here: the one exit of an item's text to the terminal, JUnit, xdist and
    the reports.
    """
    _attach(item, when, report)
    if isinstance(item, (KediEvalItem, KediCaseItem)):
        _clean_report(report)


def _clean_report(report: pytest.TestReport) -> None:
    for name in ("kedi_suite", "kedi_case", "kedi_model"):
        value = getattr(report, name, None)
        if value is not None:
            setattr(report, name, clean_data(value))
    if isinstance(report.longrepr, str):
        report.longrepr = clean_text(report.longrepr)
    elif report.longrepr is not None:
        _clean_repr(report.longrepr, set())
    report.user_properties = clean_data(list(report.user_properties))
    report.sections = clean_data(list(report.sections))


def _clean_repr(node: object, seen: set[int]) -> object:
    """Every string of a failure representation (pytest's ``TerminalRepr`` dataclasses:
    traceback entries, crash location, chained exceptions, ...) cleaned; lists and objects
    are cleaned in place, strings and tuples are returned anew."""
    if isinstance(node, str):
        return clean_text(node)
    if isinstance(node, tuple):
        return tuple(_clean_repr(value, seen) for value in node)
    if id(node) in seen or isinstance(node, (int, float, bool)) or node is None:
        return node
    seen.add(id(node))
    if isinstance(node, list):
        node[:] = [_clean_repr(value, seen) for value in node]
    elif isinstance(node, dict):
        for key in list(node):
            node[key] = _clean_repr(node[key], seen)
    elif type(node).__module__.startswith(("_pytest.", "pytest_kedi.")):
        names = (
            [f.name for f in dataclasses.fields(node)]
            if dataclasses.is_dataclass(node)
            else [*getattr(node, "__dict__", {}), *getattr(type(node), "__slots__", ())]
        )
        for name in names:
            value = getattr(node, name, None)
            cleaned = _clean_repr(value, seen)
            if cleaned is not value:
                object.__setattr__(node, name, cleaned)
    return node


def _attach(item: pytest.Item, when: str, report: pytest.TestReport) -> None:
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


@dataclasses.dataclass(frozen=True, slots=True)
class RunStatus:
    """How the run ended, for the JSON report document."""

    exitstatus: int
    interrupted: bool  # ended by Ctrl-C or SIGTERM
    model_calls: tuple[tuple[str, int], ...] = ()  # (resolved model name, calls), by name


def build_report(
    suites: Mapping[str, dict[str, Any]],
    tests: Mapping[str, dict[str, Any]],
    status: RunStatus,
) -> dict[str, Any]:
    """The JSON report document (schema version 2), entries in source order."""
    return {
        "version": REPORT_VERSION,
        "interrupted": status.interrupted,
        "exitstatus": status.exitstatus,
        "model_calls": dict(status.model_calls),
        "suites": source_order(suites.values()),
        "tests": source_order(tests.values()),
    }


def _row_records(suites: Mapping[str, dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for suite in source_order(suites.values()):
        for row in suite["rows"]:
            yield {
                "nodeid": suite["nodeid"],
                "procedure": suite["procedure"],
                "metric": suite["metric"],
                "split": suite["split"],
                **row,
            }


class KediReporter:
    """Aggregates Kedi entries on the controller (or the only process) and reports them.

    Reports are written only when at least one Kedi item reported (ran, failed, was
    skipped or crashed): a run that executed nothing (``--collect-only``, every Kedi
    item deselected) leaves existing report files untouched.
    """

    def __init__(self, config: pytest.Config, settings: KediSettings) -> None:
        self.config = config
        self.settings = settings
        self.suites: dict[str, dict[str, Any]] = {}
        self.tests: dict[str, dict[str, Any]] = {}
        self.default_models: set[str] = set()
        self.model_calls: Counter[str] = Counter()
        self.xfailed: set[str] = set()
        self.written: list[Path] = []
        self.untouched: list[Path] = []
        self.write_errors: list[str] = []
        self.started = datetime.now(UTC)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if isinstance(report, getattr(pytest, "SubtestReport", ())):
            return
        suite = getattr(report, "kedi_suite", None)
        case = getattr(report, "kedi_case", None)
        if suite is None and case is None and report.failed and report.when == "???":
            self._crashed(report)  # an xdist worker died while running the item
        if suite is not None:
            self.suites[report.nodeid] = suite
            if hasattr(report, "wasxfail"):
                self.xfailed.add(report.nodeid)
        if case is not None:
            self.tests[report.nodeid] = case
        model = getattr(report, "kedi_model", None)
        if model is not None:
            self.default_models.add(str(model["label"]))

    def _crashed(self, report: pytest.TestReport) -> None:
        message = clean_text(" ".join(str(report.longrepr).split()))
        crashed = crash_entry(
            self.config.rootpath, report.nodeid, message, self.settings.threshold_for
        )
        if crashed is None:
            return
        target = self.suites if crashed.kind == "suite" else self.tests
        target.setdefault(report.nodeid, clean_data(crashed.entry))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist: add a finished worker's model call counts."""
        output = getattr(node, "workeroutput", None) or {}
        self.model_calls.update(output.get(MODEL_CALLS_KEY, {}))

    def _paths(self) -> list[Path]:
        return [p for p in (self.settings.report_path, self.settings.rows_jsonl_path) if p]

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.model_calls.update(get_state(self.config).model_calls())  # this process's own
        if not (self.suites or self.tests):
            self.untouched = self._paths()
            return
        targets: list[tuple[Path, str]] = []
        status = RunStatus(
            exitstatus=int(exitstatus),
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
            model_calls=tuple(sorted(self.model_calls.items())),
        )
        document = build_report(self.suites, self.tests, status)
        if self.settings.report_path is not None:
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
                self.write_errors.append(clean_text(f"cannot write {path}: {exc}"))
        views = write_views(
            self.settings,
            document,
            xfailed=self.xfailed,
            exitstatus=int(session.exitstatus),
            started=self.started,
        )
        self.written += views.written
        self.write_errors += views.errors
        if self.write_errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not (self.suites or self.tests or self.write_errors or self.untouched):
            return
        tr = terminalreporter
        if tr.no_summary:  # pytest's --no-summary: hide the section, keep write errors
            for error in self.write_errors:
                tr.write_line(f"kedi: {error}", red=True)
            return
        verbose = self.config.get_verbosity() > 0
        tr.write_sep("=", "kedi")
        if self.suites or self.tests:
            defaults = self.default_models or {self.settings.model or TEST_MODEL}
            tr.write_line(models_line(self.model_calls, defaults))
        limit = None if verbose else _SUMMARY_FEEDBACK
        if self.tests:
            tr.write_line("Tests:")
            for entry in source_order(self.tests.values()):
                tr.write_line(case_line(entry, feedback_limit=limit))
        if self.suites:
            tr.write_line("Evals:")
            for suite in source_order(self.suites.values()):
                line = suite_line(suite, feedback_limit=limit)
                nodeid = suite["nodeid"]
                tr.write_line(f"{line} (xfail)" if nodeid in self.xfailed else line)
                if verbose:
                    tr.write_line(f"    {nodeid}")
                    for row in suite["rows"]:
                        tr.write_line(f"    {row_label(row, limit=None)}")  # -v: unclipped
        for path in self.written:
            tr.write_line(f"kedi report written: {path}")
        for path in self.untouched:
            tr.write_line(f"kedi report not written (no Kedi item ran): {path}")
        for error in self.write_errors:
            tr.write_line(f"kedi: {error}", red=True)
