"""--kedi-repeat, the suite's confidence interval, --kedi-gate and flaky rows, as a user sees
them: terminal summary, failure text, row sub-results and the JSON report."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import DEMO, FLIP, Kedi


def test_repeats_score_row_means_and_list_flaky_rows(kedi: Kedi) -> None:
    kedi.write("flip.kedi", FLIP)
    result = kedi.run(
        "--kedi-eval", "--kedi-repeat", "3", "--kedi-rows", "summary", "--kedi-report", "r.json"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "Evals:",
            "- flip::m: 0.9167  (95% CI [0.6515, 1.1819], 3 repeats)  [passed]",
            "    flaky rows (1 of 4): row 1 [1, 0, 1]",
        ]
    )
    suite = kedi.json("r.json")["suites"][0]
    assert kedi.json("r.json")["version"] == 3
    assert (suite["repeats"], suite["gate"], suite["rerun"]) == (3, "mean", None)
    assert suite["score"] == pytest.approx(11 / 12)
    assert suite["stderr"] == pytest.approx(1 / 12)
    assert suite["ci"] == {
        "low": pytest.approx(0.65146, abs=1e-4),
        "high": pytest.approx(1.18195, abs=1e-4),
    }
    rows = suite["rows"]
    assert [row["scores"] for row in rows] == [[1.0] * 3, [1.0, 0.0, 1.0], [1.0] * 3, [1.0] * 3]
    assert [row["flaky"] for row in rows] == [False, True, False, False]
    assert rows[1]["score"] == pytest.approx(2 / 3)


def test_repeats_report_one_sub_result_per_row(kedi: Kedi) -> None:
    kedi.write("flip.kedi", FLIP)
    result = kedi.run("--kedi-eval", "-v", "--kedi-repeat", "2", "--kedi-rows", "subtests")
    assert "SUBPASSED[row 1: 0.5000 [1, 0]]" in result.stdout.str()
    assert result.stdout.str().count("SUBPASSED") == 4


@pytest.mark.parametrize(
    ("gate", "passed"), [("mean", True), ("lower", False)], ids=["mean", "lower"]
)
def test_gate_chooses_mean_or_lower_bound(kedi: Kedi, gate: str, passed: bool) -> None:
    kedi.write("flip.kedi", FLIP)
    result = kedi.run(
        "--kedi-eval", "--kedi-repeat", "3", "--kedi-min-score", "0.8", "--kedi-gate", gate
    )
    if passed:
        result.assert_outcomes(passed=1)
        return
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "flip.kedi:5: @eval: flip failed: lower bound 0.6515 of the 95% confidence "
            "interval is below the min score 0.8000 (mean 0.9167)",
            "metric m, dataset xs (data): score 0.9167 vs min score 0.8000; "
            "95% CI [0.6515, 1.1819], 3 repeats; the min score applies to the lower bound",
        ]
    )
    result.stdout.fnmatch_lines(
        ["- flip::m: 0.9167  (95% CI [0.6515, 1.1819], 3 repeats)  "
         "[FAILED, min score 0.8000 on the lower bound]"]
    )  # fmt: skip


def test_gate_from_environment_and_ini(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    kedi.write("flip.kedi", FLIP)
    kedi.write("pytest.ini", "[pytest]\nkedi_repeat = 3\nkedi_min_score = 0.8\n")
    monkeypatch.setenv("KEDI_GATE", "lower")
    kedi.run("--kedi-eval").assert_outcomes(failed=1)
    monkeypatch.setenv("KEDI_GATE", "middle")
    result = kedi.run("--kedi-eval")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*KEDI_GATE (environment): expected one of mean, lower, got 'middle'"]
    )


def test_lower_gate_with_one_repeat_uses_the_interval_over_rows(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)  # rows 1, 1, 0: mean 0.6667, lower bound below 0
    result = kedi.run("--kedi-eval", "--kedi-min-score", "0.5", "--kedi-gate", "lower")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*lower bound -0.7676 of the 95% confidence interval*"])


def test_lower_gate_without_an_interval_gates_the_mean(kedi: Kedi) -> None:
    kedi.write(
        "one.kedi",
        "@eval: one:\n  > data: xs:\n    = `[1]`\n  > metric: m(xs):\n    = `0.5`\n",
    )
    result = kedi.run("--kedi-eval", "--kedi-min-score", "0.6", "--kedi-gate", "lower")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*score 0.5000 is below the min score 0.6000 (no confidence interval with fewer "
         "than 2 rows: the mean is gated)"]
    )  # fmt: skip


def test_one_repeat_keeps_the_summary_as_it_was(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.stdout.fnmatch_lines(["- initials::exact: 0.6667  [passed]"])
    assert "flaky" not in result.stdout.str() and "CI" not in result.stdout.str()
    suite = kedi.json("r.json")["suites"][0]
    assert (suite["repeats"], suite["gate"]) == (1, "mean")
    assert suite["ci"]["low"] == pytest.approx(2 / 3 - 4.302652729749464 / 3)
    assert [row["scores"] for row in suite["rows"]] == [[1.0], [1.0], [0.0]]


def test_a_skipped_suite_reports_the_gate_in_force(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.run("-o", "kedi_collect=true", "--kedi-gate", "lower", "--kedi-report", "r.json")
    suite = kedi.json("r.json")["suites"][0]
    assert (suite["outcome"], suite["gate"], suite["ci"], suite["repeats"]) == (
        "skipped", "lower", None, 1,
    )  # fmt: skip
