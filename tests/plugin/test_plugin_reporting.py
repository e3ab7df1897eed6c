"""Reporting: terminal summary, JSON report, rows JSONL, JUnit, model header, xdist parity
(issue 4 §6, §7, §9)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from kedi_marks import patched_plugin
from kedi_plugin_helpers import (
    DEMO,
    ROW_KEYS,
    SUITE_KEYS,
    TEST_KEYS,
    Kedi,
    junit_properties,
    without_durations,
)

SCORES = """\
@wc(text: str) -> int:
  = `len(text.split())`

@eval: wc:
  > data: samples:
    = `[("one two", 2), ("one", 3), ("a b c", 3), (None, 1)]`
  > metric: exact(samples):
    = ```
    ok = wc(samples) == expected
    return (1.0 if ok else 0.0), (None if ok else f"wrong count for {samples!r}")
    ```

@eval: missing:
  > data: xs:
    = `[1]`
  > metric: m(ys):
    = `1.0`
"""

MODEL_PROGRAM = """\
@classify(ticket: str) -> str:
  >> Classify the ticket.
  Ticket: <ticket>
  Category: [category: Literal["billing", "bug"]]
  = `category`

@eval: classify:
  > data: tickets:
    = `[("refund please", "billing"), ("it crashes", "bug"), ("refund crash", "billing")]`
  > metric: accuracy(tickets):
    = `classify(tickets) == expected`
