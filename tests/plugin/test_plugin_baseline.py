"""``--kedi-baseline`` and ``--kedi-max-drop`` (issue 11 §3): the ``kedi`` section's
comparison, the gate's failure, the report's deltas and the usage errors."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

#: Three rows; the second run changes the expected answers (ROWS_AFTER).
ROWS_BEFORE = '[("ada lovelace", "AL"), ("alan turing", "AT"), ("x y", "XX")]'
ROWS_AFTER = '[("ada lovelace", "AB"), ("alan turing", "AX"), ("x y", "XY")]'
SUITES = """\
@initials(name: str) -> str:
  = `"".join(w[0].upper() for w in name.split())`

@eval: initials:
  > data: people:
    = `{rows}`
  > metric: exact(people):
    = `initials(people) == expected`

@eval: {other}:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `1.0`
"""


def _baseline(kedi: Kedi) -> None:
    kedi.write("a.kedi", SUITES.format(rows=ROWS_BEFORE, other="steady"))
    kedi.run("--kedi-eval", "--kedi-report", "old.json").assert_outcomes(passed=2)
    kedi.write("a.kedi", SUITES.format(rows=ROWS_AFTER, other="fresh"))


def test_deltas_rows_and_the_max_drop(kedi: Kedi) -> None:
    _baseline(kedi)
    result = kedi.run(
        "--kedi-eval", "--kedi-baseline", "old.json", "--kedi-max-drop", "0.25",
        "--kedi-report", "new.json",
    )  # fmt: skip
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*a.kedi:4: @eval: initials failed: score fell from 0.6667 (baseline) to 0.3333, "
            "a drop of 0.3333; the max drop is 0.2500",
            "Baseline old.json: 1 suite compared, 1 new, 1 only in the baseline",
            "- initials::exact: 0.6667 -> 0.3333 (-0.3333)  [[]FAILED, dropped more than 0.2500]",
            "    regressed rows (2):",
            "      row 0 input 'ada lovelace': 1.0000 -> 0.0000",
            "      row 1 input 'alan turing': 1.0000 -> 0.0000",
            "    improved rows (1):",
            "      row 2 input 'x y': 0.0000 -> 1.0000",
            "- fresh::m: 1.0000 (new: not in the baseline)",
            "- steady::m: only in the baseline (1.0000)",
        ]
    )
    report = kedi.json("new.json")
    assert report["version"] == 3
    initials, fresh = report["suites"]
    assert (initials["outcome"], initials["baseline_score"]) == ("failed", pytest.approx(2 / 3))
    assert initials["delta"] == pytest.approx(-1 / 3)
    assert [(r["delta"], r["regressed"]) for r in initials["rows"]] == [
        (-1.0, True),
        (-1.0, True),
        (1.0, False),
    ]
    assert (fresh["baseline_score"], fresh["delta"], fresh["rows"][0]["delta"]) == (None,) * 3


def test_the_evals_line_says_a_suite_failed_its_max_drop(kedi: Kedi) -> None:
    """A suite the max drop failed said only ``[FAILED]`` on its ``Evals:`` line (and
    ``[FAILED, min score 0.1000]`` with a min score it met, as if that failed it); the line
    names the max drop, as for a min score or an error budget, and as the comparison does."""
    _baseline(kedi)
    result = kedi.run(
        "--kedi-eval", "--kedi-baseline", "old.json", "--kedi-max-drop", "0.25",
        "--kedi-min-score", "0.1",
    )  # fmt: skip
    result.assert_outcomes(failed=1, passed=1)
    lines = result.outlines
    evals = lines[lines.index("Evals:") + 1 : lines.index("Evals:") + 3]
    assert evals == [
        "- initials::exact: 0.3333  [FAILED, min score 0.1000, dropped more than 0.2500]",
        "- fresh::m: 1.0000  [passed, min score 0.1000]",
    ]


def test_an_ini_baseline_is_relative_to_the_ini_file(kedi: Kedi) -> None:
    """README (Markdown summary for CI): ``kedi_baseline`` from the ini file is relative to
    the ini file's directory, as ``kedi_html`` is, not to where pytest runs."""
    _baseline(kedi)
    (kedi.pytester.path / "conf").mkdir()
    (kedi.pytester.path / "old.json").rename(kedi.pytester.path / "conf" / "old.json")
    kedi.write("conf/pytest.ini", "[pytest]\nkedi_baseline = old.json\n")
    result = kedi.run("--kedi-eval", "-c", "conf/pytest.ini", "--rootdir", ".")
    result.stdout.fnmatch_lines(["Baseline *old.json: 1 suite compared, 1 new, *"])


def test_a_drop_within_the_max_passes(kedi: Kedi) -> None:
    _baseline(kedi)
    result = kedi.run("--kedi-eval", "--kedi-baseline", "old.json", "--kedi-max-drop", "0.5")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["- initials::exact: 0.6667 -> 0.3333 (-0.3333)"])


def test_baseline_from_the_environment_and_ini(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    _baseline(kedi)
    kedi.write("pytest.ini", "[pytest]\nkedi_baseline = old.json\n")
    monkeypatch.setenv("KEDI_MAX_DROP", "0.1")
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        ["Baseline old.json: 1 suite compared, 1 new, 1 only in the baseline"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--kedi-baseline", "missing.json"),
            "ERROR: kedi baseline: *missing.json: no such file",
        ),
        (
            ("--kedi-baseline", "a.kedi"),
            "ERROR: kedi baseline: *a.kedi:1:1: not valid JSON: Expecting value",
        ),
        (
            ("--kedi-max-drop", "0.1"),
            "ERROR: kedi_max_drop needs a baseline to compare with: pass --kedi-baseline PATH "
            "(env KEDI_BASELINE, ini kedi_baseline)",
        ),
        (
            ("--kedi-baseline", "a.kedi", "--kedi-max-drop", "2"),
            "ERROR: --kedi-max-drop (command line): expected a score drop from 0 to 1, got '2'",
        ),
    ],
)
def test_usage_errors(kedi: Kedi, args: tuple[str, ...], message: str) -> None:
    kedi.write("a.kedi", SUITES.format(rows=ROWS_BEFORE, other="steady"))
    result = kedi.run("--kedi-eval", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


def test_sharded_reports_merge_into_the_unsharded_verdict(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    from kedi_plugin_helpers import without_durations

    from pytest_kedi import cli

    kedi.write("a.kedi", SUITES.format(rows=ROWS_BEFORE, other="steady"))
    gate = ("--kedi-eval", "--kedi-min-score", "0.8", "--kedi-max-errors", "1")
    kedi.run(*gate, "a.kedi::eval:initials", "--kedi-report", "s1.json").assert_outcomes(failed=1)
    kedi.run(*gate, "a.kedi::eval:steady", "--kedi-report", "s2.json").assert_outcomes(passed=1)
    kedi.run(*gate, "--kedi-report", "full.json").assert_outcomes(failed=1, passed=1)
    paths = [str(kedi.pytester.path / name) for name in ("s1.json", "s2.json", "all.json")]
    status = cli.main(["merge", paths[0], paths[1], "-o", paths[2]], prog="pytest-kedi")
    assert status == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-5:] == [
        "Evals:",
        "- initials::exact: 0.6667  [FAILED, min score 0.8000]",
        "- steady::m: 1.0000  [passed, min score 0.8000]",
        "FAILED a.kedi::eval:initials: score 0.6667 is below the min score 0.8000",
        f"kedi report written: {paths[2]}",
    ]
    merged, full = kedi.json("all.json"), kedi.json("full.json")
    assert without_durations(merged["suites"]) == without_durations(full["suites"])
    assert merged["suites"][0]["max_errors"] == 1
    assert merged["exitstatus"] == full["exitstatus"] == 1
