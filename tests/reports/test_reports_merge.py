"""``pytest-kedi merge`` (issue 11 §6): sharded reports merged by node id, disagreeing
overlaps refused, the recorded gates re-applied, one summary and one exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from report_docs import case, record, row, run, save, suite

from pytest_kedi import cli
from pytest_kedi.plugin.records import SuiteRecord
from pytest_kedi.reports.load import read_run
from pytest_kedi.reports.merge import Shard, merge, suite_reason

A, B = "a.kedi::eval:alpha", "b.kedi::eval:beta"
CASE = "a.kedi::test:alpha::works"


def _merge(tmp_path: Path, *documents: dict[str, Any]) -> Any:
    shards = []
    for number, document in enumerate(documents):
        path = save(tmp_path / f"shard{number}.json", document)
        shards.append(Shard(path, read_run(path)))
    return merge(shards)


def test_disjoint_shards_merge_into_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = save(tmp_path / "one.json", run([suite(B, 0.9)], [case(CASE)], model_calls={"m": 2}))
    two = save(
        tmp_path / "two.json", run([suite(A, 0.75, [row(0, "'a'", 0.75)])], model_calls={"m": 3})
    )
    out = tmp_path / "all.json"
    assert cli.main(["merge", one, two, "-o", str(out)], prog="pytest-kedi") == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{' kedi ':=^80}",
        "merged 2 reports",
        "models: m (5 calls)",
        "Tests:",
        "- alpha::works: OK",
        "Evals:",
        "- alpha::m: 0.7500  [passed]",
        "- beta::m: 0.9000  [passed]",
        f"kedi report written: {out}",
    ]
    merged = json.loads(out.read_text(encoding="utf-8"))
    assert (
        merged["version"] == 3 and merged["exitstatus"] == 0 and merged["model_calls"] == {"m": 5}
    )
    assert [s["nodeid"] for s in merged["suites"]] == [A, B]
    assert [t["nodeid"] for t in merged["tests"]] == [CASE]
    assert read_run(out).to_json() == merged  # the merged report is a report


def test_identical_overlaps_are_fine_durations_aside(tmp_path: Path) -> None:
    first = suite(A, 0.5, [row(0, "'a'", 0.5)])
    second = {**first, "duration_s": 9.0, "rows": [row(0, "'a'", 0.5, duration_s=3.0)]}
    merged = _merge(tmp_path, run([first]), run([second]))
    assert [s.nodeid for s in merged.run.suites] == [A] and merged.exitstatus == 0


def test_disagreeing_overlaps_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = save(tmp_path / "one.json", run([suite(A, 0.5)]))
    two = save(tmp_path / "two.json", run([suite(A, 0.75)]))
    assert cli.main(["merge", one, two], prog="pytest-kedi") == 2
    assert capsys.readouterr().err == (
        f"pytest-kedi merge: error: {A} is in {one} and {two} with different results "
        "(score: 0.5 vs 0.75); merge reports of disjoint shards\n"
    )


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({"threshold": 0.8}, "score 0.7500 is below the min score 0.8000"),
        (
            {"max_errors": 1, "rows_errored": 2, "rows_total": 4},
            "2 of 4 rows errored; at most 1 errored row allowed",
        ),
        (
            {"max_errors": 0.25, "rows_errored": 2, "rows_total": 4},
            "2 of 4 rows errored; at most 0.25 of the rows errored allowed",
        ),
        ({"outcome": "failed"}, "failed in its shard"),
        (  # as many digits as tell the score from its threshold, as pytest showed it
            {"threshold": 0.75001},
            "score 0.75000 is below the min score 0.75001",
        ),
        (
            {"outcome": "failed", "error": "boom\nValueError: bad data"},
            "failed before scoring: ValueError: bad data",
        ),
    ],
)
def test_recorded_gates_are_reapplied(tmp_path: Path, over: dict[str, Any], reason: str) -> None:
    merged = _merge(tmp_path, run([suite(A, 0.75, **over)]), run([suite(B, 1.0, threshold=0.8)]))
    assert merged.failures == ((A, reason),)
    assert merged.exitstatus == 1
    assert [s.outcome for s in merged.run.suites] == ["failed", "passed"]


@pytest.mark.parametrize(
    "over",
    [
        {"threshold": 0.75},
        {"max_errors": 2, "rows_errored": 2, "rows_total": 4},
        {"outcome": "skipped", "threshold": 0.9, "rows_errored": 9, "max_errors": 0},
    ],
)
def test_passing_gates_pass(tmp_path: Path, over: dict[str, Any]) -> None:
    merged = _merge(tmp_path, run([suite(A, 0.75, **over)]))
    assert (merged.failures, merged.exitstatus) == ((), 0)


class _Gated(SuiteRecord):
    """A suite record whose JSON form has the repeats' ``gate`` and ``ci``."""

    gate: str
    ci: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {**SuiteRecord.to_json(self), "gate": self.gate, "ci": self.ci}


