"""The controller's `ReportListener`, and the line that says why eval suites were skipped.

``pytest_runtest_logreport`` gets no ``config``: the controller (or the only process)
registers a listener holding its `KediSession` for it, and for the ``kedi`` terminal
section, which must print before the plugin's own terminal lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_kedi.constants import EVAL_SKIP_REASON

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.plugin.session import KediSession

__all__ = ["SUB_RESULTS", "ReportListener", "explain_skips"]

#: pytest's sub-result report class (none before pytest 9)
SUB_RESULTS: tuple[type, ...] = tuple(
    cls for cls in (getattr(pytest, "SubtestReport", None),) if cls is not None
)


class ReportListener:
    """The controller's listener for the hooks that need its session but get no
    ``config`` (``pytest_runtest_logreport``, ``pytest_runtest_logstart``) or must print
    before the plugin's own terminal lines: each delegates to the session. Registered in
    `KediSession.start`."""

    def __init__(self, session: KediSession) -> None:
        self.session = session

    @pytest.hookimpl(trylast=True)  # after other plugins saw the records on the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not isinstance(report, SUB_RESULTS):  # a row's sub-result carries no record
            self.session.log_report(report)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        # a Kedi item started: an interrupt before it reports still writes the reports
        file_part = nodeid.partition("::")[0]
        if file_part.endswith(".kedi"):
            self.session.kedi_started = True

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.session.collect_failed(report)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        self.session.terminal_summary(terminalreporter)


def explain_skips(tr: pytest.TerminalReporter) -> None:
    """Say once why eval suites were skipped (``kedi_collect = true`` without
    ``--kedi-eval``): test explorers such as VS Code's show a skip without its reason,
    and their run output is where users look next."""
    skipped = tr.stats.get("skipped", [])
    count = sum(1 for report in skipped if _skipped_by_eval_gate(report))
    if count:
        suites = "suite" if count == 1 else "suites"
        tr.write_line(f"kedi: {count} @eval: {suites} skipped: {EVAL_SKIP_REASON}")


def _skipped_by_eval_gate(report: pytest.TestReport) -> bool:
    longrepr = report.longrepr  # (path, line, "Skipped: <reason>"); a list under xdist
    return (
        report.when == "setup"
        and isinstance(longrepr, tuple | list)
        and len(longrepr) == 3
        and str(longrepr[2]).endswith(EVAL_SKIP_REASON)
    )
