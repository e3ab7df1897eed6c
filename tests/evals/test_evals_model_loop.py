"""Concurrent rows share the session's one model loop: their requests are in flight together
on the same loop thread, while the rows themselves run on their own worker threads."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load
from pytest_kedi.runtime.model.loop import ModelLoop

REPO = Path(__file__).resolve().parents[2]

SOURCE = """
    @ask(x: int) -> str:
      [said] << rate <x>
      = `said`

    @eval: ask:
      > data: xs:
        = `[(0, "ok"), (1, "ok")]`
      > metric: m(xs):
        = `ask(xs) == expected`
"""


def test_two_rows_requests_run_together_on_the_one_loop_thread(tmp_path: Path) -> None:
    request_threads: list[threading.Thread] = []
    row_threads: list[threading.Thread] = []
    both_in_flight: list[asyncio.Event] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        request_threads.append(threading.current_thread())
        if not both_in_flight:
            both_in_flight.append(asyncio.Event())
            # the first request waits for the second one on the same event loop
            await asyncio.wait_for(both_in_flight[0].wait(), 30)
        else:
            both_in_flight[0].set()
        return ModelResponse(parts=[TextPart("ok")])

    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(SOURCE).lstrip(), encoding="utf-8")
    with ModelLoop() as loop:
        program = load(str(path), mode="validate", model=FunctionModel(respond), model_loop=loop)
        original = program.metric_runner

        def metric_runner(*args: Any) -> Callable[[dict[str, Any]], Any]:
            run = original(*args)

            def run_metric(bindings: dict[str, Any]) -> Any:
                row_threads.append(threading.current_thread())
                return run(bindings)

            return run_metric

        program.metric_runner = metric_runner  # type: ignore[method-assign]
        (suite,) = program.module.eval_suites
        result = run_suite(program, suite, EvalOptions(concurrency=2))
    assert [row.score for row in result.rows] == [1.0, 1.0], result.feedback
    assert len(request_threads) == 2
    assert request_threads[0] is request_threads[1]
    assert request_threads[0].name == "kedi-model-loop"
    assert len(set(row_threads)) == 2
    assert request_threads[0] not in row_threads


HANGING_ROW = """
import asyncio, sys
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load

async def respond(messages, info):
    if "1" in str(messages[0].parts[0].content):
        await asyncio.Event().wait()  # never answers: the row times out mid-request
    return ModelResponse(parts=[TextPart("ok")])

source = '''
@ask(x: int) -> str:
  [said] << rate <x>
  = `said`

@eval: ask:
  > data: xs:
    = `[(0, "ok"), (1, "ok"), (2, "ok")]`
  > metric: m(xs):
    = `ask(xs) == expected`
'''
program = load("hang.kedi", source=source, mode="validate", model=FunctionModel(respond))
(suite,) = program.module.eval_suites
# The hanging row times out; the time limit leaves the others (which, in dev mode, make the
# process's first model call) ample time on a loaded machine.
result = run_suite(program, suite, EvalOptions(concurrency=int(sys.argv[1]), timeout=5.0))
print([row.error_class for row in result.rows])
"""


@pytest.mark.parametrize("concurrency", [1, 3])
def test_exiting_with_a_cancelled_request_leaves_nothing_behind(
    tmp_path: Path, concurrency: int
) -> None:
    """The program's private loop closes at exit: no pending task, unclosed resource or
    unraisable exception is reported, even under ``-X dev -W error``."""
    script = tmp_path / "hang.py"
    script.write_text(HANGING_ROW, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error", str(script), str(concurrency)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[None, 'timeout', None]"
    for marker in ("destroyed", "Warning", "unclosed", "Exception ignored", "Traceback"):
        assert marker not in done.stderr, done.stderr