"""

MODEL_CONFTEST = """\
import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def rules(messages, info):
    prompt = str(messages[0].parts[-1].content)
    category = "bug" if "crash" in prompt else "billing"
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"category": category})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(rules, model_name="rules")
"""


def _summary(result: pytest.RunResult) -> list[str]:
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith("=") and " kedi " in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("="))
    return lines[start + 1 : end]


def test_summary_at_quiet_verbosity(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "-q", "--kedi-min-score", "0.5")
    summary = _summary(result)
    assert summary[:6] == [
        "models: no model calls (default: test)",
        # Kedi's --test block, in source order, at every verbosity
        "Tests:",
        "- initials::two_words: OK",
        "- initials::padded: OK",
        "Evals:",
        "- initials::exact: 0.6667  [passed, min score 0.5000]",
    ]
    wc, missing = summary[6:]  # source order within a file (issue 7 §5a)
    assert missing.startswith("- missing::m: ERROR | missing dataset reference at ")
    assert missing.endswith(
        "scores.kedi:16: metric 'm' names dataset 'ys', which this suite "
        "does not define  [FAILED, min score 0.5000]"
    )
    assert wc.startswith("- wc::exact: 0.5000 | wrong count for 'one'; error: KediTypeExec")
    assert wc.endswith("  [passed, min score 0.5000]")


def test_verbose_summary_lists_rows_and_cases(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "-v")
    assert _summary(result) == [
        "models: no model calls (default: test)",
        "Tests:",
        "- initials::two_words: OK",
        "- initials::padded: OK",
        "Evals:",
        "- initials::exact: 0.6667  [passed]",
        "    demo.kedi::eval:initials",
        "    scores 0 |▄        █| 1",
        "    row 0: score 1.0000 | input 'ada lovelace' | expected 'AL' | output 'AL'",
        "    row 1: score 1.0000 | input 'alan turing' | expected 'AT' | output 'AT'",
        "    row 2: score 0.0000 | input 'x y' | expected 'XX' | output 'XY'",
    ]


def test_no_summary_without_kedi_items(kedi: Kedi) -> None:
    kedi.write("test_plain.py", "def test_ok():\n    pass\n")
    assert not any(" kedi " in line for line in kedi.run("--kedi-eval").outlines)


def test_json_report_schema(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    kedi.write("demo.kedi", DEMO.replace('== "GH"', '== "XX"'))
    result = kedi.run("--kedi-eval", "--kedi-report", "out/report.json")
    result.stdout.fnmatch_lines(["kedi report written: *out/report.json"])
    report = kedi.json("out/report.json")
    assert tuple(report) == (
        "version", "interrupted", "stopped", "exitstatus", "model_calls", "usage", "retries",
        "xfailed", "errors", "suites", "tests",
    )  # fmt: skip
    assert (report["version"], report["interrupted"], report["exitstatus"]) == (3, False, 1)
    assert report["model_calls"] == {}
    assert [s["nodeid"] for s in report["suites"]] == [  # source order (issue 7 §5a)
        "demo.kedi::eval:initials",
        "scores.kedi::eval:wc",
        "scores.kedi::eval:missing",
    ]
    for suite in report["suites"]:
        assert tuple(suite) == SUITE_KEYS
        for row in suite["rows"]:
            assert tuple(row) == ROW_KEYS
    for test in report["tests"]:
        assert tuple(test) == TEST_KEYS
    missing = report["suites"][2]
    assert without_durations(missing) == {
        "nodeid": "scores.kedi::eval:missing",
        "path": "scores.kedi",
        "line": 13,
        "procedure": "missing",
        "metric": "m",
        "dataset": "ys",
        "split": None,
        "score": 0.0,
        "rows_total": 0,
        "rows_errored": 0,
        "errors_by_class": {},
        "feedback": None,
        "threshold": None,
        "outcome": "failed",
        "error": missing["error"],
        "failure": None,
        "skip_reason": None,
        "xfail_reason": None,
        "repeats": 1,
        "stderr": None,
        "ci": None,
        "gate": "mean",
        "rerun": None,
        "max_errors": None,
        "baseline_score": None,
        "delta": None,
        "retries": 0,
        "usage": {"requests": 0, "input_tokens": 0, "output_tokens": 0},
        "rows": [],
    }
    assert missing["error"].startswith("missing dataset reference")
    wc = report["suites"][1]
    assert (wc["score"], wc["rows_total"], wc["rows_errored"], wc["errors_by_class"]) == (
        0.5,
        4,
        1,
        {"type": 1},
    )
    assert (wc["line"], wc["split"], wc["dataset"], wc["outcome"]) == (
        4,
        "data",
        "samples",
        "passed",
    )
    assert without_durations(wc["rows"][1]) == {
        "index": 1,
        "input": "'one'",
        "expected": "3",
        "score": 0.0,
        "feedback": "wrong count for 'one'",
        "error": None,
        "error_class": None,
        "scores": [0.0],
        "flaky": False,
        "carried_over": False,
        "delta": None,
        "regressed": None,
        "output": "1",
        "calls": [],
        "retries": 0,
        "usage": {"requests": 0, "input_tokens": 0, "output_tokens": 0},
    }
    assert wc["rows"][3]["error_class"] == "type"
    assert report["tests"] == [
        {
            "nodeid": "demo.kedi::test:initials::two_words",
            "path": "demo.kedi",
            "line": 5,
            "procedure": "initials",
            "case": "two_words",
            "outcome": "passed",
            "message": None,
            "skip_reason": None,
            "xfail_reason": None,
        },
        {
            "nodeid": "demo.kedi::test:initials::padded",
            "path": "demo.kedi",
            "line": 7,
            "procedure": "initials",
            "case": "padded",
            "outcome": "failed",
            "message": "AssertionError: assert 'GH' == 'XX'\n  \n  - XX\n  + GH",
            "skip_reason": None,
            "xfail_reason": None,
        },
    ]


def test_json_report_records_skipped_suites(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.pytester.makeini("[pytest]\nkedi_collect = true\nkedi_min_score = 0.5\n")
    kedi.run("--kedi-report", "report.json").assert_outcomes(passed=2, skipped=1)
    (suite,) = kedi.json("report.json")["suites"]
    assert (suite["outcome"], suite["score"], suite["rows"], suite["split"]) == (
        "skipped",
        0.0,
        [],
        None,
    )
    assert tuple(suite) == SUITE_KEYS


def test_rows_jsonl_and_atomic_write(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    target = kedi.write("rows.jsonl", "stale\n")
    kedi.run("--kedi-eval", "--kedi-rows-jsonl", "rows.jsonl").assert_outcomes(passed=3)
    lines = [line for line in target.read_text(encoding="utf-8").splitlines()]
    records = [without_durations(json.loads(line)) for line in lines]
    assert [(r["nodeid"], r["index"], r["score"]) for r in records] == [
        ("demo.kedi::eval:initials", 0, 1.0),
        ("demo.kedi::eval:initials", 1, 1.0),
        ("demo.kedi::eval:initials", 2, 0.0),
    ]
    assert set(records[0]) == {"nodeid", "procedure", "metric", "split", *ROW_KEYS} - {"duration_s"}
    assert sorted(p.name for p in target.parent.iterdir() if p.name.startswith(".rows")) == []


def test_unwritable_report_fails_the_run(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("blocker", "a file, not a directory\n")
    result = kedi.run("--kedi-eval", "--kedi-report", "blocker/report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["kedi: cannot write */blocker/report.json: Not a directory"])
    assert "Errno" not in result.stdout.str() and ".tmp" not in result.stdout.str()


def test_junit_properties(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    kedi.run("--kedi-eval", "--kedi-min-score", "0.25", "--junitxml", "junit.xml")
    root = ET.parse(kedi.pytester.path / "junit.xml").getroot()
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in root.iter("testcase")
    }
    assert props["eval:wc"] == {
        "kedi_score": "0.5",
        "kedi_feedback": "wrong count for 'one'; error: KediTypeExecutionError: scores.kedi:1: "
        "parameter 'text' of wc expects str, got None (NoneType)",
        "kedi_threshold": "0.25",
        "kedi_rows": "4",
        "kedi_errors": "1",
        "kedi_split": "data",
    }
    assert props["eval:missing"]["kedi_rows"] == "0"


def test_injected_function_model_answers_every_template(kedi: Kedi) -> None:
    kedi.write("model.kedi", MODEL_PROGRAM)
    kedi.pytester.makeconftest(MODEL_CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-model", "openai:gpt-4o")
    result.assert_outcomes(passed=1)
    assert _summary(result) == [
        "models: function:rules (3 calls; pytest_kedi_model hook)",
        "usage: 3 requests, 174 input tokens, 15 output tokens",
        "Evals:",
        "- classify::accuracy: 0.6667  [passed]",
    ]


def test_kedi_model_option_names_the_default_model(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    kedi.write("demo.kedi", DEMO)
    monkeypatch.setenv("KEDI_ADAPTER_MODEL", "anthropic:claude-sonnet-4-0")
    kedi.pytester.makeini("[pytest]\nkedi_model = groq:qwen/qwen3-32b\n")
    result = kedi.run("--kedi-eval", "--kedi-model", "openai:gpt-4o")
    assert _summary(result)[0] == "models: no model calls (default: openai:gpt-4o)"
    assert _summary(kedi.run("--kedi-eval"))[0] == (
        "models: no model calls (default: anthropic:claude-sonnet-4-0)"
    )


@patched_plugin
def test_model_configuration_reaches_the_loader(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_kedi.runtime

    real_load = pytest_kedi.runtime.load
    calls: list[dict[str, object]] = []

    def spy(path: object, **kwargs: object) -> object:
        calls.append(kwargs)
        return real_load(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pytest_kedi.runtime, "load", spy)
    kedi.write("demo.kedi", DEMO)
    monkeypatch.setenv("KEDI_ADAPTER_MODEL", "groq:qwen/qwen3-32b")
    kedi.run("--kedi-eval").assert_outcomes(passed=3)
    kedi.run("--kedi-eval", "--kedi-model", "openai:gpt-4o").assert_outcomes(passed=3)
    kedi.pytester.makeconftest(MODEL_CONFTEST)
    kedi.run("--kedi-eval").assert_outcomes(passed=3)
    assert [(c["mode"], c["default_model"]) for c in calls] == [
        ("validate", "groq:qwen/qwen3-32b"),
        ("validate", "openai:gpt-4o"),
        ("validate", "groq:qwen/qwen3-32b"),
    ]
    assert [type(c["model"]).__name__ for c in calls] == ["NoneType", "NoneType", "FunctionModel"]


@pytest.mark.single_process("compares a single-process run with an -n 2 run itself")
def test_xdist_results_equal_single_process(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    kedi.write("demo.kedi", DEMO.replace('== "GH"', '== "XX"'))
    kedi.write("models/model.kedi", MODEL_PROGRAM)
    kedi.write("models/conftest.py", MODEL_CONFTEST)
    runs = {}
    for workers in (0, 2):
        result = replace(kedi, workers=workers or None).subprocess(
            "--kedi-eval",
            "--kedi-min-score",
            "0.6",
            "--kedi-report",
            f"report-{workers}.json",
            "--kedi-rows-jsonl",
            f"rows-{workers}.jsonl",
            "--junitxml",
            f"junit-{workers}.xml",
        )
        rows = (kedi.pytester.path / f"rows-{workers}.jsonl").read_text(encoding="utf-8")
        runs[workers] = {
            "ret": result.ret,
            "outcomes": result.parseoutcomes(),
            "summary": [line for line in _summary(result) if "report written" not in line],
            "report": without_durations(kedi.json(f"report-{workers}.json")),
            "rows": [without_durations(json.loads(x)) for x in rows.splitlines()],
            "junit": junit_properties(kedi.pytester.path / f"junit-{workers}.xml"),
        }
    assert runs[0]["report"]["suites"], "the single-process run produced no suites"
    assert runs[0] == runs[2]
    # calls are counted where they happen and summed on the controller (issue 7 §4)
    assert runs[2]["summary"][0] == "models: function:rules (3 calls; pytest_kedi_model hook)"
    assert runs[2]["report"]["model_calls"] == {"function:rules": 3}


def test_junit_omits_empty_feedback(kedi: Kedi) -> None:
    """A metric's empty feedback is no feedback: its `Evals:` line shows no ` | ` and
    JUnit leaves `kedi_feedback` out (README), instead of writing it empty."""
    kedi.write(
        "empty.kedi",
        "@eval: e:\n  > data: xs:\n    = `[1]`\n  > metric: m(xs):\n    = `(1.0, '')`\n",
    )
    result = kedi.run("--kedi-eval", "--junitxml", "junit.xml")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["- e::m: 1.0000  *passed*"])
    root = ET.parse(kedi.pytester.path / "junit.xml").getroot()
    (case,) = [case for case in root.iter("testcase") if case.get("name") == "eval:e"]
    names = [p.get("name") for p in case.iter("property")]
    assert "kedi_feedback" not in names and "kedi_score" in names


MULTILINE_FEEDBACK = """
@eval: notes:
  > data: rows:
    = `[1, 2]`
  > metric: m(rows):
    = `(0.5, "first\\n  second\\r\\nthird") if rows == 1 else 1.0`
"""


@pytest.mark.parametrize("verbosity", ["-q", "-v"])
def test_multi_line_feedback_keeps_one_summary_line_per_suite(kedi: Kedi, verbosity: str) -> None:
    """With ``-v`` (feedback not clipped) the suite's line broke at the feedback's newlines,
    as the CLI's ``Evals:`` line did; the report keeps the feedback as written."""
    kedi.write("notes.kedi", MULTILINE_FEEDBACK)
    result = kedi.run("--kedi-eval", verbosity, "--kedi-report", "r.json")
    lines = result.outlines
    assert lines[lines.index("Evals:") + 1] == "- notes::m: 0.7500 | first second third  [passed]"
    (suite,) = kedi.json("r.json")["suites"]
    assert suite["feedback"] == "first\n  second\r\nthird"


def test_junit_feedback_keeps_the_reports_line_breaks(kedi: Kedi) -> None:
    """JUnit's `kedi_feedback` is the feedback as the JSON report has it, line breaks kept
    (README), where the `Evals:` line joins its lines."""
    kedi.write("notes.kedi", MULTILINE_FEEDBACK)
    kedi.run("--kedi-eval", "--junitxml", "junit.xml")
    root = ET.parse(kedi.pytester.path / "junit.xml").getroot()
    (case,) = [case for case in root.iter("testcase") if case.get("name") == "eval:notes"]
    feedback = {p.get("name"): p.get("value") for p in case.iter("property")}["kedi_feedback"]
    assert feedback.replace("\r\n", "\n") == "first\n  second\nthird"


SPACED = """\
@test: spaced:
  > case: message:
    `raise ValueError("a    b")`

@eval: spaced:
  > data: d:
    = `[1]`
  > metric: m(d):
    = `(0.5, "x  y")`
"""


@pytest.mark.parametrize("verbosity", ["", "-v"])
def test_summary_lines_keep_the_spacing_within_a_line(kedi: Kedi, verbosity: str) -> None:
    """At the default verbosity the ``Tests:``/``Evals:`` lines folded every run of spaces
    to one (``'a  b'`` showed as ``'a b'``), unlike ``-v`` and the CLI's lines."""
    kedi.write("spaced.kedi", SPACED)
    result = kedi.run("--kedi-eval", *filter(None, [verbosity]))
    lines = result.outlines
    assert lines[lines.index("Tests:") + 1] == "- spaced::message: FAIL | ValueError: a    b"
    assert lines[lines.index("Evals:") + 1] == "- spaced::m: 0.5000 | x  y  [passed]"


@pytest.mark.parametrize("rows", ["subtests", "summary"])
def test_row_labels_and_lines_keep_the_spacing_within_a_line(kedi: Kedi, rows: str) -> None:
    """A row's feedback keeps its own spacing in its sub-result label and its row lines
    (``-v``, the ``kedi rows`` section) as on the suite's line; only line breaks are joined.
    Its spaces were folded to one (``'x  y'`` showed as ``'x y'``)."""
    kedi.write("spaced.kedi", SPACED.replace('"x  y"', '"x  y\\n  z\\tw"'))
    result = kedi.run("--kedi-eval", "-v", "-rP", "--kedi-rows", rows)
    shown = [line for line in result.outlines if "row 0" in line]
    assert shown, result.outlines
    for line in shown:
        assert "| x  y z\tw" in line, line
    if rows == "subtests":  # the sub-result's label
        assert any("SUBPASSED[row 0: 0.5000 | x  y z\tw]" in line for line in shown), shown
    else:  # the -v line and the kedi rows section
        assert "row 0: score 0.5000 | input 1 | x  y z\tw" in shown, shown
