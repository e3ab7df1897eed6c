"""Records on reports: what a Kedi item's report carries, and the one cleaning of its text.

An item's record travels on its report as ``to_json`` builtins (``report.kedi_suite`` or
``report.kedi_case``, and the default model's label as ``report.kedi_model``), so the xdist
controller reads exactly what a single process reads (`suite_of`, `case_of`, `model_of`,
each through ``from_json``). Every text of a Kedi item's report is cleaned once, in
`attach` (surrogates escaped, keys redacted): the one exit of an item's text to the
terminal, JUnit, xdist and the reports.
"""

from __future__ import annotations

import dataclasses

import pytest

from pytest_kedi.evals.safetext import clean_data, clean_text
from pytest_kedi.plugin.items import KediCaseItem, KediEvalItem
from pytest_kedi.plugin.outcomes import case_outcome
from pytest_kedi.plugin.records import CaseRecord, SuiteRecord

__all__ = ["attach", "case_of", "model_of", "suite_of"]

_SUITE = "kedi_suite"
_CASE = "kedi_case"
_MODEL = "kedi_model"


def _crash_message(report: pytest.TestReport) -> str | None:
    """``<ExceptionType>: <message>`` of an unexpected exception (its first line)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if message and str(message).strip():
        return str(message).strip().splitlines()[0]
    text = report.longreprtext.strip()
    return text.splitlines()[-1] if text else None


def _suite_record(
    item: KediEvalItem,
    when: str,
    report: pytest.TestReport,
    published: SuiteRecord | CaseRecord | None,
    threshold: float | None,
) -> SuiteRecord | None:
    if when == "call":
        if isinstance(published, SuiteRecord):
            return published
        if report.skipped:  # pytest.skip() while loading the file or the suite's data
            return SuiteRecord.placeholder(
                item.nodeid, item.suite, threshold=threshold, outcome="skipped", error=None
            )
        # runtest raised before publishing: not a Kedi failure (e.g. a hook raised)
        error = _crash_message(report) or "internal error"
        return SuiteRecord.placeholder(
            item.nodeid, item.suite, threshold=threshold, outcome="failed", error=error
        )
    if when == "setup" and not report.passed:
        outcome = "skipped" if report.skipped else "failed"
        setup_error = None if report.skipped else "setup failed"
        return SuiteRecord.placeholder(
            item.nodeid, item.suite, threshold=threshold, outcome=outcome, error=setup_error
        )
    return None


def _case_record(
    item: KediCaseItem,
    when: str,
    report: pytest.TestReport,
    published: SuiteRecord | CaseRecord | None,
) -> CaseRecord | None:
    if when == "call":
        if isinstance(published, CaseRecord):
            return published
        message = _crash_message(report) if report.failed else None
        return CaseRecord.of(
            item.nodeid, item.suite, item.case, outcome=case_outcome(report), message=message
        )
    if when == "setup" and not report.passed:
        outcome = "skipped" if report.skipped else "failed"
        message = None if report.skipped else "setup failed"
        return CaseRecord.of(item.nodeid, item.suite, item.case, outcome=outcome, message=message)
    return None


def attach(
    item: pytest.Item,
    when: str,
    report: pytest.TestReport,
    *,
    published: SuiteRecord | CaseRecord | None,
    model: str | None,
    threshold: float | None,
) -> None:
    """Put the record of ``item``'s phase ``when`` on ``report`` (``published``: what the
    item's run published, if anything; ``model``: its file's default model label), then
    clean every text of the report. Nothing happens for items that are not Kedi items."""
    if isinstance(item, KediEvalItem):
        suite = _suite_record(item, when, report, published, threshold)
        if suite is not None:
            setattr(report, _SUITE, suite.to_json())
    elif isinstance(item, KediCaseItem):
        case = _case_record(item, when, report, published)
        if case is not None:
            setattr(report, _CASE, case.to_json())
    else:
        return
    if when == "call" and model is not None:
        setattr(report, _MODEL, model)
    _clean_report(report)


def suite_of(report: pytest.TestReport) -> SuiteRecord | None:
    data = getattr(report, _SUITE, None)
    return SuiteRecord.from_json(data) if data is not None else None


def case_of(report: pytest.TestReport) -> CaseRecord | None:
    data = getattr(report, _CASE, None)
    return CaseRecord.from_json(data) if data is not None else None


def model_of(report: pytest.TestReport) -> str | None:
    label = getattr(report, _MODEL, None)
    return str(label) if label is not None else None


def _clean_report(report: pytest.TestReport) -> None:
    for name in (_SUITE, _CASE, _MODEL):
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
