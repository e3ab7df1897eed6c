"""Score normalization, row errors and error classes, aggregation, legacy metrics (§5.5-§5.6)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from kedi_evals_fakes import FakeProgram, frame, make_suite

from pytest_kedi.evals import SuiteResult, run_suite
from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediModelError,
    KediNameError,
    KediTypeExecutionError,
)


def score_rows(returns: list[Any], rows: list[Any] | None = None) -> SuiteResult:
    """Run a suite whose metric returns (or raises) ``returns[i]`` for row i."""
    values = iter(returns)

    def metric(b: dict[str, Any]) -> Any:
        value = next(values)
        if isinstance(value, BaseException):
            raise value
        return value

    data = rows if rows is not None else [(f"in{i}", i) for i in range(len(returns))]
    return run_suite(FakeProgram({("data", "samples"): data}, metric), make_suite())


class Floaty:
    def __float__(self) -> float:
        return 0.25


@pytest.mark.parametrize(
    ("value", "score"),
    [
        (True, 1.0),
        (False, 0.0),
        (1, 1.0),
        (0, 0.0),
        (0.75, 0.75),
        (2.5, 2.5),
        (-1, -1.0),
        (Decimal("0.5"), 0.5),
        (Fraction(1, 4), 0.25),
        (Floaty(), 0.25),
    ],
)
def test_scores_normalize_without_clamping(value: Any, score: float) -> None:
    result = score_rows([value])
    assert result.rows[0].score == score
    assert result.score == score
    assert result.rows[0].error_class is None
    assert result.feedback is None


def test_score_feedback_tuples() -> None:
    result = score_rows([(0.5, "half right"), (1, None), (True, 42), (0.0, "")])
    assert [r.score for r in result.rows] == [0.5, 1.0, 1.0, 0.0]
    assert [r.feedback for r in result.rows] == ["half right", None, "42", ""]
    assert result.feedback == "half right; 42; "
    assert result.score == pytest.approx(0.625)


@pytest.mark.parametrize(
    ("value", "feedback"),
    [
        (None, "error: TypeError: metric must return a bool, a number or a (score, feedback) "
               "tuple, not NoneType"),
        ("1.0", "error: TypeError: metric must return a bool, a number or a (score, feedback) "
                "tuple, not str"),
        ([1.0, "x"], "error: TypeError: metric must return a bool, a number or a (score, "
                     "feedback) tuple, not list"),
        ((1.0, "a", "b"), "error: TypeError: a (score, feedback) metric result must have "
                          "exactly 2 elements, got 3"),
        (("high", "x"), "error: ValueError: could not convert string to float: 'high'"),
    ],
)  # fmt: skip
def test_other_result_shapes_are_metric_row_errors(value: Any, feedback: str) -> None:
    result = score_rows([value, True])
    bad, good = result.rows
    assert (bad.score, bad.feedback, bad.error_class) == (0.0, feedback, "metric")
    assert (good.score, good.error_class) == (1.0, None)
    assert result.score == 0.5
    assert result.errors_by_class == {"metric": 1}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (math.nan, "nan"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        ((math.nan, "fine"), "nan"),
        (Decimal("Infinity"), "inf"),
    ],
)
def test_non_finite_scores_are_invalid_score_errors(value: Any, text: str) -> None:
    result = score_rows([value, 1.0])
    row = result.rows[0]
    assert row.score == 0.0
    assert row.feedback == f"error: invalid score: {text}"
    assert row.error == f"invalid score: {text} (at suite.kedi:13)"  # the metric's line
    assert row.error_class == "invalid_score"
    assert result.score == 0.5
    assert result.feedback == f"error: invalid score: {text}"
    assert result.errors_by_class == {"invalid_score": 1}


def test_raising_rows_score_zero_and_the_others_still_run() -> None:
    result = score_rows([True, KeyError("label"), ValueError("bad\n  value"), True])
    assert [r.score for r in result.rows] == [1.0, 0.0, 0.0, 1.0]
    assert result.score == 0.5
    assert result.feedback == "error: KeyError: 'label'; error: ValueError: bad value"
    assert (result.rows_total, result.rows_errored) == (4, 2)
    assert result.errors_by_class == {"metric": 2}
    assert result.completed


def located(err: KediExecutionError, *frames: Any) -> KediExecutionError:
    for f in frames:
        err.with_inner_frame(f)
    return err


def test_kedi_error_feedback_uses_the_original_exception() -> None:
    err = located(
        KediExecutionError("lookup failed", original=KeyError("label")),
        frame("metric", 20),
        frame("python", 21),
    )
    row = score_rows([err]).rows[0]
    assert row.feedback == "error: KeyError: 'label'"
    assert row.error == "KeyError: 'label' (at suite.kedi:21)"
    assert row.error_class == "metric"
    assert row.exception is err


MODEL = KediModelError("provider returned garbage")
STRICT = KediTypeExecutionError("return value 'x' is not int")
WRAPPED_TYPE = KediTypeExecutionError("unsupported operand", original=TypeError("unsupported"))


@pytest.mark.parametrize(
    ("err", "feedback", "klass"),
    [
        (MODEL, "error: KediModelError: provider returned garbage", "model"),
        (
            located(KediModelError("timeout from provider"), frame("procedure", 3)),
            "error: KediModelError: timeout from provider",
            "model",
        ),
        (
            KediExecutionError("call failed", original=KediModelError("rate limited")),
            "error: KediModelError: rate limited",
            "model",
        ),
        (STRICT, "error: KediTypeExecutionError: return value 'x' is not int", "type"),
        (
            located(KediTypeExecutionError("parameter text expects str"), frame("procedure", 2)),
            "error: KediTypeExecutionError: parameter text expects str",
            "type",
        ),
        (WRAPPED_TYPE, "error: TypeError: unsupported", "metric"),
        (
            located(
                KediExecutionError("division", original=ZeroDivisionError("division by zero")),
                frame("metric", 20),
                frame("procedure", 2),
                frame("python", 3),
            ),
            "error: ZeroDivisionError: division by zero",
            "procedure",
        ),
        (KediNameError("name 'expected' is not defined"), None, "metric"),
        (RuntimeError("plain"), "error: RuntimeError: plain", "metric"),
    ],
)
def test_error_class_mapping(err: BaseException, feedback: str | None, klass: str) -> None:
    row = score_rows([err]).rows[0]
    assert row.error_class == klass
    assert row.score == 0.0
    if feedback is not None:
        assert row.feedback == feedback


def test_pydantic_ai_exceptions_are_model_errors() -> None:
    from pydantic_ai.exceptions import UnexpectedModelBehavior

    row = score_rows([UnexpectedModelBehavior("bad tool call")]).rows[0]
    assert (row.error_class, row.feedback) == (
        "model",
        "error: UnexpectedModelBehavior: bad tool call",
    )


def test_errors_by_class_counts_every_class() -> None:
    result = score_rows([MODEL, STRICT, KeyError("x"), math.nan, MODEL, 1.0])
    assert result.errors_by_class == {"invalid_score": 1, "metric": 1, "model": 2, "type": 1}
    assert (result.rows_total, result.rows_errored) == (6, 5)


def test_empty_dataset_scores_zero_with_no_examples() -> None:
    result = score_rows([], rows=[])
    assert (result.score, result.feedback, result.rows, result.rows_total) == (
        0.0, "no examples", [], 0,
    )  # fmt: skip
    assert result.completed and result.split == "data"


def test_feedback_is_none_when_no_row_has_feedback() -> None:
    assert score_rows([True, 0.5]).feedback is None


def test_legacy_dataset_free_metric_runs_once_without_bindings() -> None:
    program = FakeProgram({("data", "unused"): ["never loaded"]}, lambda b: (0.8, "ok"))
    suite = make_suite([("data", "unused")], metric=("sanity", None))
    result = run_suite(program, suite)
    assert program.calls == [{}]
    assert program.loaded == []
    assert (result.score, result.feedback, result.split, result.dataset) == (0.8, "ok", None, None)
    assert result.metric == "sanity"
    (row,) = result.rows
    assert (row.index, row.input, row.expected, row.score) == (0, None, None, 0.8)


def test_legacy_metric_that_raises_is_one_errored_row() -> None:
    def metric(b: dict[str, Any]) -> Any:
        raise KeyError("x")

    result = run_suite(FakeProgram({}, metric), make_suite([], metric=("sanity", None)))
    assert result.completed
    assert (result.score, result.feedback, result.rows_errored) == (0.0, "error: KeyError: 'x'", 1)


@pytest.mark.parametrize("value", [0.7, 0.1, 1 / 3, 0.3, 0.9])
def test_the_mean_of_equal_scores_is_that_score_and_gates_at_it(value: float) -> None:
    """``fsum([0.7] * 3) / 3`` is 0.6999999999999998: a suite scoring 0.7 on every row
    failed ``--kedi-min-score 0.7``, and an unchanged repeated row read as regressed."""
    from pytest_kedi.evals.scoring import below, fell, mean
    from pytest_kedi.evals.stats import suite_stats

    for n in (2, 3, 5, 7, 10):
        assert mean([value] * n) == value
        assert suite_stats([value] * n).ci == (value, value)
    assert not below(mean([0.6, 0.8, 0.7]), 0.7)  # 0.6999999999999998: noise, not a miss
    assert below(0.6999, 0.7)
    assert not fell(mean([0.7] * 3) - 0.7) and not fell(-1e-16) and fell(-1e-9)


@pytest.mark.parametrize("value", [0.1234567890123, 1 / 3, 2 / 3, 0.0, 1.0, 1e6 / 3, -5.5])
def test_a_value_is_never_below_itself_or_a_float_noise_away(value: float) -> None:
    """``below`` rounded the score to 12 decimals but not the threshold, so a score equal
    to a threshold of more decimals (0.1234567890123, 1/3) was below it."""
    import math

    from pytest_kedi.evals.scoring import below, fell, rose, same_score

    for other in (value, math.nextafter(value, 2e6), math.nextafter(value, -2e6)):
        assert same_score(value, other)
        assert not below(value, other) and not below(other, value)
        if abs(value) <= 1:  # a change alone is measured against 1 (scores' usual range)
            assert not fell(other - value) and not rose(other - value)
    assert below(value, value + 1e-9 * max(1.0, abs(value)))
    assert not below(value + 1e-9 * max(1.0, abs(value)), value)


def test_a_score_short_of_its_threshold_by_more_than_noise_is_below_it() -> None:
    """Only float noise (a few units in the last place) counts as meeting a min score: a
    score of 0.0 against 1e-12, or 0.333333333333333 against 0.3333333333334, is below it
    (both met it when 1e-12 of the larger value, or of 1, counted as noise)."""
    from pytest_kedi.evals.scoring import below, fell

    assert below(0.0, 1e-12)
    assert below(0.333333333333333, 0.3333333333334)
    assert fell(-1e-13)


def test_the_mean_never_leaves_the_scores_range() -> None:
    from pytest_kedi.evals.scoring import mean

    assert mean([]) == 0.0
    assert mean([0.1, 0.2, 0.3]) == pytest.approx(0.2)
    assert mean([1e308, 1e308]) == 1e308


def test_scores_near_the_float_maximum_have_a_finite_mean_and_interval() -> None:
    """Their squared deviations overflow: the interval was dropped, read as "fewer than 2
    rows", and `--kedi-gate lower` gated the mean instead."""
    import sys

    from pytest_kedi.evals.stats import suite_stats

    stats = suite_stats([1e308, -1e308, 1e308])
    assert stats.mean == pytest.approx(1e308 / 3)
    assert stats.stderr == pytest.approx(1e308 / 3 * 2)
    assert stats.ci is not None
    low, high = stats.ci
    assert low == pytest.approx(1e308 / 3 - sys.float_info.max)  # the half-width overflows
    assert high == sys.float_info.max
    assert suite_stats([1.0, 0.0, 1.0]).ci == pytest.approx((-0.7675, 2.1009), abs=1e-4)


