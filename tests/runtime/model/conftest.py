"""Shared fixtures for the model-boundary tests (pydantic-ai test doubles only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.runtime.model import AdapterCapabilities, boundary


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KEDI_ADAPTER_MODEL", raising=False)
    monkeypatch.delenv("KEDI_DEBUG_OPTIMIZED", raising=False)


@pytest.fixture
def fresh_notice() -> Iterator[None]:
    """Pretend the once-per-process synthetic notice has not been printed yet."""
    shown = boundary.NOTICE_ONCE.shown
    boundary.NOTICE_ONCE.reset()
    yield
    boundary.NOTICE_ONCE.shown = shown


class Recorder:
    """A FunctionModel that records what it saw and answers from ``answer``."""

    def __init__(self, answer: Callable[[AgentInfo], Mapping[str, Any] | str]) -> None:
        self.answer = answer
        self.infos: list[AgentInfo] = []
        self.messages: list[list[ModelMessage]] = []
        self.model = FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.infos.append(info)
        self.messages.append(messages)
        answer = self.answer(info)
        if info.output_tools:
            assert not isinstance(answer, str)
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, dict(answer))])
        return ModelResponse(parts=[TextPart(str(answer))])

    def prompt(self, index: int = -1) -> str:
        request = self.messages[index][-1]
        return "".join(
            str(part.content) for part in request.parts if part.part_kind == "user-prompt"
        )


@pytest.fixture
def recorder() -> Callable[..., Recorder]:
    return Recorder


class FakeAdapter:
    """A fake adapter (docs/language.md#adapter) recording the model each call selected."""

    kind = "agent-framework"
    shortname = "pydantic"

    def __init__(self, structured: bool = True) -> None:
        self.capabilities = AdapterCapabilities(supports_structured_output=structured)
        self.calls: list[dict[str, Any]] = []

    def produce_sync(self, **kw: Any) -> dict[str, Any]:
        self.calls.append(kw)
        return {name: f"{name}!" for name in kw["output_schema"]}

    async def produce(self, **kw: Any) -> dict[str, Any]:
        return self.produce_sync(**kw)

    def invoke_sync(self, **kw: Any) -> str:
        self.calls.append(kw)
        return "text"

    async def invoke(self, **kw: Any) -> str:
        return self.invoke_sync(**kw)


@pytest.fixture
def fake_adapter() -> FakeAdapter:
    return FakeAdapter()


@pytest.fixture
def fake_adapter_factory() -> type[FakeAdapter]:
    return FakeAdapter