@pytest.mark.parametrize(
    ("gate", "low", "reason"),
    [
        ("lower", 0.6, "the score's lower confidence bound 0.6000 is below the min score 0.7000"),
        ("lower", 0.7, None),
        ("mean", 0.6, None),  # the mean 0.75 is gated, not the interval
    ],
)
def test_the_lower_bound_gate_is_reapplied(gate: str, low: float, reason: str | None) -> None:
    base = record(suite(A, 0.75, threshold=0.7))
    gated = _Gated(base.nodeid, base.line, base.result, base.threshold, base.outcome)
    object.__setattr__(gated, "gate", gate)  # a frozen record: set once, here
    object.__setattr__(gated, "ci", {"low": low, "high": 0.9})
    assert suite_reason(gated) == reason


def test_a_failed_case_fails_the_merge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = case(CASE, "failed", "AssertionError: assert 1 == 2")
    path = save(
        tmp_path / "one.json", run([], [failed, case("a.kedi::test:alpha::skips", "skipped")])
    )
    assert cli.main(["merge", path], prog="pytest-kedi") == 1
    out = capsys.readouterr().out.splitlines()
    assert "- alpha::works: FAIL | AssertionError: assert 1 == 2" in out
    assert f"FAILED {CASE}: AssertionError: assert 1 == 2" in out


def test_shard_exit_statuses_count(tmp_path: Path) -> None:
    python_failed = run([suite(A, 1.0)], exitstatus=1)  # a Python test failed in that shard
    merged = _merge(tmp_path, python_failed, run([suite(B, 1.0)]))
    assert merged.exitstatus == 1
    assert merged.notes == (
        f"{tmp_path / 'shard0.json'}: the shard's pytest run ended with exit status 1",
    )
    interrupted = _merge(tmp_path, run([suite(A, 1.0)], interrupted=True, exitstatus=2))
    assert interrupted.exitstatus == 2 and interrupted.run.interrupted
    assert interrupted.notes == (f"{tmp_path / 'shard0.json'}: the shard's run was interrupted",)


def test_a_shard_stopped_by_maxfail_under_xdist_is_named(tmp_path: Path) -> None:
    """pytest-xdist ends a run ``-x`` stopped with status 2, not interrupted: the merge
    exited 2 without a word on which shard ended so."""
    stopped = run([suite(A, 0.0, outcome="failed")], exitstatus=2)
    merged = _merge(tmp_path, stopped, run([suite(B, 1.0)]))
    assert merged.exitstatus == 2 and not merged.run.interrupted
    assert merged.notes == (
        f"{tmp_path / 'shard0.json'}: the shard's pytest run ended with exit status 2",
    )


def test_a_shard_that_x_stopped_says_so_though_it_exited_1(tmp_path: Path) -> None:
    """Without xdist, ``-x`` ends a run with status 1, as a failure does: the merge did not
    say that the shard's later items never ran, and the merged report could not tell."""
    stopped = run(
        [suite(A, 0.0, outcome="failed")], exitstatus=1, stopped="stopping after 1 failures"
    )
    merged = _merge(tmp_path, stopped, run([suite(B, 1.0)]))
    assert merged.exitstatus == 1 and not merged.run.interrupted
    shard = tmp_path / "shard0.json"
    assert merged.notes == (
        f"{shard}: the shard's pytest run stopped early (stopping after 1 failures), with "
        "exit status 1: not every item ran",
    )
    assert merged.run.to_json()["stopped"] == f"{shard}: stopping after 1 failures"
    assert _merge(tmp_path, run([suite(B, 1.0)])).run.to_json()["stopped"] is None


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 3}', encoding="utf-8")
    assert cli.main(["merge", str(bad)], prog="pytest-kedi") == 2
    assert capsys.readouterr().err == (
        f"pytest-kedi merge: error: {bad}: not a pytest-kedi JSON report (--kedi-report)\n"
    )
    assert cli.main(["merge"], prog="pytest-kedi") == 2


