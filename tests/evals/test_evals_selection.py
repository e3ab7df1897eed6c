"""Dataset selection (docs/language.md#dataset-selection) and suite-level errors, as a user sees
them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kedi_evals_fakes import FakeProgram, frame, make_suite

from pytest_kedi.evals import EvalOptions, SuiteResult, run_suite
from pytest_kedi.runtime.errors import KediExecutionError, KediKeyExecutionError

SUITE_KEYS = {
    "suite", "metric", "dataset", "split", "score", "rows_total", "rows_errored",
    "errors_by_class", "feedback", "error", "duration_s", "rows", "repeats", "stderr", "ci",
    "retries", "usage",
}  # fmt: skip


def exact(b: dict[str, object]) -> bool:
    return len(str(b["samples"]).split()) == b["expected"]


BOTH = (("data", "samples"), ("test_data", "samples"))
BOTH_VALUES = {
    ("data", "samples"): [("training example", 2), ("one", 2)],
    ("test_data", "samples"): [("held out example", 3)],
}


def test_auto_prefers_test_data_and_loads_only_it() -> None:
    program = FakeProgram(dict(BOTH_VALUES), exact)
    result = run_suite(program, make_suite(BOTH))
    assert result.completed
    assert (result.split, result.dataset, result.score, result.rows_total) == (
        "test_data", "samples", 1.0, 1,
    )  # fmt: skip
    assert program.loaded == [("test_data", "samples")]


def test_auto_falls_back_to_data() -> None:
    program = FakeProgram({("data", "samples"): [("a b", 2), ("a", 2)]}, exact)
    result = run_suite(program, make_suite())
    assert (result.split, result.score) == ("data", 0.5)


def test_test_data_only_name_is_not_a_missing_reference() -> None:
    program = FakeProgram({("test_data", "samples"): [("a b", 2)]}, exact)
    result = run_suite(program, make_suite([("test_data", "samples")]))
    assert (result.error, result.split, result.score) == (None, "test_data", 1.0)


@pytest.mark.parametrize(("split", "score"), [("data", 0.5), ("test_data", 1.0)])
def test_forced_split_scores_that_kind(split: str, score: float) -> None:
    program = FakeProgram(dict(BOTH_VALUES), exact)
    result = run_suite(program, make_suite(BOTH), EvalOptions(split=split))  # type: ignore[arg-type]
    assert (result.split, result.score) == (split, score)
    assert program.loaded == [(split, "samples")]


def test_forced_split_missing_is_a_suite_error() -> None:
    program = FakeProgram({("data", "samples"): [("a", 1)]}, exact)
    result = run_suite(program, make_suite(), EvalOptions(split="test_data"))
    assert result.error == (
        "split 'test_data' requested at suite.kedi:13: suite 'word_count' defines no "
        "'test_data: samples' dataset (only 'data: samples')"
    )
    assert program.loaded == []


def test_missing_dataset_reference_is_a_suite_error_with_every_key() -> None:
    program = FakeProgram({("data", "cases"): [("a", 1)]}, exact)
    result = run_suite(program, make_suite([("data", "cases")]))
    assert not result.completed
    assert result.error == (
        "missing dataset reference at suite.kedi:13: metric 'exact' names dataset 'samples', "
        "which this suite does not define"
    )
    assert (result.score, result.rows, result.rows_total, result.split) == (0.0, [], 0, None)
    assert (result.metric, result.dataset) == ("exact", "samples")
    data = json.loads(json.dumps(result.to_json()))
    assert set(data) == SUITE_KEYS
    assert program.loaded == [] and program.calls == []


def test_suite_without_metric_is_a_suite_error() -> None:
    program = FakeProgram({("data", "samples"): [1]}, exact)
    result = run_suite(program, make_suite(metric=None))
    assert result.error == (
        "suite 'word_count' at suite.kedi:10 has no metric (add `> metric: NAME(DATASET):`)"
    )
    assert (result.metric, result.dataset, result.split, result.score) == (None, None, None, 0.0)


def test_data_loading_kedi_error_is_located_suite_error() -> None:
    err = KediKeyExecutionError(
        "KeyError: 'x'", frames=[frame("dataset", 12)], original=KeyError("x")
    )
    program = FakeProgram({("data", "samples"): err}, exact)
    result = run_suite(program, make_suite())
    assert result.error == "data-loading failed for data 'samples' at suite.kedi:12: KeyError: 'x'"
    assert (result.split, result.dataset, result.rows) == ("data", "samples", [])
    assert result.exception is err  # kept for rendering the Kedi stack trace


def test_data_loading_plain_exception_uses_dataset_line() -> None:
    program = FakeProgram({("test_data", "samples"): RuntimeError("boom")}, exact)
    result = run_suite(program, make_suite([("data", "other"), ("test_data", "samples")]))
    assert result.error == (
        "data-loading failed for test_data 'samples' at suite.kedi:13: RuntimeError: boom"
    )


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("abc", "the dataset is str; it must be a non-string iterable"),
        (b"abc", "the dataset is bytes; it must be a non-string iterable"),
        (None, "the dataset is None; its body must return a non-string iterable"),
        (42, "the dataset is int, which is not iterable"),
    ],
)
def test_bad_dataset_types_are_suite_errors(value: object, detail: str) -> None:
    program = FakeProgram({("data", "samples"): value}, exact)
    result = run_suite(program, make_suite())
    assert result.error is not None
    assert result.error.startswith(
        f"data-loading failed for data 'samples' at suite.kedi:11: {detail}"
    )
    assert program.calls == []


def test_generator_failing_mid_iteration_is_a_suite_error() -> None:
    def rows():
        yield ("a", 1)
        raise ValueError("row source broke")

    program = FakeProgram({("data", "samples"): rows}, exact)
    result = run_suite(program, make_suite())
    assert result.error == (
        "data-loading failed for data 'samples' at suite.kedi:11: ValueError: row source broke"
    )
    assert program.calls == []


class _RaisingIter:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __iter__(self) -> Any:
        raise self.error


class _RaisingItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise LookupError("items broke")


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        (_RaisingIter(RuntimeError("iter broke")), "RuntimeError: iter broke"),
        (_RaisingIter(TypeError("iter broke")), "TypeError: iter broke"),  # not "not iterable"
        (_RaisingItems(a=1), "LookupError: items broke"),
    ],
)
def test_a_dataset_whose_iteration_raises_at_once_is_a_data_loading_failure(
    value: object, detail: str
) -> None:
    """A dataset whose ``__iter__`` raised (rather than its generator, mid-way) escaped
    the suite runner as the bare exception: under pytest a Python traceback, no
    "data-loading failed" and no dataset line; a ``TypeError`` read as "not iterable"."""
    program = FakeProgram({("data", "samples"): value}, exact)
    result = run_suite(program, make_suite())
    assert result.error is not None
    assert result.error.startswith("data-loading failed for data 'samples' at "), result.error
    assert result.error.endswith(detail)
    assert program.calls == []


class _UnsizedPair(tuple):  # type: ignore[type-arg]
    def __len__(self) -> int:
        raise RuntimeError("len broke")


class _UnindexedPair(tuple):  # type: ignore[type-arg]
    def __getitem__(self, index: Any) -> Any:
        raise LookupError("getitem broke")


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ([("a", 1), _UnsizedPair(("b", 2))], "RuntimeError: len broke"),
        ([_UnindexedPair(("b", 2))], "LookupError: getitem broke"),
    ],
)
def test_a_row_whose_shape_cannot_be_read_is_a_data_loading_failure(
    value: object, detail: str
) -> None:
    """A tuple-subclass row whose own ``__len__`` or ``__getitem__`` raised escaped the suite
    runner as the bare exception (no "data-loading failed", no dataset line; under pytest
    a Python traceback, from the CLI a line without a location)."""
    program = FakeProgram({("data", "samples"): value}, exact)
    result = run_suite(program, make_suite())
    assert result.error is not None
    assert result.error.startswith("data-loading failed for data 'samples' at "), result.error
    assert result.error.endswith(detail)
    assert program.calls == []


def test_suite_result_json_round_trip() -> None:
    program = FakeProgram({("data", "samples"): [("a b", 2), ("c", 5)]}, exact)
    result = run_suite(program, make_suite())
    data = json.loads(json.dumps(result.to_json()))
    assert set(data) == SUITE_KEYS
    assert SuiteResult.from_json(data) == result


def test_kedi_error_without_location_falls_back_to_dataset_span() -> None:
    program = FakeProgram({("data", "samples"): KediExecutionError("no value")}, exact)
    result = run_suite(program, make_suite())
    assert result.error == (
        "data-loading failed for data 'samples' at suite.kedi:11: KediExecutionError: no value"
    )
