"""The JSON report and rows JSONL are streamed in one pass (issue 9 §8): what they hold
equals `RunRecord.to_json` / `SuiteRecord.row_lines` exactly, keys in order, and a file
that cannot be written leaves the other one written and any previous file in place."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from kedi_plugin_helpers import Kedi

from pytest_kedi.evals import RowResult, SuiteResult
from pytest_kedi.evals.files import AtomicWriter
from pytest_kedi.evals.safetext import clean_data
from pytest_kedi.plugin import transport
from pytest_kedi.plugin.records import CaseRecord, Rerun, RunRecord, SuiteRecord
from pytest_kedi.plugin.reportwriter import dumps, stream_reports
from pytest_kedi.reports.deltas import RowDelta, SuiteDelta


def _suite(nodeid: str, line: int, rows: int, *, baseline: bool = False) -> SuiteRecord:
    made = [
        RowResult(
            i,
            f"'caf\u00e9 {i}'",
            None if i % 2 else "'yes'",
            1.0 if i % 3 else 0.0,
            None if i % 3 else "wrong \u2713",
            None,
            None,
            0.01 * i,
            output=f"'out {i}'",
        )
        for i in range(rows)
    ]
    result = SuiteResult(
        suite="answer",
        metric="exact",
        dataset="questions",
        split=None,
        score=0.5,
        rows=made,
        rows_total=rows,
        rows_errored=0,
        errors_by_class={},
        feedback="wrong \u2713" if rows else None,
        error=None,
        duration_s=0.03,
    )
    delta = SuiteDelta(0.25, 0.25, (RowDelta(1, -1.0),)) if baseline else None
    return SuiteRecord(nodeid, line, result, 0.8, "failed", baseline=delta)


def _run(*suites: SuiteRecord, tests: tuple[CaseRecord, ...] = ()) -> RunRecord:
    return RunRecord(
        exitstatus=1, interrupted=False, model_calls=(("m", 2),), suites=suites, tests=tests
    )


RUNS = {
    "rows": _run(
        _suite("b.kedi::eval:answer", 3, 4, baseline=True),
        _suite("a.kedi::eval:answer", 9, 0),
        _suite("a.kedi::eval:first", 1, 2),
        tests=(
            CaseRecord("t.kedi::test:s::c", 3, "s", "c", "failed", "no \u2713"),
            CaseRecord("t.kedi::test:s::d", 4, "s", "d", "passed", None),
        ),
    ),
    "no suites": _run(tests=(CaseRecord("t.kedi::test:s::c", 3, "s", "c", "passed", None),)),
    "no tests": _run(_suite("a.kedi::eval:first", 1, 1)),
}


@pytest.mark.parametrize("name", list(RUNS))
def test_streamed_files_hold_the_records_json_in_order(tmp_path: Path, name: str) -> None:
    run = RUNS[name]
    report, rows = tmp_path / "r.json", tmp_path / "rows.jsonl"
    streamed = stream_reports(run, report, rows)
    assert streamed.written == (report, rows) and streamed.errors == ()
    text = report.read_text("utf-8")
    # same values and key order as the document built whole
    assert dumps(json.loads(text)) == dumps(run.to_json())
    expected = [
        dumps(line) + "\n"
        for suite in sorted(run.suites, key=lambda s: (s.path, s.line, s.nodeid))
        for line in suite.row_lines()
    ]
    assert rows.read_text("utf-8").splitlines(keepends=True) == expected
    # indented as before, one line per row
    document = run.to_json()
    for suite in document["suites"]:
        for row in suite["rows"]:
            assert f"\n        {dumps(row)}" in text
        suite["rows"] = []
    document["tests"] = []
    for key, value in document.items():
        if key not in ("suites", "tests"):
            assert f'\n  "{key}": {dumps(value, indent=2).replace(chr(10), chr(10) + "  ")}' in text
    assert text.endswith("\n}\n") and "\\u" not in text  # UTF-8 text, not escapes


def test_one_unwritable_report_does_not_stop_the_other(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    rows = tmp_path / "rows.jsonl"
    rows.write_text("previous\n", encoding="utf-8")
    streamed = stream_reports(RUNS["rows"], tmp_path / "dir.json", rows)
    assert streamed.written == (rows,)
    assert len(streamed.errors) == 1 and "dir.json" in streamed.errors[0]
    assert rows.read_text("utf-8").count("\n") == 6


def test_an_interrupted_write_leaves_the_previous_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, rows = tmp_path / "r.json", tmp_path / "rows.jsonl"
    report.write_text("old report\n", encoding="utf-8")
    rows.write_text("old rows\n", encoding="utf-8")
    written: list[str] = []

    def interrupted(self: AtomicWriter, text: str) -> None:
        written.append(text)
        if len(written) == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(AtomicWriter, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        stream_reports(RUNS["rows"], report, rows)
    assert report.read_text("utf-8") == "old report\n"
    assert rows.read_text("utf-8") == "old rows\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "rows.jsonl"]


def test_a_record_handed_over_in_process_equals_what_xdist_reads() -> None:
    record = _suite("a.kedi::eval:first", 1, 3)
    record.rows[1].exception = ValueError("kept by the row runner")
    record = dataclasses.replace(
        record,
        result=dataclasses.replace(record.result, exception=KeyError("suite")),
        rerun=Rerun("errors", previous_run=True),
        max_errors=3.0,
    )
    read = transport.settled(record)
    assert read == SuiteRecord.from_json(clean_data(record.to_json()))
    assert dumps(read.to_json()) == dumps(SuiteRecord.from_json(record.to_json()).to_json())
    assert read.max_errors == 3 and dumps(read.to_json()["max_errors"]) == "3"
    assert all(row.exception is None for row in read.rows)
    assert read.result.exception is None


KEPT_CONFTEST = """\
def pytest_terminal_summary(terminalreporter):
    kept = [
        report
        for reports in terminalreporter.stats.values()
        for report in reports
        if hasattr(report, "kedi_suite") or hasattr(report, "kedi_case")
    ]
    terminalreporter.write_line(f"reports holding kedi records: {len(kept)}")
"""

SUITE = """\
@double(x: int) -> int:
  = `x * 2`

@eval: double:
  > data: xs:
    = `[(i, i * 2) for i in range(50)]`
  > metric: exact(xs):
    = `double(xs) == expected`

@test: double:
  > case: two:
    `assert double(1) == 2`
"""


def test_reports_kept_by_pytest_hold_no_second_copy_of_the_rows(kedi: Kedi) -> None:
    kedi.write("double.kedi", SUITE)
    kedi.pytester.makeconftest(KEPT_CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-rows-jsonl", "r.jsonl")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["reports holding kedi records: 0"])
    (suite,) = kedi.json("r.json")["suites"]
    assert len(suite["rows"]) == 50 and suite["score"] == 1.0
    assert len(kedi.json("r.json")["tests"]) == 1
    lines = (kedi.pytester.path / "r.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line)["index"] for line in lines] == list(range(50))
