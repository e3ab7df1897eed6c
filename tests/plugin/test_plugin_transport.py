"""A Kedi item's record handed over within one process (`transport.attach`) is the record
the controller would read back from its cleaned JSON form, without building that form
when there is nothing to clean."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from pytest_kedi.evals.safetext import clean_data
from pytest_kedi.plugin import transport
from pytest_kedi.plugin.records import CaseRecord

SECRET = "sk-transport-secret-0123456789"
CUT = "\udcff"  # a lone surrogate: not encodable as UTF-8


def _round_trip(case: CaseRecord) -> CaseRecord:
    return CaseRecord.from_json(clean_data(case.to_json()))


@pytest.mark.parametrize(
    "case",
    [
        CaseRecord("t.kedi::test:s::c", 3, "s", "c", "passed", None),
        CaseRecord("t.kedi::test:s::c", 3, "s", "c", "skipped", None, skip_reason="why"),
        CaseRecord("t.kedi::test:s::c", 3, "s", "c", "failed", "AssertionError: é"),
    ],
)
def test_a_clean_case_record_is_handed_over_as_it_is(case: CaseRecord) -> None:
    assert transport._settled_case(case) is case
    assert _round_trip(case) == case


@pytest.mark.parametrize(
    "case",
    [
        CaseRecord("t.kedi::test:s::c", 3, "s", "c", "failed", f"key={SECRET}"),
        CaseRecord("t.kedi::test:s::c", 3, "s", "c", "failed", f"cut {CUT}"),
        CaseRecord("t.kedi::test:s::c", 3, "s", "c", "skipped", None, skip_reason=SECRET),
        CaseRecord("t.kedi::test:s::c", True, "s", "c", "passed", None),  # type: ignore[arg-type]
    ],
)
def test_a_case_record_to_clean_is_read_back_from_its_cleaned_json(
    case: CaseRecord, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRANSPORT_API_KEY", SECRET)
    settled = transport._settled_case(case)
    assert settled == _round_trip(case) and settled is not case
    assert SECRET not in repr(settled) and CUT not in repr(settled)


@pytest.mark.parametrize(
    ("properties", "cleaned"),
    [
        ([("kedi_score", 1.0), ("kedi_rows", 5), ("kedi_feedback", None)], False),
        ([("kedi_feedback", "fine"), ("kedi_split", "test")], False),
        ([("kedi_feedback", f"saw {SECRET}")], True),
        ([("kedi_feedback", f"cut {CUT}")], True),
        ([("mine", ["a", SECRET])], True),
        ([["mine", 1]], True),
    ],
)
def test_report_properties_are_cleaned_when_they_need_it(
    properties: list[object], cleaned: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRANSPORT_API_KEY", SECRET)
    report = SimpleNamespace(longrepr=None, user_properties=properties, sections=[], wasxfail=None)
    transport._clean_report(report)  # type: ignore[arg-type]
    assert report.user_properties == clean_data(list(properties))
    assert (report.user_properties is not properties) == cleaned
    assert SECRET not in repr(report.user_properties)


def test_a_suite_record_is_handed_over_as_read_back_with_its_rows() -> None:
    from pytest_kedi.evals import RowResult, SuiteResult
    from pytest_kedi.plugin.records import SuiteRecord

    raised = KeyError("x")
    rows = [
        RowResult(1, "'q1'", "'yes'", 1.0, None, None, None, 0.01),
        RowResult(2, "'q2'", None, 0.0, "error: KeyError: 'x'", "KeyError: 'x'", "metric", 0.02),
    ]
    rows[1] = dataclasses.replace(rows[1], exception=raised)
    result = SuiteResult(
        "answer", "exact", "qs", "test", 0.5, rows, 2, 1, {"metric": 1}, "fb", None, 0.03
    )
    record = SuiteRecord("a.kedi::eval:answer", 4, result, threshold=0.8, outcome="failed")
    settled = transport.settled(record)
    assert settled == record and settled.result is not result
    assert settled.rows[0] is rows[0] and settled.rows[1].exception is None
    assert record.rows[1].exception is raised  # the item's own record is left as it was
