"""SystemExit, GeneratorExit and pytest outcomes raised by user code in a row or a dataset."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kedi_evals_fakes import FakeProgram, make_suite

from pytest_kedi.evals import EvalOptions, run_suite

OPTIONS = [EvalOptions(), EvalOptions(concurrency=2, timeout=10)]


class Halt(BaseException):
    """A user class deriving from `BaseException` directly."""


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize(
    ("raised", "error"),
    [
        (lambda: SystemExit(3), "SystemExit: 3"),
        (lambda: SystemExit(), "SystemExit: "),
        (lambda: GeneratorExit("closed"), "GeneratorExit: closed"),
        (lambda: Halt("stop"), "Halt: stop"),
        (lambda: asyncio.CancelledError("mine"), "CancelledError: mine"),
        (lambda: BaseExceptionGroup("g", [Halt(1)]), "BaseExceptionGroup: g (1 sub-exception)"),
        (lambda: pytest.skip.Exception("not today"), "Skipped: not today"),
        (lambda: pytest.xfail.Exception("known"), "XFailed: known"),
        (lambda: pytest.fail.Exception("bad row"), "Failed: bad row"),
    ],
)
def test_a_row_that_exits_is_that_rows_error(options, raised, error: str) -> None:
    def metric(bindings: dict[str, Any]) -> float:
        if bindings["samples"] == 2:
            raise raised()
        return 1.0

    program = FakeProgram({("data", "samples"): [1, 2, 3]}, metric)
    result = run_suite(program, make_suite(), options)
    assert result.error is None
    assert [row.score for row in result.rows] == [1.0, 0.0, 1.0]
    assert result.rows[1].feedback == f"error: {error}"
    assert result.rows[1].error_class == "metric"
    assert len(program.calls) == 3


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize(
    "raised",
    [KeyboardInterrupt, lambda: BaseExceptionGroup("g", [Halt(1), KeyboardInterrupt()])],
)
def test_keyboard_interrupt_still_ends_the_run(options, raised) -> None:
    def metric(bindings: dict[str, Any]) -> float:
        raise raised()

    with pytest.raises((KeyboardInterrupt, BaseExceptionGroup)):
        run_suite(FakeProgram({("data", "samples"): [1, 2]}, metric), make_suite(), options)


@pytest.mark.parametrize("raised", [SystemExit(2), GeneratorExit(), Halt(2)])
def test_a_dataset_that_exits_is_a_data_loading_failure(raised: BaseException) -> None:
    program = FakeProgram({("data", "samples"): raised}, lambda b: 1.0)
    result = run_suite(program, make_suite(), EvalOptions())
    assert result.rows == []
    assert result.error is not None
    assert result.error.startswith("data-loading failed for data 'samples'")
    assert result.error.endswith(type(raised).__name__ + (": 2" if str(raised) else ": "))


def test_a_generator_dataset_that_exits_is_a_data_loading_failure() -> None:
    def rows() -> Any:
        yield 1
        raise SystemExit(9)

    program = FakeProgram({("data", "samples"): rows}, lambda b: 1.0)
    result = run_suite(program, make_suite(), EvalOptions())
    assert result.error is not None and result.error.endswith("SystemExit: 9")


def test_a_pytest_skip_in_a_dataset_is_left_to_pytest() -> None:
    program = FakeProgram({("data", "samples"): pytest.skip.Exception("no data")}, lambda b: 1)
    with pytest.raises(pytest.skip.Exception, match="no data"):
        run_suite(program, make_suite(), EvalOptions())


class Unplaced(Exception):
    """A user exception class whose ``__module__`` user code set to ``None``."""


Unplaced.__module__ = None  # type: ignore[assignment]


@pytest.mark.parametrize("options", OPTIONS)
def test_an_exception_class_without_a_module_is_that_rows_error(options) -> None:
    """Its row's error class was looked up on ``__module__``, and the suite failed with
    ``AttributeError: 'NoneType' object has no attribute 'startswith'``."""

    def metric(bindings: dict[str, Any]) -> float:
        if bindings["samples"] == 2:
            raise Unplaced("odd class")
        return 1.0

    program = FakeProgram({("data", "samples"): [1, 2, 3]}, metric)
    result = run_suite(program, make_suite(), options)
    assert result.error is None
    assert [row.score for row in result.rows] == [1.0, 0.0, 1.0]
    assert result.rows[1].feedback == "error: Unplaced: odd class"
    assert result.rows[1].error_class == "metric"
