"""The JSON report and rows JSONL are streamed in one pass (issue 9 §8): what they hold
equals `RunRecord.to_json` / `SuiteRecord.row_lines` exactly, keys in order, and a file
that cannot be written leaves the other one written and any previous file in place."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from kedi_plugin_helpers import Kedi

from pytest_kedi.atomicwrite import AtomicWriter
from pytest_kedi.evals import RowResult, SuiteResult, Usage
from pytest_kedi.evals.results import ModelCallTrace
from pytest_kedi.evals.safetext import clean_data
from pytest_kedi.plugin import transport
from pytest_kedi.plugin.records import CaseRecord, Rerun, RunRecord, SuiteRecord
from pytest_kedi.plugin.reportwriter import dumps, rows_pieces, rows_text, stream_reports
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


def _odd_rows() -> SuiteRecord:
    """Rows of every shape: errors, repeats, carried over, usage, traced calls, odd text."""
    call = ModelCallTrace("m", 'say "hi"\n', None, "\u00e9\\", 3, 4, 0.5)
    rows = [
        RowResult(0, None, None, 0.0, None, "boom \udcff", "KeyError", 1e-05),
        RowResult(1, "'a\\b\"c'", "'\t'", 0.5, "half", None, None, 2.0, scores=[1.0, 0.0]),
        RowResult(2, "'x'", "'y'", 1.0, None, None, None, 0.0, carried_over=True, retries=2),
        RowResult(3, "'x'", None, 1.0, None, None, None, 3, usage=Usage(1, 2, 3), calls=(call,)),
        RowResult(4, "'\u2713'", None, 1.0, "\u2028 sep", None, None, 1e300, scores=[1, 1]),
    ]
    result = SuiteResult("odd", "m", "d", "test", 0.5, rows, 5, 1, {"KeyError": 1}, None, None, 1)
    delta = SuiteDelta(0.5, 0.0, (RowDelta(1, 0.25), RowDelta(2, -0.5)))
    return SuiteRecord("c.kedi::eval:odd", 2, result, None, "passed", baseline=delta)


class _Text(str):
    """A text of a str subclass."""


def _edge_rows() -> SuiteRecord:
    """Rows at the edges of the usual row's shape: signed zeros, a score its repeat list
    holds as another float object (read back from JSON, as under xdist), an index or a
    score of another type, a text of a str subclass, feedback without an error."""

    def read_back(row: RowResult) -> RowResult:
        return RowResult.from_json(json.loads(json.dumps(row.to_json())))

    rows = [
        RowResult(0, "'a'", "'b'", -0.0, None, None, None, 0.5, scores=[0.0]),
        RowResult(1, "'a'", None, 0.0, None, None, None, 0.5, scores=[-0.0]),
        read_back(RowResult(2, "'a'", "'b'", 0.25, "a quarter", None, None, 1.5e-05)),
        read_back(RowResult(3, "'a'", "'b'", 0.0, None, None, None, 2.0)),
        read_back(RowResult(4, "'a'", "'b'", -0.0, None, None, None, 2.0)),
        RowResult(True, "'a'", "'b'", 1.0, None, None, None, 0.5),
        RowResult(6, None, None, 1, None, None, None, 0.5),
        RowResult(7, _Text("'s\u00e9'"), _Text("'\"'"), 1.0, _Text("f"), None, None, 0.1),
        RowResult(8, "'a'", "'b'", 0.5, "half", None, None, 0.5, output="'\u2713'"),
    ]
    result = SuiteResult("edge", "m", "d", "data", 0.5, rows, 9, 0, {}, None, None, 1)
    return SuiteRecord("e.kedi::eval:edge", 1, result, None, "passed")


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
    "odd rows": _run(_odd_rows(), dataclasses.replace(_odd_rows(), baseline=None)),
    "edge rows": _run(_edge_rows()),
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
    # (split at newlines only: a row's text may hold a raw U+2028)
    assert rows.read_text("utf-8").split("\n") == [*[line[:-1] for line in expected], ""]
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
    assert text.endswith("\n}\n") and "\\u2713" not in text  # UTF-8 text, not escapes


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
    carried = json.dumps(clean_data(record.to_json()), ensure_ascii=False)  # as xdist's
    assert read == SuiteRecord.from_json(json.loads(carried))
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


def test_a_value_that_is_not_a_number_is_refused_as_before(tmp_path: Path) -> None:
    suite = _suite("a.kedi::eval:first", 1, 2)
    suite.rows[1].duration_s = float("nan")
    with pytest.raises(ValueError, match="not JSON compliant"):
        json.dumps(suite.to_json(), allow_nan=False)
    report = tmp_path / "r.json"
    report.write_text("old\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not JSON compliant"):
        stream_reports(_run(suite), report, None)
    assert report.read_text("utf-8") == "old\n"


#: the growth of the peak memory of the xdist worker that ran the suite, in KB, written down
WORKER_MEMORY_CONFTEST = """\
import resource, sys

