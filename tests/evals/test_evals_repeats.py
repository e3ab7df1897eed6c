"""Repeats, per-row and per-suite statistics, and carrying rows over from an earlier run."""

from __future__ import annotations

import math
import statistics
import threading
from typing import Any

import pytest
from kedi_evals_fakes import FakeProgram, make_suite

from pytest_kedi.evals import EvalOptions, RowResult, SuiteResult, run_suite
from pytest_kedi.evals.stats import suite_stats, t_cdf, t_quantile
from pytest_kedi.runtime import cancel, rowscope

# Student's t quantiles t(0.975, df) (R: qt(0.975, df); SciPy: t.ppf(0.975, df)).
T975 = {
    1: 12.706204736174707,
    2: 4.302652729749464,
    3: 3.182446305284263,
    4: 2.7764451051977934,
    9: 2.2621571628540993,
    30: 2.0422724563012373,
    100: 1.9839715184496334,
    1000: 1.9623390808264078,
}


@pytest.mark.parametrize(("df", "expected"), sorted(T975.items()))
def test_t_quantile_matches_known_values(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, rel=1e-10)
    assert t_quantile(0.025, df) == pytest.approx(-expected, rel=1e-10)


def test_t_quantile_other_levels_and_the_normal_limit() -> None:
    assert t_quantile(0.995, 5) == pytest.approx(4.032142983557536, rel=1e-10)
    assert t_quantile(0.95, 10) == pytest.approx(1.8124611228107335, rel=1e-10)
    assert t_quantile(0.5, 7) == 0.0
    # far beyond any table the quantile tends to the normal one, from above
    normal = statistics.NormalDist().inv_cdf(0.975)
    assert normal < t_quantile(0.975, 10**6) < normal + 3e-6
    # the large-df expansion joins the incomplete-beta computation smoothly
    assert t_quantile(0.975, 1000) > t_quantile(0.975, 1001) > t_quantile(0.975, 5000)


def test_t_quantile_remembered_values_equal_computed_ones() -> None:
    """Quantiles are remembered per (p, df): a remembered value is the computed one."""
    compute = t_quantile.__wrapped__  # the computation without the cache
    for df in (1, 2, 4, 19, 99, 999, 1000, 1001, 20_000):
        for p in (0.975, 0.025, 0.995, 0.9):
            first = t_quantile(p, df)
            assert first == compute(p, df)
            assert t_quantile(p, df) == first  # a hit
    with pytest.raises(ValueError):  # a bad argument is rejected on every call
        t_quantile(1.0, 3)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


def test_t_cdf_known_values() -> None:
    assert t_cdf(0.0, 3) == 0.5
    assert t_cdf(1.0, 1) == pytest.approx(0.75, abs=1e-12)  # Cauchy: 1/2 + atan(1)/pi
    assert t_cdf(-2.0, 2) == pytest.approx(0.5 - 1 / math.sqrt(6), abs=1e-12)


@pytest.mark.parametrize(("p", "df"), [(0.0, 3), (1.0, 3), (0.5, 0)])
def test_t_quantile_rejects_bad_arguments(p: float, df: int) -> None:
    with pytest.raises(ValueError):
        t_quantile(p, df) if df else t_cdf(1.0, df)


def test_suite_stats_known_values() -> None:
    stats = suite_stats([1.0, 0.0, 1.0, 1.0])
    assert stats.mean == 0.75
    assert stats.stderr == pytest.approx(0.25)  # sd 0.5, sqrt(4) = 2
    assert stats.ci == pytest.approx((0.75 - 0.25 * T975[3], 0.75 + 0.25 * T975[3]))
    assert suite_stats([0.5, 0.5, 0.5]).ci == (0.5, 0.5)
    assert suite_stats([0.25]) == suite_stats([0.25]).__class__(0.25, None, None)
    assert suite_stats([]).mean == 0.0


def repeat_metric(table: dict[int, list[Any]]) -> Any:
    """A metric whose answer for row ``i`` depends on the repeat: ``table[i][repeat]``
    (an exception instance is raised)."""

    def metric(b: dict[str, Any]) -> Any:
        scope = rowscope.current()
        assert scope is not None
        answer = table[b["samples"]][scope.repeat]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return metric


TABLE: dict[int, list[Any]] = {
    0: [True, True, True],
    1: [True, False, True],
    2: [(0.5, "half"), (0.5, "half"), (0.5, "half")],
    3: [1.0, KeyError("boom"), 0.0],
}


