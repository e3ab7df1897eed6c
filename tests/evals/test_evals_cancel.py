"""Timed-out rows stop (issue 10 items 10-11): real programs, cooperative cancellation."""

from __future__ import annotations

import asyncio
import signal
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.evals import EvalOptions, SuiteResult, run_suite
from pytest_kedi.runtime import load
from pytest_kedi.runtime.model.loop import ModelLoop


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def score(
    tmp_path: Path, source: str, options: EvalOptions, model: Any = None
) -> tuple[SuiteResult, Any]:
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    with ModelLoop() as loop:
        program = load(str(path), mode="validate", model=model, model_loop=loop)
        (suite,) = program.module.eval_suites
        return run_suite(program, suite, options), program


def row_threads_end(prefix: str = "kedi-eval-") -> None:
    """Every row worker thread finishes its rows (an abandoned row that kept running would
    not): it ends, or goes idle under another name, waiting for the next suite."""
    deadline = time.monotonic() + 30
    while running := [t.name for t in threading.enumerate() if t.name.startswith(prefix)]:
        assert time.monotonic() < deadline, f"{running} still run their timed-out rows"
        time.sleep(0.01)


# Row 1 spins forever in Kedi statements; rows 0 and 2 finish at once.
SPIN = """
    [ticks: list[int]] = `[]`

    @spin(x: int) -> bool:
      > loop [i]: `__import__("itertools").count() if x == 1 else []`:
        `ticks.append(i)`
      = `True`

    @eval: spin:
      > data: xs:
        = `[0, 1, 2]`
      > metric: m(xs):
        = `spin(xs)`
"""


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_timed_out_row_stops_at_its_next_statement(tmp_path: Path, concurrency: int) -> None:
    result, program = score(tmp_path, SPIN, EvalOptions(concurrency=concurrency, timeout=0.2))
    assert [r.score for r in result.rows] == [1.0, 0.0, 1.0]
    assert result.rows[1].error == "timeout: row exceeded 0.2s"
    row_threads_end()
    ticks = program.get("ticks")
    assert len(ticks) == len(program.get("ticks"))  # nothing appends any more


# Row 1 calls the model in an endless loop.
CALLS = """
    @ask(x: int) -> str:
      >> say something about <x>
      = `"ok"`

    @spin(x: int) -> bool:
      > loop [i]: `__import__("itertools").count() if x == 1 else [0]`:
        [said: str] = `ask(x)`
      = `True`

    @eval: spin:
      > data: xs:
        = `[0, 1, 2, 3]`
      > metric: m(xs):
        = `spin(xs)`
"""


def test_a_timed_out_row_stops_calling_the_model(tmp_path: Path) -> None:
    calls: list[int] = []
    lock = threading.Lock()

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        with lock:
            calls.append(1)
        return ModelResponse(parts=[TextPart("fine")])

    result, _ = score(
        tmp_path, CALLS, EvalOptions(concurrency=4, timeout=2), FunctionModel(respond)
    )
    assert [r.error_class for r in result.rows] == [None, "timeout", None, None], result.feedback
    row_threads_end()
    with lock:
        settled = len(calls)
    with lock:
        assert len(calls) == settled


@pytest.mark.parametrize("concurrency", [1, 2])
def test_the_in_flight_model_request_of_a_timed_out_row_is_cancelled(
    tmp_path: Path, concurrency: int
) -> None:
    cancelled = threading.Event()
    started = threading.Event()

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        started.set()
        try:
            await asyncio.Event().wait()  # a request that never answers
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    source = """
        @eval: slow:
          > data: xs:
            = `[0]`
          > metric: m(xs):
            >> rate <xs>
            = `True`
    """
    result, _ = score(
        tmp_path,
        source,
        EvalOptions(concurrency=concurrency, timeout=0.2),
        FunctionModel(respond),
    )
    assert started.is_set()
    assert result.rows[0].error_class == "timeout"
    assert cancelled.wait(30), "the model request kept running after its row timed out"
    row_threads_end()


def test_rows_stay_on_the_main_thread_with_a_timeout(tmp_path: Path) -> None:
    """Concurrency 1 + timeout: rows run on the calling (main) thread, so signal.signal works."""
    source = """
        [seen: list[str]] = `[]`
        @eval: main:
          > data: xs:
            = `[0, 1]`
          > metric: m(xs):
            = ```
            import signal, threading
            previous = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
            signal.signal(signal.SIGUSR1, previous)
            seen.append(threading.current_thread().name)
            return True
            ```
    """
    assert threading.current_thread() is threading.main_thread()
    for options in (EvalOptions(), EvalOptions(timeout=30)):
        result, program = score(tmp_path, source, options)
        assert (result.score, result.rows_errored) == (1.0, 0), result.feedback
        assert program.get("seen") == [threading.main_thread().name] * 2
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL
