"""Records on reports: what a Kedi item's report carries, and the one cleaning of its text.

On an xdist worker, an item's record travels on its report as the JSON text of its
``to_json`` builtins (``report.kedi_suite`` or ``report.kedi_case``, and the default model's
label as ``report.kedi_model``): pytest-xdist's serializer (execnet) writes nested builtins
as one small ``bytes`` object per value, so a suite of 50,000 rows cost its worker about
700 MB, where one string costs its length. The controller reads them back through
``from_json`` (`suite_of`, `case_of`, `model_of`) and then takes them off the report
(`release`: pytest keeps every report to the end of the session, and a large suite's rows
would stay there twice). In a
single process `attach` hands the record over directly (`Carried`), in the form the
controller would read (`settled`), without building the JSON of every row at once.

Every text of a Kedi item's report is cleaned once, in `attach` (surrogates escaped, keys
redacted): the one exit of an item's text to the terminal, JUnit, xdist and the reports.
A row's texts are cleaned when the row is made (`RowResult`), also when read back.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from dataclasses import dataclass
from typing import cast

import pytest

from pytest_kedi.constants import REPORT_CASE, REPORT_MODEL, REPORT_SUITE
from pytest_kedi.evals.safetext import clean_data, clean_text, texts_clean
from pytest_kedi.plugin.items import KediCaseItem, KediEvalItem
from pytest_kedi.plugin.outcomes import case_outcome, expected_failure, skip_reason, xfail_reason
from pytest_kedi.plugin.records import CaseRecord, Json, SuiteRecord

__all__ = [
    "Carried",
    "attach",
    "case_of",
    "clean_warning",
    "model_of",
    "release",
    "settled",
    "suite_of",
]

_SUITE = REPORT_SUITE
_CASE = REPORT_CASE
_MODEL = REPORT_MODEL


def _crash_message(report: pytest.TestReport) -> str | None:
    """``<ExceptionType>: <message>`` of an unexpected exception (its first line)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if message and str(message).strip():
        return str(message).strip().splitlines()[0]
    text = report.longreprtext.strip()
    return text.splitlines()[-1] if text else None


def _marker_xfail(report: pytest.TestReport) -> bool:
    """An error pytest reported as expected because of an ``xfail`` marker (not a
    ``pytest.xfail()`` call, which stops the item as a skip does)."""
    if not expected_failure(report):
        return False
    return not (_crash_message(report) or "").split(":", 1)[0].endswith("XFailed")


def _suite_record(
    item: KediEvalItem,
    when: str,
    report: pytest.TestReport,
    published: SuiteRecord | CaseRecord | None,
    threshold: float | None,
) -> SuiteRecord | None:
    if when == "call":
        if isinstance(published, SuiteRecord):
            if report.failed and published.outcome != "failed":  # XPASS(strict)
                failure = _crash_message(report) or "failed"
                return dataclasses.replace(published, outcome="failed", failure=failure)
            return published
        if report.skipped:  # pytest.skip() while loading the file or the suite's data
            record = SuiteRecord.placeholder(
                item.nodeid, item.suite, threshold=threshold, outcome="skipped", error=None
            )
            return dataclasses.replace(record, skip_reason=skip_reason(report))
        # runtest raised before publishing: not a Kedi failure (e.g. a hook raised)
        error = _crash_message(report) or "internal error"
        return SuiteRecord.placeholder(
            item.nodeid, item.suite, threshold=threshold, outcome="failed", error=error
        )
    if when == "setup" and not report.passed:  # an xfail marker's setup error: failed
        skipped = report.skipped and not _marker_xfail(report)
        outcome = "skipped" if skipped else "failed"
        setup_error = None if skipped else _crash_message(report) or "setup failed"
        record = SuiteRecord.placeholder(
            item.nodeid, item.suite, threshold=threshold, outcome=outcome, error=setup_error
        )  # a skip marker, or pytest.skip() in a fixture: pytest's reason
        return dataclasses.replace(record, skip_reason=skip_reason(report) if skipped else None)
    failed_teardown = when == "teardown" and report.failed
    if failed_teardown and isinstance(published, SuiteRecord) and published.outcome != "failed":
        # pytest counts the teardown's error
        failure = _crash_message(report) or "teardown failed"
        return dataclasses.replace(published, outcome="failed", failure=f"teardown: {failure}")
    return None


def _case_record(
    item: KediCaseItem,
    when: str,
    report: pytest.TestReport,
    published: SuiteRecord | CaseRecord | None,
) -> CaseRecord | None:
    if when == "call":
        if isinstance(published, CaseRecord):
            if report.failed and published.outcome != "failed":  # XPASS(strict)
                failure = _crash_message(report) or "failed"
                return dataclasses.replace(published, outcome="failed", message=failure)
            return published
        message = _crash_message(report) if report.failed else None
        record = CaseRecord.of(
            item.nodeid, item.suite, item.case, outcome=case_outcome(report), message=message
        )
        return dataclasses.replace(record, skip_reason=skip_reason(report))
    if when == "setup" and not report.passed:  # an xfail marker's setup error: xfailed
        outcome = case_outcome(report)
        message = _crash_message(report) or "setup failed" if report.failed else None
        record = CaseRecord.of(
            item.nodeid, item.suite, item.case, outcome=outcome, message=message
        )  # a skip marker, or pytest.skip() in a fixture: pytest's reason
        return dataclasses.replace(record, skip_reason=skip_reason(report))
    failed_teardown = when == "teardown" and report.failed
    if failed_teardown and isinstance(published, CaseRecord) and published.outcome != "failed":
        failure = _crash_message(report) or "teardown failed"  # pytest counts the error
        return dataclasses.replace(published, outcome="failed", message=failure)
    return None


@dataclass(frozen=True, slots=True)
class Carried:
    """What a Kedi item's report carries, handed over within one process."""

    suite: SuiteRecord | None
    case: CaseRecord | None
    model: str | None

    @property
    def nothing(self) -> bool:
        """Whether it carries nothing at all."""
        return self.suite is None and self.case is None and self.model is None


def settled(record: SuiteRecord) -> SuiteRecord:
    """``record`` as the controller reads it back from its cleaned JSON form, built without
    that form's rows: the rows themselves are kept (a row's texts were cleaned when it was
    made, and it reads back equal), without the exceptions they raised."""
    head = clean_data({**record.head_json(), "rows": []})
    back = SuiteRecord.from_json(head)
    # (its result is its own, made just now: given the rows in place, not copied twice)
    back.result.rows = [
        row if row.exception is None else dataclasses.replace(row, exception=None)
        for row in record.rows
    ]
    return back


#: What a phase that carries no record hands over (shared: `Carried` is frozen).
_NOTHING = Carried(None, None, None)
#: The types a `CaseRecord`'s fields read back from JSON as themselves (`_settled_case`).
_AS_READ = (str, type(None))


def _settled_case(case: CaseRecord) -> CaseRecord:
    """``case`` as the controller reads it back from its cleaned JSON form: ``case``
    itself when every field is of the exact type `CaseRecord.from_json` makes of it and
    every text is clean (what the round trip gives then equals it), else the round trip."""
    texts = (
        case.nodeid,
        case.procedure,
        case.case,
        case.outcome,
        case.message,
        case.skip_reason,
        case.xfail_reason,
    )
    if (
        type(case.line) is int
        and all(type(text) in _AS_READ for text in texts)
        and texts_clean(text for text in texts if text is not None)
        and all(type(text) is str for text in texts[:4])
    ):
        return case
    return CaseRecord.from_json(clean_data(case.to_json()))


def attach(
    item: pytest.Item,
    when: str,
    report: pytest.TestReport,
    *,
    published: SuiteRecord | CaseRecord | None,
    model: str | None,
    threshold: float | None,
    local: bool,
) -> Carried | None:
    """The record of ``item``'s phase ``when`` (``published``: what the item's run
    published, if anything; ``model``: its file's default model label), cleaned, and every
    text of ``report`` cleaned. ``local`` (no xdist worker): the record is returned;
    otherwise it is put on ``report``. Nothing happens for items that are not Kedi items."""
    suite = case = None
    if isinstance(item, KediEvalItem):
        suite = _suite_record(item, when, report, published, threshold)
    elif isinstance(item, KediCaseItem):
        case = _case_record(item, when, report, published)
    else:
        return None
    expected = xfail_reason(report)  # an expected failure's reason, as `-rx` shows it
    if expected is not None and suite is not None:
        suite = dataclasses.replace(suite, xfail_reason=expected)
    if expected is not None and case is not None:
        case = dataclasses.replace(case, xfail_reason=expected)
    if when != "call":
        model = None
    _clean_report(report)
    if local:
        if suite is None and case is None and model is None:
            return _NOTHING  # (most phases: a passed setup or teardown)
        return Carried(
            None if suite is None else settled(suite),
            None if case is None else _settled_case(case),
            None if model is None else clean_text(model),
        )
    if suite is not None:
        setattr(report, _SUITE, _packed(suite.to_json()))
    if case is not None:
        setattr(report, _CASE, _packed(case.to_json()))
    if model is not None:
        setattr(report, _MODEL, clean_text(model))
    return None


def _packed(record: Json) -> str:
    """A record's cleaned JSON form as one JSON text (see the module doc)."""
    return json.dumps(clean_data(record), ensure_ascii=False, check_circular=False)


def _unpacked(data: object) -> Json:
    """A record's JSON form, read back from what `_packed` made."""
    return cast("Json", json.loads(data) if isinstance(data, str) else data)


def release(report: pytest.TestReport) -> None:
    """Take the records off ``report`` once the controller has read them."""
    for name in (_SUITE, _CASE):
        if hasattr(report, name):
            delattr(report, name)


def suite_of(report: pytest.TestReport) -> SuiteRecord | None:
    data = getattr(report, _SUITE, None)
    return SuiteRecord.from_json(_unpacked(data)) if data is not None else None


def case_of(report: pytest.TestReport) -> CaseRecord | None:
    data = getattr(report, _CASE, None)
    return CaseRecord.from_json(_unpacked(data)) if data is not None else None


def model_of(report: pytest.TestReport) -> str | None:
    label = getattr(report, _MODEL, None)
    return str(label) if label is not None else None


def clean_warning(warning: warnings.WarningMessage) -> None:
    """The message of a warning given while a ``.kedi`` file collected or one of its items
    ran, or located in one, cleaned like the reports' texts: what pytest's warnings
    summary prints, and what an xdist worker must be able to send."""
    text = str(warning.message)
    if texts_clean((text,)):
        return
    cleaned = clean_text(text)
    message = warning.message
    if isinstance(message, Warning):
        try:
            message.args = (cleaned,)
        except Exception:  # pragma: no cover - a warning class refusing its args
            pass
        if str(message) == cleaned:
            return
    warning.message = cleaned


def _clean_report(report: pytest.TestReport) -> None:
    longrepr = report.longrepr
    if isinstance(longrepr, str):
        report.longrepr = clean_text(longrepr)
    elif isinstance(longrepr, tuple):  # a skip: (path, line, reason)
        path, line, reason = longrepr
        report.longrepr = (clean_text(path), line, clean_text(reason))
    elif longrepr is not None:
        _clean_repr(longrepr, set())
    wasxfail = getattr(report, "wasxfail", None)  # an xfail's reason
    if isinstance(wasxfail, str) and wasxfail:
        report.wasxfail = clean_text(wasxfail)
    # Most reports carry neither (every phase of every item passes here).
    properties = report.user_properties
    if properties and not _properties_clean(properties):
        report.user_properties = clean_data(list(properties))
    sections = report.sections
    if sections and not texts_clean(text for section in sections for text in section):
        report.sections = clean_data(list(sections))


#: Values `clean_data` leaves as they are (no text in them).
_NUMBERS = (int, float, bool, type(None))


def _properties_clean(properties: list[tuple[str, object]]) -> bool:
    """Whether `clean_data` would leave ``properties`` as they are: pairs of a name and a
    number (or None) or text, every text clean (an eval item's ``kedi_*`` properties, on
    its call and teardown reports), checked without its JSON dump."""
    texts: list[str] = []
    for prop in properties:
        if type(prop) is not tuple:
            return False
        for value in prop:
            if type(value) is str:
                texts.append(value)
            elif type(value) not in _NUMBERS:
                return False
    return texts_clean(texts)


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