def test_a_change_between_scores_near_the_float_maximum_is_finite() -> None:
    import sys

    from pytest_kedi.evals.scoring import change

    assert change(1.7e308, -1.7e308) == sys.float_info.max
    assert change(-1.7e308, 1.7e308) == -sys.float_info.max
    assert change(0.75, 0.5) == 0.25


def test_the_histogram_bins_scores_near_the_float_maximum() -> None:
    from pytest_kedi.plugin.sparkline import histogram

    assert histogram([1e308, -1e308, 0.55]) == [1, 0, 0, 0, 0, 1, 0, 0, 0, 1]


@pytest.mark.parametrize("value", [-0.0, (-0.0, "exact"), Decimal("-0.0")])
def test_negative_zero_is_a_score_of_zero(value: Any) -> None:
    """`-abs(error)` of an exact answer is -0.0: its score is 0.0, shown `0.0000`, not
    `-0.0000`, on the suite's line and the row's."""
    from pytest_kedi.evals import format_suite_line

    result = score_rows([value])
    assert math.copysign(1.0, result.rows[0].score) == 1.0
    assert math.copysign(1.0, result.score) == 1.0
    assert ": 0.0000" in format_suite_line(result)


@pytest.mark.parametrize(
    "scores",
    [[1.0] * 5, [0.7] * 3, [0.0, -0.0], [-0.0, 0.0, 0.0], [-0.0] * 3, [1, 1.0], [1.0, 1],
     [True, 1.0], [0.5, 0.5, 0.25], [float("inf")] * 2, [1e308] * 3],
)  # fmt: skip
def test_the_mean_of_equal_scores_is_what_summing_them_gives(scores: list[float]) -> None:
    # Scores all equal to the first are not summed: the mean is the first (a float other
    # than a zero), exactly what summing, dividing and keeping in range gives.
    import math

    from pytest_kedi.evals.scoring import mean

    try:  # `mean` as it was, summing always
        value = math.fsum(scores) / len(scores)
    except OverflowError:
        value = math.fsum([score / len(scores) for score in scores])
    low, high = min(scores), max(scores)
    expected = low if value < low else high if value > high else value
    got = mean(scores)
    assert (got, type(got), math.copysign(1.0, got)) == (
        expected, type(expected), math.copysign(1.0, expected)
    )  # fmt: skip
