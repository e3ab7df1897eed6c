"""Per-row model facts: every call made inside a row adds its usage to the row's scope and,
with tracing on, a `ModelCallTrace` (read in the row's thread, not on the model loop)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from pytest_kedi.runtime import load, rowscope
from pytest_kedi.runtime.model import AgentState, ModelBoundary, ModelError
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.rowscope import ModelCallTrace, RowScope


def usage(n: int) -> RequestUsage:
    return RequestUsage(input_tokens=10 * n, output_tokens=n)


def counting_model(*answers: object) -> FunctionModel:
    """Answers request k with ``answers[k]`` (a dict: output tool call; a str: text), each
    reporting ``usage(k + 1)``."""
    seen: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = len(seen)
        seen.append(n)
        answer = answers[n]
        if isinstance(answer, dict):
            part: TextPart | ToolCallPart = ToolCallPart(info.output_tools[0].name, answer)
        else:
            part = TextPart(str(answer))
        return ModelResponse(parts=[part], usage=usage(n + 1))

    return FunctionModel(respond, model_name="counter")


def test_calls_outside_a_row_record_nothing() -> None:
    assert rowscope.current() is None
    assert ModelBoundary(counting_model("hi")).invoke(AgentState(), "x") == "hi"


def test_usage_is_summed_over_the_validation_retry() -> None:
    boundary = ModelBoundary(counting_model({"n": "many"}, {"n": 4}, "text"))
    with rowscope.entered(RowScope()) as scope:
        assert boundary.produce(AgentState(), "count", {"n": int}) == {"n": 4}
        assert (scope.requests, scope.input_tokens, scope.output_tokens) == (2, 30, 3)
        boundary.invoke(AgentState(), "say")
    assert (scope.requests, scope.input_tokens, scope.output_tokens) == (3, 60, 6)
    assert scope.calls == []  # tracing is off


def test_a_failed_call_still_counts_its_requests() -> None:
    boundary = ModelBoundary(counting_model({"n": "many"}, {"n": "lots"}))
    with rowscope.entered(RowScope(trace=True)) as scope, pytest.raises(ModelError):
        boundary.produce(AgentState(), "count", {"n": int})
    assert (scope.requests, scope.input_tokens, scope.output_tokens) == (2, 30, 3)
    (call,) = scope.calls
    assert call.answer == ""
    assert (call.input_tokens, call.output_tokens) == (30, 3)


def test_tracing_records_each_call() -> None:
    boundary = ModelBoundary(counting_model({"n": 4, "tags": ["a"]}, "plain words"))
    state = AgentState(instructions=lambda: "Be brief.")
    with rowscope.entered(RowScope(trace=True)) as scope:
        boundary.produce(state, "count [n] [tags]", {"n": int, "tags": list[str]})
        boundary.invoke(AgentState(), "say")
    first, second = scope.calls
    assert isinstance(first, ModelCallTrace)
    assert (first.model, first.prompt, first.instructions) == (
        "function:counter",
        "count [n] [tags]",
        "Be brief.",
    )
    assert first.answer == '{"n":4,"tags":["a"]}'
    assert (first.input_tokens, first.output_tokens) == (10, 1)
    assert first.duration_s >= 0
    assert (second.prompt, second.instructions, second.answer) == ("say", None, "plain words")
    assert (second.input_tokens, second.output_tokens) == (20, 2)


def test_the_trace_labels_the_model_like_the_call_counts() -> None:
    boundary = ModelBoundary(counting_model("hi"))
    with rowscope.entered(RowScope(trace=True)) as scope:
        boundary.invoke(AgentState(), "x")
    assert list(boundary.call_counts()) == [scope.calls[0].model]


def test_each_row_thread_records_into_its_own_scope(tmp_path: Path) -> None:
    """Two rows call the model at the same time (both enter their scope, meet, then call
    through the one model loop); each row's scope gets exactly its own call."""
    barrier = threading.Barrier(2, timeout=30)

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[0].parts[0].content)  # type: ignore[union-attr]
        return ModelResponse(parts=[TextPart(prompt.upper())], usage=usage(len(prompt)))

    source = "@ask(x: str) -> str:\n  [said] << <x>\n  = `said`\n"
    scopes: dict[str, RowScope] = {}
    answers: dict[str, object] = {}
    with ModelLoop() as loop:
        program = load(
            tmp_path / "p.kedi",
            source=source,
            mode="validate",
            model=FunctionModel(respond),
            model_loop=loop,
        )
        ask = program.procedures["ask"]

        def row(word: str) -> None:
            with rowscope.entered(RowScope(trace=True)) as scope:
                scopes[word] = scope
                barrier.wait()
                answers[word] = ask(word)

        threads = [threading.Thread(target=row, args=(word,)) for word in ("ab", "wxyz")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert answers == {"ab": "AB", "wxyz": "WXYZ"}
    assert [call.prompt for call in scopes["ab"].calls] == ["ab"]
    assert [call.prompt for call in scopes["wxyz"].calls] == ["wxyz"]
    assert (scopes["ab"].input_tokens, scopes["wxyz"].input_tokens) == (20, 40)
