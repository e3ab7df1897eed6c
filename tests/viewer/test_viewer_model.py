"""Reading report documents defensively (version 1 and 2, optional fields, bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from viewer_reports import full_report, v1_report

from pytest_kedi.viewer import ReportError, read_report, run_view


def test_version_1_reads_with_no_optional_fields() -> None:
    run = run_view(v1_report(), label="r.json")
    (suite,) = run.suites
    assert (suite.label, suite.verdict, suite.rows_total) == ("alpha::exact", "passed", 3)
    assert (suite.ci, suite.stderr, suite.repeats, suite.delta) == (None, None, None, None)
    assert [r.output for r in suite.rows] == [None, None, None]
    assert run.models == () and run.verdict == "passed" and run.exitstatus is None


def test_version_2_fields_are_read() -> None:
    run = run_view(full_report(), label="r.json")
    gated = run.suites[0]
    assert gated.ci == (0.31, 0.69) and gated.stderr == 0.094 and gated.repeats == 2
    assert gated.delta == -0.25
    rows = {r.index: r for r in gated.rows}
    assert rows[0].calls[0].model == "openai:gpt-4o-mini"
    assert rows[0].calls[0].tokens == "input 12, output 3"
    assert rows[2].flaky and not rows[0].flaky  # scores [1, 0] vs [1, 1]
    assert rows[1].regressed and rows[1].delta == -1.0
    assert [(m.name, m.calls, m.synthetic) for m in run.models] == [
        ("openai:gpt-4o-mini", 42, False),
        ("test", 3, True),
    ]
    assert run.verdict == "failed"  # exitstatus 1


@pytest.mark.parametrize(
    ("extra", "verdict"),
    [({"interrupted": True}, "interrupted"), ({"exitstatus": 0}, "passed"), ({}, "failed")],
)
def test_run_verdict(extra: dict[str, object], verdict: str) -> None:
    document = {**full_report(), **extra}
    if not extra:
        del document["exitstatus"]
    assert run_view(document, label="r").verdict == verdict


def test_wrongly_typed_optional_fields_are_ignored() -> None:
    document = v1_report()
    document["models"] = "gpt"
    document["suites"][0].update(ci="wide", stderr="x", repeats=True, delta=[1])
    document["suites"][0]["rows"][0].update(output=3, calls="none", flaky="yes", score=None)
    run = run_view(document, label="r")
    suite = run.suites[0]
    assert (suite.ci, suite.stderr, suite.repeats, suite.delta) == (None, None, None, None)
    first = suite.rows[0]
    assert (first.output, first.calls, first.flaky, first.score) == (None, (), False, 0.0)


def test_xfailed_suites_are_marked() -> None:
    document = v1_report()
    document["suites"][0]["outcome"] = "failed"
    run = run_view(document, label="r", xfailed=["a.kedi::eval:alpha"])
    assert run.suites[0].verdict == "xfail" and run.verdict == "passed"


def test_interval_and_model_shapes() -> None:
    document = v1_report()
    document["suites"][0]["ci"] = {"lower": 0.1, "upper": 0.9}
    document["models"] = [{"name": "m", "calls": 2}, {"model": "n", "count": 5}]
    run = run_view(document, label="r")
    assert run.suites[0].ci == (0.1, 0.9)
    assert [(m.name, m.calls) for m in run.models] == [("m", 2), ("n", 5)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "r.json:1:2: not valid JSON"),
        ("[1, 2]", "r.json: not a pytest-kedi JSON report (expected a JSON object)"),
        ('{"version": 1, "suites": 3}', "r.json: not a pytest-kedi JSON report (no 'suites' list)"),
        ('{"version": 9, "suites": []}', "r.json: report version 9 is not supported"),
        ('{"version": 3.0, "suites": []}', "r.json: report version 3.0 is not supported"),
        ('{"version": true, "suites": []}', "r.json: report version true is not supported"),
    ],
)
def test_bad_files_are_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("r.json").write_text(text, encoding="utf-8")
    with pytest.raises(ReportError) as info:
        read_report("r.json")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_read_report_uses_file_time_when_the_report_has_none(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(v1_report()), encoding="utf-8")
    assert read_report(path).when is not None and "(file time)" in str(read_report(path).when)
    path.write_text(json.dumps({**v1_report(), "created": "2026-01-02T03:04:05Z"}), "utf-8")
    assert read_report(path).when == "2026-01-02T03:04:05Z"


def test_version_3_plain_run_hides_its_interval() -> None:
    """pytest-kedi computes an interval for every run; a run whose rows ran once and whose
    min score applied to the mean is shown as before, without it."""
    report = full_report()
    report["version"] = 3
    suite = report["suites"][0]
    suite.update(repeats=1, gate="mean", ci={"low": 0.2, "high": 0.8}, stderr=0.1)
    plain = run_view(report, label="r.json").suites[0]
    assert (plain.ci, plain.stderr, plain.repeats) == (None, None, None)
    suite.update(gate="lower")
    gated = run_view(report, label="r.json").suites[0]
    assert (gated.ci, gated.stderr, gated.repeats) == ((0.2, 0.8), 0.1, None)
    suite.update(gate="mean", repeats=3)
    repeated = run_view(report, label="r.json").suites[0]
    assert (repeated.ci, repeated.repeats) == ((0.2, 0.8), 3)


def test_version_3_traced_call_and_row_usage_show_their_tokens() -> None:
    """A schema-3 report (what ``--kedi-trace`` writes) records a call's tokens as
    ``input_tokens``/``output_tokens`` and a row's as ``usage``: the viewer shows both."""
    report = v1_report()
    report["version"] = 3
    call = {
        "model": "openai-chat:gpt-4o-mini",
        "prompt": "What is 2 + 2?",
        "instructions": None,
        "answer": '{"answer": "4"}',
        "input_tokens": 52,
        "output_tokens": 9,
        "duration_s": 0.38,
    }
    first = report["suites"][0]["rows"][0]
    first.update(calls=[call], usage={"requests": 1, "input_tokens": 118, "output_tokens": 9})
    row = run_view(report, label="r.json").suites[0].rows[0]
    assert row.calls[0].tokens == "input 52, output 9"
    assert row.tokens == "requests 1, input 118, output 9"


def test_status_2_with_interrupted_false_is_a_failed_run_not_an_interrupted_one() -> None:
    """pytest-xdist ends a ``-x`` run with status 2; the views said INTERRUPTED for a
    report that says ``"interrupted": false``."""
    report = v1_report()
    report.update(exitstatus=2, interrupted=False)
    assert run_view(report, label="r").verdict == "failed"
    report.update(interrupted=True)
    assert run_view(report, label="r").verdict == "interrupted"
    del report["interrupted"]  # a document that does not say: its status decides
    assert run_view(report, label="r").verdict == "interrupted"