_START = []


def _peak_kb():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes there, KB elsewhere


def pytest_runtest_logstart(nodeid, location):
    _START.append(_peak_kb())


def pytest_unconfigure(config):
    if _START and hasattr(config, "workerinput"):  # (the controller logs the item too)
        with open("grown.txt", "w") as grown:
            grown.write(str(_peak_kb() - _START[0]))
"""

BIG_SUITE = """\
@eval: big:
  > data: xs:
    = `[(i, i % 3) for i in range(20000)]`
  > metric: m(xs):
    = `xs % 3 == expected`
"""


@pytest.mark.skipif(sys.platform == "win32", reason="reads the peak memory with `resource`")
@pytest.mark.xdist_only("measures the worker that sends the suite's record to the controller")
def test_a_worker_sends_a_large_suite_without_a_memory_spike(kedi: Kedi) -> None:
    """The record travelled as nested builtins, which pytest-xdist's serializer writes as
    one small ``bytes`` object per value: a suite of 20,000 rows raised its worker's peak
    memory by about 290 MB (50,000 rows: 750 MB, 6x a single process); now by about 40."""
    kedi.write("big.kedi", BIG_SUITE)
    kedi.pytester.makeconftest(WORKER_MEMORY_CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-rows", "summary", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    (suite,) = kedi.json("r.json")["suites"]
    assert (suite["rows_total"], suite["score"]) == (20000, 1.0)
    grown_mb = int((kedi.pytester.path / "grown.txt").read_text()) / 1024
    assert grown_mb < 150, f"the worker's peak memory grew by {grown_mb:.0f} MB"


RECORDED_SUITE = """\
@ask(q: str) -> str:
  >> Answer <q>: [answer]
  = `answer`

@eval: ask:
  > data: qs:
    = `[f"question {i}" for i in range(6000)]`
  > metric: m(qs):
    = `len(ask(qs)) > 0`
"""


@pytest.mark.skipif(sys.platform == "win32", reason="reads the peak memory with `resource`")
@pytest.mark.xdist_only("measures the worker that hands its recordings to the controller")
def test_a_worker_hands_over_many_recordings_without_a_memory_spike(kedi: Kedi) -> None:
    """What a worker recorded in cassettes travels on the item's teardown report; as nested
    builtins, 6,000 recorded calls raised the worker's peak memory by about 125 MB (a
    single process: 42 MB). Now by about as much as in a single process."""
    kedi.write("rec.kedi", RECORDED_SUITE)
    kedi.pytester.makeconftest(WORKER_MEMORY_CONFTEST)
    result = kedi.run(
        "--kedi-eval", "--kedi-rows", "summary", "--kedi-record-mode", "record",
        "--kedi-report", "r.json",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert kedi.json("r.json")["model_calls"] == {"test": 6000}
    cassette = kedi.json("rec.kedi.cassette.json")
    assert len(cassette["entries"]) == 6000
    grown_mb = int((kedi.pytester.path / "grown.txt").read_text()) / 1024
    assert grown_mb < 85, f"the worker's peak memory grew by {grown_mb:.0f} MB"


@pytest.mark.parametrize("name", list(RUNS))
def test_rows_text_is_what_pythons_encoder_writes(name: str) -> None:
    """`rows_text` (the ``--kedi-rerun`` cache's rows) equals ``json.dumps`` of the rows'
    JSON forms, byte for byte, for rows of every shape."""
    for suite in RUNS[name].suites:
        expected = json.dumps([row.to_json() for row in suite.rows], ensure_ascii=False)
        assert rows_text(suite.rows) == expected


def test_a_text_that_is_no_text_is_refused_as_before(tmp_path: Path) -> None:
    """A row's text that is not a str (bytes) fails the reports as Python's encoder fails."""
    suite = _suite("a.kedi::eval:first", 1, 2)
    suite.rows[1].input = b"'raw'"  # type: ignore[assignment]
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(suite.to_json())
    with pytest.raises(TypeError, match="not JSON serializable"):
        rows_text(suite.rows)
    with pytest.raises(TypeError, match="not JSON serializable"):
        stream_reports(_run(suite), tmp_path / "r.json", tmp_path / "rows.jsonl")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("rows", "at"), [(2, 1), (1200, 700), (1200, 0), (1024, 1023)])
def test_rows_stored_for_a_rerun_keep_a_number_that_is_not_finite(rows: int, at: int) -> None:
    suite = _suite("a.kedi::eval:first", 1, rows)
    suite.rows[at].duration_s = float("nan")
    with pytest.raises(ValueError, match="not JSON compliant"):
        rows_text(suite.rows)
    stored = "".join(rows_pieces(suite.rows))  # as before: Python's encoder writes NaN
    assert stored == json.dumps([row.to_json() for row in suite.rows], ensure_ascii=False)
    assert '"duration_s": NaN' in stored
