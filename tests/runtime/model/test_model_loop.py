"""`ModelLoop`: one background event loop for every model request of its owner."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from contextlib import nullcontext
from pathlib import Path

import pytest
from pydantic_ai.models.test import TestModel

from pytest_kedi.runtime import cancel, load, rowscope
from pytest_kedi.runtime.model import ModelError
from pytest_kedi.runtime.model.loop import ModelLoop


async def where() -> threading.Thread:
    return threading.current_thread()


def test_calls_from_every_thread_share_one_loop_thread() -> None:
    with ModelLoop() as loop:
        seen: list[threading.Thread] = []
        threads = [threading.Thread(target=lambda: seen.append(loop.run(where()))) for _ in "abc"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seen.append(loop.run(where()))
    assert len(set(seen)) == 1
    assert seen[0].name == "kedi-model-loop"
    assert seen[0] is not threading.current_thread()


def test_close_stops_the_thread_and_a_later_call_starts_a_fresh_loop() -> None:
    loop = ModelLoop()
    first = loop.run(where())
    loop.close()
    assert not first.is_alive() and not loop.running
    second = loop.run(where())
    assert second is not first and second.is_alive()
    assert loop.generation == 2
    loop.close()
    loop.close()  # idempotent
    assert not second.is_alive()


def test_close_runs_adopted_closers_on_the_loop() -> None:
    closed_on: list[threading.Thread] = []

    async def closer() -> None:
        closed_on.append(threading.current_thread())

    loop = ModelLoop()
    thread = loop.run(where())
    loop.adopt(closer)
    loop.close()
    assert closed_on == [thread]


def test_a_cancelled_token_cancels_the_request_on_the_loop() -> None:
    token = cancel.CancelToken()
    started, request_cancelled = threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            request_cancelled.set()
            raise

    with ModelLoop() as loop:

        def row() -> None:
            with cancel.bound(token):
                try:
                    loop.run(forever())
                except BaseException as exc:
                    outcome.append(exc)

        thread = threading.Thread(target=row)
        thread.start()
        assert started.wait(30)
        token.cancel("row exceeded 1s")
        thread.join(30)
    assert request_cancelled.is_set()
    assert len(outcome) == 1 and isinstance(outcome[0], cancel.Cancelled)
    assert outcome[0].reason == "row exceeded 1s"


def test_closing_the_loop_fails_a_waiting_call_with_a_model_error() -> None:
    started = threading.Event()
    outcome: list[BaseException] = []

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    loop = ModelLoop()

    def caller() -> None:
        try:
            loop.run(forever())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=caller)
    thread.start()
    assert started.wait(30)
    loop.close()
    thread.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], ModelError)
    assert "model loop closed" in str(outcome[0])


def test_a_program_without_a_loop_closes_its_private_loop(tmp_path: Path) -> None:
    source = "@ask() -> str:\n  >> hi\n  Answer: [a: str]\n  = `a`\n"
    program = load(tmp_path / "p.kedi", source=source, mode="validate", model=TestModel())
    assert isinstance(program.procedures["ask"](), str)
    loops = [t for t in threading.enumerate() if t.name == "kedi-model-loop"]
    assert loops
    del program
    gc.collect()
    for thread in loops:
        thread.join(30)
    assert not any(t.is_alive() for t in loops)


def test_a_model_call_from_a_running_event_loop_uses_the_model_loop(tmp_path: Path) -> None:
    source = "@ask() -> str:\n  >> hi\n  Answer: [a: str]\n  = `a`\n"
    with ModelLoop() as loop:
        program = load(
            tmp_path / "p.kedi", source=source, mode="validate", model=TestModel(), model_loop=loop
        )
        ask = program.procedures["ask"]

        async def main() -> str:
            return str(ask())

        assert isinstance(asyncio.run(main()), str)
        assert loop.running


def test_a_call_from_inside_the_loop_is_refused() -> None:
    with ModelLoop() as loop:

        async def nested() -> str:
            return loop.run(where()).name

        with pytest.raises(ModelError, match="cannot be made from inside a model call"):
            loop.run(nested())


@pytest.mark.parametrize("in_row", [False, True], ids=["no-row", "in-a-row"])
def test_a_request_cancelled_before_it_starts_is_closed_not_leaked(
    in_row: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A row's deadline can pass between submitting its request and the loop starting it.
    # The request's coroutine must then be closed: one left unawaited is reported by the
    # garbage collector ("coroutine ... was never awaited"), in whatever test runs next.
    unraisable: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(repr(u.object)))
    token = cancel.CancelToken()
    busy, release = threading.Event(), threading.Event()
    ran: list[bool] = []
    outcome: list[BaseException] = []

    async def request() -> None:
        ran.append(True)

    with ModelLoop() as loop:
        loop.run(where())

        def block() -> None:  # keeps the loop thread busy so the request cannot start
            busy.set()
            release.wait(30)

        loop._ensure().call_soon_threadsafe(block)
        assert busy.wait(30)

        def row() -> None:
            scope = rowscope.entered(rowscope.RowScope()) if in_row else nullcontext()
            with cancel.bound(token), scope:
                try:
                    loop.run(request())
                except BaseException as exc:
                    outcome.append(exc)

        thread = threading.Thread(target=row)
        thread.start()
        while not token._callbacks:  # the request is queued behind `block`, cancellable
            time.sleep(0.001)
        token.cancel("row exceeded 1s")
        release.set()
        thread.join(30)
    outcome_types = [type(exc) for exc in outcome]
    outcome.clear()
    del thread
    gc.collect()
    assert not ran
    assert outcome_types == [cancel.Cancelled]
    assert unraisable == []


@pytest.mark.parametrize("exit_class", [SystemExit, KeyboardInterrupt])
def test_an_exit_raised_on_the_loop_reaches_the_caller_and_the_loop_serves_on(
    exit_class: type[BaseException],
) -> None:
    """A model calling ``sys.exit()`` (or interrupted) stopped the loop thread: the caller
    waited forever, and so did every later call."""

    async def leave() -> None:
        raise exit_class(7)

    with ModelLoop() as loop:
        with pytest.raises(exit_class):
            loop.run(leave())
        assert loop.run(where()).name == "kedi-model-loop"


class Halt(BaseException):
    """A user class deriving from `BaseException` directly."""


@pytest.mark.parametrize("exit_class", [SystemExit, GeneratorExit, Halt])
def test_a_model_exit_fails_the_call_like_any_exception(
    tmp_path: Path, exit_class: type[BaseException]
) -> None:
    """KEDI.md §10.5: user code raising SystemExit or GeneratorExit fails only its unit."""
    from pydantic_ai.models.function import FunctionModel

    def answer(messages: object, info: object) -> None:
        raise exit_class()

    source = "@ask() -> str:\n  [a] << hi\n  = <a>\n"
    model = FunctionModel(answer, model_name="exits")  # type: ignore[arg-type]
    with ModelLoop() as loop:
        program = load(
            tmp_path / "p.kedi", source=source, mode="validate", model=model, model_loop=loop
        )
        for _ in range(2):  # and the next call is served
            with pytest.raises(Exception) as caught:
                program.procedures["ask"]()
            last = str(caught.value).splitlines()[-1]
            assert last.endswith(f"model call failed (function:exits): {exit_class.__name__}")


def test_a_scored_suite_does_not_keep_its_program_and_loop_alive(tmp_path: Path) -> None:
    """The procedure a suite is named after records its rows' outputs; the record of which
    procedure records held it strongly, so a program whose suite had run was never freed
    and its private model loop thread ran on after the program was dropped."""
    import weakref

    from pytest_kedi.evals import run_suite

    source = (
        "@ask(q: str) -> str:\n  >> hi <q>\n  Answer: [a: str]\n  = `a`\n\n"
        "@eval: ask:\n  > data: rows:\n    = `['x']`\n  > metric: m(rows):\n"
        "    = `isinstance(ask(rows), str)`\n"
    )
    program = load(tmp_path / "p.kedi", source=source, mode="validate", model=TestModel())
    (suite,) = program.module.eval_suites
    assert run_suite(program, suite).score == 1.0
    procedure = weakref.ref(program.procedures["ask"])
    loops = [t for t in threading.enumerate() if t.name == "kedi-model-loop"]
    assert loops
    del program, suite
    gc.collect()
    assert procedure() is None
    for thread in loops:
        thread.join(30)
    assert not any(t.is_alive() for t in loops)
