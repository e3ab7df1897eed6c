"""`ModelBoundary.producer` (what a ``>>`` of a built procedure body calls) answers, counts
and fails as `ModelBoundary.produce` does."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, RequestUsage, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.errors import CassetteMiss
from pytest_kedi.runtime import rowscope
from pytest_kedi.runtime.model import AgentState, ModelBoundary
from pytest_kedi.runtime.model.cassettes import CassetteBook
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.policy import ModelPolicy

SCHEMA = {"word": str, "size": int}
PROMPTS = ["one", "two", "one"]  # the third is the first's second occurrence (in a row)


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
    usage = RequestUsage(input_tokens=len(prompt), output_tokens=2)
    tool = info.output_tools[0]
    args = {"word": f"w-{prompt}", "size": len(messages)}
    return ModelResponse(parts=[ToolCallPart(tool.name, args)], usage=usage)


def refusing() -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("a replayed call reached the model")

    return FunctionModel(respond, model_name="respond")


@pytest.fixture
def loop() -> Iterator[ModelLoop]:
    with ModelLoop() as shared:
        yield shared


def _boundary(book: CassetteBook, model: FunctionModel, path: Path, loop: ModelLoop) -> Any:
    policy = ModelPolicy(cassettes=book, cassette=path)
    return ModelBoundary(model, loop=loop, policy=policy)


def _recorded(tmp_path: Path, loop: ModelLoop, state: AgentState) -> Path:
    """A cassette holding each prompt of `PROMPTS` in a row of repeat 0 and outside rows."""
    path = tmp_path / "p.kedi.cassette.json"
    book = CassetteBook("record")
    boundary = _boundary(book, FunctionModel(respond, model_name="respond"), path, loop)
    with rowscope.entered(rowscope.RowScope()):
        for prompt in PROMPTS:
            boundary.produce(state, prompt, SCHEMA)
    with rowscope.counting("test case"):
        for prompt in PROMPTS:
            boundary.produce(state, prompt, SCHEMA)
    book.save(prune=False)
    return path


def _calls(boundary: Any, ask: Any, trace: bool) -> list[Any]:
    """What each call gives and leaves in its scope, in a row and outside rows."""
    seen: list[Any] = []
    with rowscope.entered(rowscope.RowScope(trace=trace)) as scope:
        for prompt in PROMPTS:
            seen.append(ask(prompt))
    calls = [(call.prompt, call.answer, call.input_tokens) for call in scope.calls]
    seen.append((scope.requests, scope.input_tokens, scope.output_tokens, calls, scope.seen))
    with rowscope.counting("test case"):
        for prompt in PROMPTS:
            seen.append(ask(prompt))
        counts = rowscope.outside()
        assert counts is not None
        seen.append(dict(counts[0]))
    seen.append(boundary.call_counts())
    return seen


@pytest.mark.parametrize("trace", [False, True])
@pytest.mark.parametrize("instructions", [None, "Be brief."])
def test_the_producer_answers_counts_and_accounts_as_produce(
    tmp_path: Path, loop: ModelLoop, trace: bool, instructions: str | None
) -> None:
    rendered: list[str] = []

    def render() -> str:
        rendered.append("x")
        return instructions or ""

    state = AgentState(instructions=render)
    path = _recorded(tmp_path, loop, state)
    rendered.clear()
    usual = _boundary(CassetteBook("strict"), refusing(), path, loop)
    expected = _calls(usual, lambda prompt: usual.produce(state, prompt, SCHEMA), trace)
    assert len(rendered) == 6  # once per call
    fast = _boundary(CassetteBook("strict"), refusing(), path, loop)
    produce = fast.producer(state, SCHEMA)
    assert _calls(fast, produce, trace) == expected
    assert len(rendered) == 12
    assert expected[0] == {"word": "w-one", "size": 1}
    assert expected[3][:3] == (3, 9, 6)  # requests and tokens of the row's three calls


def test_a_miss_through_the_producer_is_the_cassette_miss_of_produce(
    tmp_path: Path, loop: ModelLoop
) -> None:
    state = AgentState()
    path = _recorded(tmp_path, loop, state)
    messages = []
    counts = []
    for make in ("produce", "producer"):
        boundary = _boundary(CassetteBook("strict"), refusing(), path, loop)
        ask = (
            boundary.producer(state, SCHEMA)
            if make == "producer"
            else partial(boundary.produce, state, schema=SCHEMA)
        )
        with rowscope.entered(rowscope.RowScope()) as scope:
            assert ask("one") == {"word": "w-one", "size": 1}
            with pytest.raises(CassetteMiss) as caught:
                ask("three")
        messages.append(str(caught.value))
        counts.append((boundary.call_counts(), scope.requests, scope.seen))
    assert messages[0] == messages[1]
    assert counts[0] == counts[1]
    assert counts[0][0] == {"function:respond": 1}  # the missed call is not counted


def test_the_producer_of_a_state_it_cannot_run_raises_as_produce_does(
    tmp_path: Path, loop: ModelLoop
) -> None:
    state = AgentState(unsupported=(("> tools:", 3),))
    boundary = _boundary(CassetteBook("strict"), refusing(), tmp_path / "x.json", loop)
    produce = boundary.producer(state, SCHEMA)
    for ask in (produce, lambda prompt: boundary.produce(state, prompt, SCHEMA)):
        with pytest.raises(Exception) as caught:
            ask("one")
        assert type(caught.value).__name__ == "UnsupportedFeature"