@pytest.mark.parametrize(
    "options",
    [EvalOptions(repeat=3), EvalOptions(repeat=3, concurrency=4, timeout=30)],
    ids=["inline", "pool"],
)
def test_every_row_runs_once_per_repeat_with_its_repeat_index(options: EvalOptions) -> None:
    program = FakeProgram({("data", "samples"): [0, 1, 2, 3]}, repeat_metric(TABLE))
    seen: list[RowResult] = []
    result = run_suite(program, make_suite(), options, on_row=seen.append)
    assert len(program.calls) == 12
    assert [row.index for row in seen] == [0, 1, 2, 3]  # one callback per row, in order
    assert seen == result.rows
    assert [row.scores for row in result.rows] == [
        [1.0, 1.0, 1.0],
        [1.0, 0.0, 1.0],
        [0.5, 0.5, 0.5],
        [1.0, 0.0, 0.0],
    ]
    assert [row.score for row in result.rows] == pytest.approx([1.0, 2 / 3, 0.5, 1 / 3])
    assert [row.flaky for row in result.rows] == [False, True, False, True]
    assert result.flaky_rows == [result.rows[1], result.rows[3]]
    errored = result.rows[3]
    assert (errored.error_class, errored.feedback) == ("metric", "error: KeyError: 'boom'")
    assert result.rows[2].feedback == "half"
    assert (result.rows_errored, result.errors_by_class) == (1, {"metric": 1})
    assert result.repeats == 3
    assert result.score == pytest.approx(2.5 / 4)
    stats = result.stats
    row_means = [1.0, 2 / 3, 0.5, 1 / 3]
    assert stats.stderr == pytest.approx(statistics.stdev(row_means) / 2)
    assert stats.ci == pytest.approx(
        (result.score - T975[3] * stats.stderr, result.score + T975[3] * stats.stderr)
    )


def test_a_row_run_once_is_unchanged() -> None:
    program = FakeProgram({("data", "samples"): [0, 1]}, repeat_metric(TABLE))
    result = run_suite(program, make_suite())
    assert [(row.scores, row.flaky) for row in result.rows] == [([1.0], False), ([1.0], False)]
    assert result.repeats == 1
    data = result.to_json()
    assert data["rows"][0]["scores"] == [1.0] and data["rows"][0]["flaky"] is False
    assert (data["repeats"], data["stderr"], data["ci"]) == (1, 0.0, {"low": 1.0, "high": 1.0})
    assert SuiteResult.from_json(data) == result


def test_repeats_round_trip_and_old_rows_load() -> None:
    program = FakeProgram({("data", "samples"): [0, 1, 3]}, repeat_metric(TABLE))
    result = run_suite(program, make_suite(), EvalOptions(repeat=3))
    data = result.to_json()
    assert data["rows"][1]["flaky"] is True
    assert SuiteResult.from_json(data) == result
    old = {k: v for k, v in data["rows"][0].items() if k not in ("scores", "flaky")}
    assert RowResult.from_json(old).scores == [1.0]  # a version 2 report's row


def test_each_repeat_has_its_own_time_limit() -> None:
    cancelled = threading.Event()

    def metric(b: dict[str, Any]) -> bool:
        scope = rowscope.current()
        assert scope is not None
        if b["samples"] == 1 and scope.repeat == 1:
            token = cancel.current()
            assert token is not None
            if token.wait(60):
                cancelled.set()
        return True

    program = FakeProgram({("data", "samples"): [0, 1, 2]}, metric)
    result = run_suite(program, make_suite(), EvalOptions(repeat=2, concurrency=2, timeout=0.2))
    assert cancelled.wait(30)
    row = result.rows[1]
    assert row.scores == [1.0, 0.0]
    assert (row.error_class, row.flaky, row.score) == ("timeout", True, 0.5)
    assert [r.score for r in result.rows] == [1.0, 0.5, 1.0]


def test_carried_rows_are_not_run_and_keep_their_results() -> None:
    program = FakeProgram({("data", "samples"): [(0, "a"), (1, "b"), (2, "c")]}, lambda b: True)
    previous = RowResult(1, "9", "'b'", 0.25, "old", None, None, 0.1, scores=[0.0, 0.5])

    def carry(index: int, shown: str | None, expected: str | None) -> RowResult | None:
        return previous if (index, shown, expected) == (1, "1", "'b'") else None

    seen: list[RowResult] = []
    result = run_suite(
        program, make_suite(), EvalOptions(repeat=2), on_row=seen.append, carry=carry
    )
    assert [b["samples"] for b in program.calls] == [0, 0, 2, 2]
    assert [row.index for row in seen] == [0, 1, 2]
    kept = result.rows[1]
    assert (kept.carried_over, kept.score, kept.scores, kept.feedback) == (
        True, 0.25, [0.0, 0.5], "old",
    )  # fmt: skip
    assert [row.carried_over for row in result.rows] == [False, True, False]
    assert result.score == pytest.approx(2.25 / 3)


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_rows_whose_reprs_cannot_tell_a_change_always_run() -> None:
    """A row is carried over only when its short reprs match the earlier run's: a repr cut
    to the 200 characters kept (input or expected value), or one that failed, could hide a
    change, so that row runs without asking ``carry``."""
    long = "x" * 300
    rows = [(long, "a"), (0, long), (_NoRepr(), "a"), (1, "a"), ("y" * 190, "a")]
    program = FakeProgram({("data", "samples"): rows}, lambda b: True)
    asked: list[int] = []

    def carry(index: int, shown: str | None, expected: str | None) -> RowResult | None:
        asked.append(index)
        return RowResult(index, shown, expected, 0.5, None, None, None, 0.0)

    result = run_suite(program, make_suite(), EvalOptions(), carry=carry)
    assert asked == [3, 4]
    assert [row.carried_over for row in result.rows] == [False, False, False, True, True]
    assert [row.score for row in result.rows] == [1.0, 1.0, 1.0, 0.5, 0.5]
