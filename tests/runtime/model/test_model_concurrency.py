"""Model calls from worker threads: correct, isolated and actually concurrent."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.runtime.model import AgentState, ModelBoundary

THREADS = 20
LATENCY = 0.05


def _echo(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    time.sleep(LATENCY)
    prompt = "".join(
        str(part.content) for part in messages[-1].parts if part.part_kind == "user-prompt"
    )
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"echo": prompt})])
    return ModelResponse(parts=[TextPart(prompt)])


def test_calls_work_in_a_non_main_thread() -> None:
    boundary = ModelBoundary(FunctionModel(_echo))
    results: list[str] = []
    worker = threading.Thread(target=lambda: results.append(boundary.invoke(AgentState(), "hi")))
    worker.start()
    worker.join()
    assert results == ["hi"]


def test_concurrent_calls_overlap_and_keep_their_own_results() -> None:
    # Every call waits until all THREADS calls are in flight at once: serialized calls
    # would break the barrier (timeout) instead of passing.
    barrier = threading.Barrier(THREADS, timeout=10)

    def meet(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        barrier.wait()
        return _echo(messages, info)

    boundary = ModelBoundary(FunctionModel(meet))

    def call(index: int) -> object:
        if index % 2:
            return boundary.invoke(AgentState(), f"row {index}")
        return boundary.produce(AgentState(), f"row {index}", {"echo": (str, None)})["echo"]

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(pool.map(call, range(THREADS)))
    assert results == [f"row {index}" for index in range(THREADS)]
    assert not barrier.broken


def test_synthetic_counter_is_thread_safe(fresh_notice) -> None:
    boundary = ModelBoundary()
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda _: boundary.invoke(AgentState(), "x"), range(40)))
    assert boundary.synthetic_calls == 40