@pytest.mark.parametrize("constant", ["Infinity", "NaN", "-Infinity"])
@pytest.mark.parametrize("command", ["merge", "compare", "html"])
def test_non_finite_numbers_in_a_report_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, constant: str
) -> None:
    """Python's JSON reader takes them; `int(Infinity)` was an OverflowError traceback."""
    bad = tmp_path / "bad.json"
    head = '{"version": 3, "interrupted": false, "model_calls": {}, "suites": [], "tests": [], '
    bad.write_text(head + f'"exitstatus": {constant}}}', encoding="utf-8")
    args = {"merge": [str(bad)], "compare": [str(bad), str(bad)]}.get(
        command, [str(bad), "-o", str(tmp_path / "out.html")]
    )
    assert cli.main([command, *args], prog="pytest-kedi") in (1, 2)
    err = capsys.readouterr().err
    assert f"{constant} is not a JSON number" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["merge", "compare", "html"])
def test_a_report_nested_too_deeply_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """JSON arrays nested 100,000 deep ended in a `RecursionError` traceback (exit 1; under
    ``--kedi-baseline`` an INTERNALERROR)."""
    bad = tmp_path / "bad.json"
    bad.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    args = {"merge": [str(bad)], "compare": [str(bad), str(bad)]}.get(
        command, [str(bad), "-o", str(tmp_path / "out.html")]
    )
    assert cli.main([command, *args], prog="pytest-kedi") == 2
    err = capsys.readouterr().err
    assert "JSON nested too deeply" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_report_given_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its model calls (and usage) counted twice: `merged 2 reports`, 28 calls for 14."""
    path = save(tmp_path / "one.json", run([suite(A, 1.0)]))
    (tmp_path / "alias.json").symlink_to("one.json")
    for second in (path, str(tmp_path / "alias.json")):
        assert cli.main(["merge", path, second], prog="pytest-kedi") == 2
        assert capsys.readouterr().err == f"pytest-kedi merge: error: {second} is given twice\n"


def test_a_merge_without_model_calls_says_so_as_a_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = save(tmp_path / "one.json", run([suite(B, 0.9)]))
    assert cli.main(["merge", one], prog="pytest-kedi") == 0
    assert capsys.readouterr().out.splitlines()[:3] == [
        f"{' kedi ':=^80}",
        "merged 1 report",
        "models: no model calls",
    ]


def test_a_shard_inside_another_adds_no_model_calls(tmp_path: Path) -> None:
    """Merging a `-k` selection with a run that holds it (or one report twice) summed their
    model calls (20 for a union that one run makes in 12) while deduplicating the suites."""
    inner = run([suite(A, 0.5, [row(0, "'a'", 0.5)])], model_calls={"m": 8})
    outer = run([suite(A, 0.5, [row(0, "'a'", 0.5)]), suite(B, 0.9)], model_calls={"m": 12})
    assert dict(_merge(tmp_path, inner, outer).run.model_calls) == {"m": 12}
    assert dict(_merge(tmp_path, outer, outer).run.model_calls) == {"m": 12}
    disjoint = run([suite(B, 0.9)], model_calls={"m": 4})
    assert dict(_merge(tmp_path, inner, disjoint).run.model_calls) == {"m": 12}


def test_a_shards_usage_or_internal_error_outranks_the_failures_it_lists(tmp_path: Path) -> None:
    """pytest ends a run with a usage error (4) or an internal error (3) in that status
    whatever failed; ``merge`` said 1 as soon as a suite failed (and 4 when none did)."""
    failed = suite(A, 0.5, threshold=0.9)
    usage = _merge(tmp_path, run([failed], exitstatus=4), run([suite(B, 1.0)]))
    assert usage.exitstatus == 4
    assert usage.notes == (
        f"{tmp_path / 'shard0.json'}: the shard's pytest run ended with exit status 4",
    )
    assert [nodeid for nodeid, _ in usage.failures] == [A]
    plain = _merge(tmp_path, run([failed], exitstatus=1), run([suite(B, 1.0)]))
    assert (plain.exitstatus, plain.notes) == (1, ())
