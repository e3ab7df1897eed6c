"""Which runs write reports and what they say: nothing executed, crashed workers,
interrupted runs, source order, JUnit properties (issue 10 §3, §5, §6; issue 7 §5a, §13)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from kedi_plugin_helpers import DEMO, SUITE_KEYS, TEST_KEYS, Kedi

#: Suites deliberately not in name order: bad, good_after, good_before in source order
#: good_before, bad, good_after.
ORDERED = """\
@same(x: int) -> int:
  = `x`

@eval: good_before:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `same(xs) == expected if False else 1.0`

@test: same:
  > case: zeta:
    `assert same(1) == 1`
  > case: alpha:
    `assert same(2) == 2`

@eval: bad:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `0.0`

@eval: good_after:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `1.0`
"""


def _kedi_section(result: pytest.RunResult) -> list[str]:
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith("=") and " kedi " in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")), len(lines))
    return lines[start + 1 : end]


@pytest.mark.parametrize("verbosity", ["-q", "-v"])
def test_summary_and_report_follow_the_source(kedi: Kedi, verbosity: str) -> None:
    kedi.write("b.kedi", ORDERED)
    kedi.write("a.kedi", DEMO)
    result = kedi.subprocess("--kedi-eval", verbosity, "--kedi-report", "r.json")
    names = [line[2:].split(": ", 1)[0] for line in _kedi_section(result) if line[:2] == "- "]
    assert names == [
        "initials::two_words",
        "initials::padded",
        "same::zeta",
        "same::alpha",
        "initials::exact",
        "good_before::m",
        "bad::m",
        "good_after::m",
    ]
    report = kedi.json("r.json")
    assert [s["nodeid"] for s in report["suites"]] == [
        "a.kedi::eval:initials",
        "b.kedi::eval:good_before",
        "b.kedi::eval:bad",
        "b.kedi::eval:good_after",
    ]
    assert [t["nodeid"].rsplit("::", 1)[1] for t in report["tests"]] == [
        "two_words",
        "padded",
        "zeta",
        "alpha",
    ]


@pytest.mark.parametrize(
    "args",
    [("--collect-only",), ("-k", "not kedi"), ("--deselect", "demo.kedi")],
    ids=["collect-only", "keyword", "deselect"],
)
def test_runs_that_executed_nothing_leave_reports_untouched(
    kedi: Kedi, args: tuple[str, ...]
) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("test_plain.py", "def test_ok():\n    pass\n")
    report = kedi.write("r.json", "previous report\n")
    rows = kedi.write("rows.jsonl", "previous rows\n")
    result = kedi.run(
        "--kedi-eval", "--kedi-report", "r.json", "--kedi-rows-jsonl", "rows.jsonl", *args
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    assert report.read_text("utf-8") == "previous report\n"
    assert rows.read_text("utf-8") == "previous rows\n"
    result.stdout.fnmatch_lines(["kedi report not written (no Kedi item ran): *r.json"])
    kedi.run("--kedi-eval", "--kedi-report", "new.json", *args)
    assert not (kedi.pytester.path / "new.json").exists()
    # the views too: only the JSON ones were announced, and the views alone said nothing
    page, summary = kedi.write("r.html", "old page\n"), kedi.write("r.md", "old summary\n")
    result = kedi.run("--kedi-eval", "--kedi-html", "r.html", "--kedi-markdown", "r.md", *args)
    assert (page.read_text("utf-8"), summary.read_text("utf-8")) == ("old page\n", "old summary\n")
    result.stdout.fnmatch_lines(
        [
            "kedi report not written (no Kedi item ran): *r.html",
            "kedi report not written (no Kedi item ran): *r.md",
        ]
    )


CRASHING = """\
@boom(x: int) -> int:
  = `__import__("os")._exit(1) if x == 2 else x`

@eval: boom:
  > data: xs:
    = `[1, 2]`
  > metric: m(xs):
    = `boom(xs) == expected`

@test: boom:
  > case: dies:
    `boom(2)`
"""


@pytest.mark.xdist_only("only an xdist worker can crash and leave the run going")
def test_crashed_worker_items_appear_in_summary_and_report(kedi: Kedi) -> None:
    kedi.write("crash.kedi", CRASHING)
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(passed=3, failed=2)
    report = kedi.json("r.json")
    suites = {s["nodeid"]: s for s in report["suites"]}
    crashed = suites["crash.kedi::eval:boom"]
    assert tuple(crashed) == SUITE_KEYS
    assert (crashed["outcome"], crashed["line"], crashed["metric"], crashed["dataset"]) == (
        "failed",
        4,
        "m",
        "xs",
    )
    assert "crashed while running 'crash.kedi::eval:boom'" in crashed["error"]
    assert suites["demo.kedi::eval:initials"]["outcome"] == "passed"
    tests = {t["nodeid"]: t for t in report["tests"]}
    case = tests["crash.kedi::test:boom::dies"]
    assert tuple(case) == TEST_KEYS
    assert (case["outcome"], case["line"], case["procedure"], case["case"]) == (
        "failed",
        11,
        "boom",
        "dies",
    )
    assert "crashed while running" in case["message"]
    section = _kedi_section(result)
    assert any(line.startswith("- boom::m: ERROR | worker ") for line in section), section
    assert any(line.startswith("- boom::dies: FAIL | worker ") for line in section), section


INTERRUPTING = """\
```
import signal  # a terminal's Ctrl-C, even when this test runs as a background job
signal.signal(signal.SIGINT, signal.default_int_handler)
```

@stop(x: int) -> int:
  = `__import__("os").kill(__import__("os").getpid(), __import__("signal").{signal}) or x`

@eval: stop:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `stop(xs) == expected`
"""


@pytest.mark.single_process("the signal would stop one xdist worker, not the run")
@pytest.mark.parametrize("signal", ["SIGTERM", "SIGINT"])
def test_interrupted_run_writes_what_finished_and_says_so(kedi: Kedi, signal: str) -> None:
    kedi.write("a_first.kedi", DEMO)
    kedi.write("b_stop.kedi", INTERRUPTING.format(signal=signal))
    result = kedi.subprocess(
        "--kedi-eval", "--kedi-report", "r.json", "--kedi-rows-jsonl", "rows.jsonl"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = kedi.json("r.json")
    assert (report["version"], report["interrupted"], report["exitstatus"]) == (3, True, 2)
    assert [s["nodeid"] for s in report["suites"]] == ["a_first.kedi::eval:initials"]
    assert len(report["tests"]) == 2
    assert (kedi.pytester.path / "rows.jsonl").read_text("utf-8").count("\n") == 3


@pytest.mark.single_process("the signal would stop one xdist worker, not the run")
def test_a_run_interrupted_in_its_first_suite_writes_its_reports(kedi: Kedi) -> None:
    """Before: ``kedi report not written (no Kedi item ran)`` when Ctrl-C or SIGTERM (a
    cancelled CI job) stopped the run inside its first Kedi item, and the previous run's
    report stayed in place, to be uploaded as this run's."""
    kedi.write("b_stop.kedi", INTERRUPTING.format(signal="SIGTERM"))
    (kedi.pytester.path / "r.json").write_text('{"stale": true}', encoding="utf-8")
    result = kedi.subprocess("--kedi-eval", "--kedi-report", "r.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["kedi report written: *r.json"])
    result.stdout.no_fnmatch_line("*no Kedi item ran*")
    report = kedi.json("r.json")
    assert (report["interrupted"], report["exitstatus"], report["tests"]) == (True, 2, [])


def test_a_metric_raising_keyboardinterrupt_in_the_only_suite_writes_the_reports(
    kedi: Kedi,
) -> None:
    """Before (single process): the interrupted run left an older report untouched."""
    kedi.write(
        "stop.kedi",
        "@eval: stop:\n  > data: xs:\n    = `[1, 2]`\n  > metric: m(xs):\n"
        "    = `(_ for _ in ()).throw(KeyboardInterrupt)`\n",
    )
    (kedi.pytester.path / "r.json").write_text('{"stale": true}', encoding="utf-8")
    result = kedi.subprocess("--kedi-eval", "--kedi-report", "r.json")  # (it interrupts)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = kedi.json("r.json")
    assert (report["version"], report["interrupted"], report["exitstatus"]) == (3, True, 2)


def test_a_run_that_x_stopped_is_not_marked_interrupted(kedi: Kedi) -> None:
    """Under pytest-xdist, ``-x`` ends the run with pytest's INTERRUPTED status; the report
    said ``"interrupted": true``, which means Ctrl-C or SIGTERM (false under ``-n 0``)."""
    kedi.write(
        "fails.kedi",
        "@test: t:\n  > case: a:\n    `assert False`\n  > case: b:\n    `assert False`\n",
    )
    kedi.run("--kedi-eval", "-x", "--kedi-report", "r.json")
    assert kedi.json("r.json")["interrupted"] is False


THREE_SUITES = """\
@eval: first:
  > data: xs:
    = `[2, 3]`
  > metric: m(xs):
    = `xs % 2 == 0`

@eval: second:
  > data: xs:
    = `[2, 4]`
  > metric: m(xs):
    = `xs % 2 == 0`

@eval: third:
  > data: xs:
    = `[2, 4]`
  > metric: m(xs):
    = `xs % 2 == 0`
"""


def test_a_run_that_x_stopped_says_so_in_every_report(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-x`` left the reports with ``exitstatus`` 1 (2 under xdist), ``interrupted`` false
    and the suites that never ran missing: nothing told a reader, or ``merge``, that the
    run was cut short. The report's ``stopped`` now says what pytest printed."""
    from pytest_kedi import cli

    kedi.write("three.kedi", THREE_SUITES)
    args = ("--kedi-eval", "-x", "--kedi-min-score", "0.9", "--kedi-report", "r.json")
    result = kedi.run(*args, "--kedi-markdown", "r.md", "--kedi-html", "r.html")
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])
    report = kedi.json("r.json")
    assert (report["interrupted"], report["stopped"]) == (False, "stopping after 1 failures")
    ran = [s["nodeid"] for s in report["suites"]]
    assert ran[0] == "three.kedi::eval:first" and len(ran) < 3
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert "⚠️ The run stopped early (stopping after 1 failures): not every item ran." in markdown
    page = (kedi.pytester.path / "r.html").read_text(encoding="utf-8")
    assert "The run stopped early (stopping after 1 failures): not every item ran." in page
    capsys.readouterr()
    path = kedi.pytester.path / "r.json"
    assert cli.main(["merge", str(path)], prog="pytest-kedi") == report["exitstatus"]
    assert f"kedi: {path}: the shard's pytest run stopped early (stopping after 1 failures)" in (
        capsys.readouterr().out
    )


def test_a_run_that_runs_to_its_end_was_not_stopped(kedi: Kedi) -> None:
    kedi.write("three.kedi", THREE_SUITES)
    kedi.run("--kedi-eval", "--maxfail=2", "--kedi-min-score", "0.9", "--kedi-report", "r.json")
    report = kedi.json("r.json")
    assert (report["interrupted"], report["stopped"], len(report["suites"])) == (False, None, 3)


def test_a_run_stepwise_stopped_is_stopped_not_interrupted(kedi: Kedi) -> None:
    """``--stepwise`` stops a run with pytest's status 2: without xdist the report said
    ``"interrupted": true`` (Ctrl-C or SIGTERM), under xdist false."""
    kedi.write("three.kedi", THREE_SUITES)
    kedi.run("--kedi-eval", "--sw", "--kedi-min-score", "0.9", "--kedi-report", "r.json")
    report = kedi.json("r.json")
    assert (report["interrupted"], report["exitstatus"]) == (False, 2)
    assert report["stopped"] == "Test failed, continuing from this test next run."


def _properties(path: object) -> dict[str, list[tuple[str, str]]]:
    root = ET.parse(str(path)).getroot()
    return {
        str(case.get("name")): [
            (str(p.get("name")), str(p.get("value"))) for p in case.iter("property")
        ]
        for case in root.iter("testcase")
    }


def test_junit_omits_unset_threshold(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.run("--kedi-eval", "--junitxml", "junit.xml")
    names = [name for name, _ in _properties(kedi.pytester.path / "junit.xml")["eval:initials"]]
    assert names == ["kedi_score", "kedi_rows", "kedi_errors", "kedi_split"]


def test_junit_properties_are_not_duplicated_by_reruns(kedi: Kedi) -> None:
    pytest.importorskip("pytest_rerunfailures")
    kedi.write("demo.kedi", DEMO)
    result = kedi.run(
        "-p",
        "pytest_rerunfailures",
        "--reruns",
        "2",
        "--kedi-eval",
        "--kedi-min-score",
        "0.9",
        "--junitxml",
        "junit.xml",
    )
    assert result.parseoutcomes() == {"passed": 2, "failed": 1, "rerun": 2}
    props = _properties(kedi.pytester.path / "junit.xml")["eval:initials"]
    assert props == [
        ("kedi_score", "0.6666666666666666"),
        ("kedi_threshold", "0.9"),
        ("kedi_rows", "3"),
        ("kedi_errors", "0"),
        ("kedi_split", "data"),
    ]
