"""Structured and text calls through pydantic-ai (docs/language.md#model-calls)."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel

from pytest_kedi.runtime.model import (
    AgentState,
    ModelBoundary,
    ModelError,
    PydanticAIAdapter,
    UnsupportedFeature,
)


class Person(BaseModel):
    name: str
    age: int


def test_structured_call_builds_schema_with_descriptions(recorder) -> None:
    rec = recorder(lambda info: {"label": "billing", "score": 3, "tags": ["a"]})
    boundary = ModelBoundary(rec.model)
    schema = {
        "label": (Literal["billing", "login"], "the ticket topic"),
        "score": (Annotated[int, "how urgent, 1-5"], None),
        "tags": (list[str], None),
    }
    result = boundary.produce(AgentState(), "Classify [label] [score] [tags]", schema)
    assert result == {"label": "billing", "score": 3, "tags": ["a"]}
    (tool,) = rec.infos[0].output_tools
    params = tool.parameters_json_schema
    assert params["title"] == "KediOutput"
    assert params["required"] == ["label", "score", "tags"]
    props = params["properties"]
    assert props["label"] == {
        "description": "the ticket topic",
        "enum": ["billing", "login"],
        "type": "string",
    }
    assert props["score"]["description"] == "how urgent, 1-5"
    assert props["score"]["type"] == "integer"
    assert props["tags"]["items"] == {"type": "string"}
    assert "description" not in props["tags"]
    assert rec.prompt() == "Classify [label] [score] [tags]"


def test_a_pydantic_field_description_reaches_the_model(recorder, tmp_path) -> None:
    """``Annotated[int, Field(description=..., gt=0)]`` kept its constraint in the output
    schema but lost its description (the model never saw it)."""
    from pytest_kedi.runtime import load

    rec = recorder(lambda info: {"n": 2, "d": 1})
    source = (
        "```\nfrom pydantic import Field\n```\n"
        '>> Count [n: `Annotated[int, Field(description="how many", gt=0)]`] '
        '[d: `Annotated[int, Field(description="inner"), "outer"]`]\n'
        "= `n + d`\n"
    )
    program = load(tmp_path / "count.kedi", source=source, model=rec.model)
    assert program.run() == 3
    props = rec.infos[0].output_tools[0].parameters_json_schema["properties"]
    assert props["n"] == {"description": "how many", "exclusiveMinimum": 0, "type": "integer"}
    assert props["d"]["description"] == "outer"  # a Kedi description string wins


def test_a_custom_type_field_keeps_its_pydantic_description(recorder, tmp_path) -> None:
    """The same in a custom type's field: the output schema's definition of the type
    lost the description."""
    from pytest_kedi.runtime import load

    rec = recorder(lambda info: {"t": {"n": 2}})
    source = (
        "```\nfrom pydantic import Field\n```\n"
        '~Ticket(n: `Annotated[int, Field(description="how many", gt=0)]`)\n'
        ">> Give [t: Ticket]\n"
        "= `t.n`\n"
    )
    program = load(tmp_path / "ticket.kedi", source=source, model=rec.model)
    assert program.run() == 2
    schema = rec.infos[0].output_tools[0].parameters_json_schema
    (ticket,) = schema["$defs"].values()
    assert ticket["properties"]["n"]["description"] == "how many"


def test_result_keeps_native_values_and_custom_types(recorder) -> None:
    rec = recorder(lambda info: {"who": {"name": "Ada", "age": 36}})
    result = ModelBoundary(rec.model).produce(AgentState(), "x", {"who": (Person, None)})
    assert result == {"who": Person(name="Ada", age=36)}
    assert type(result["who"]) is Person


def test_schema_accepts_bare_types(recorder) -> None:
    rec = recorder(lambda info: {"n": 4})
    assert ModelBoundary(rec.model).produce(AgentState(), "x", {"n": int}) == {"n": 4}


def test_field_names_shadowing_basemodel_work(recorder) -> None:
    """They work (the runtime warns about them at their `.kedi` line: test_model_templates)."""
    names = ("json", "model_config", "copy", "_private")
    rec = recorder(lambda info: {name: name.upper() for name in names})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ModelBoundary(rec.model).produce(
            AgentState(), "x", {name: (str, None) for name in names}
        )
    assert [str(w.message) for w in caught] == []
    assert result == {name: name.upper() for name in names}
    props = rec.infos[0].output_tools[0].parameters_json_schema["properties"]
    assert list(props) == list(names)


def test_ordinary_field_names_do_not_warn(recorder) -> None:
    rec = recorder(lambda info: {"answer": "yes"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ModelBoundary(rec.model).produce(AgentState(), "x", {"answer": (str, None)})


def test_instructions_are_rendered_at_call_time(recorder) -> None:
    rec = recorder(lambda info: "ok")
    rendered: list[str] = []

    def instructions() -> str:
        rendered.append("now")
        return f"Be brief (#{len(rendered)})."

    state = AgentState(instructions=instructions)
    boundary = ModelBoundary(rec.model)
    assert rendered == []
    boundary.invoke(state, "a")
    boundary.invoke(state, "b")
    assert [info.instructions for info in rec.infos] == ["Be brief (#1).", "Be brief (#2)."]


def test_no_instructions_means_none(recorder) -> None:
    rec = recorder(lambda info: "ok")
    ModelBoundary(rec.model).invoke(AgentState(instructions=lambda: ""), "a")
    ModelBoundary(rec.model).invoke(AgentState(), "a")
    assert [info.instructions for info in rec.infos] == [None, None]


def test_settings_reach_the_model(recorder) -> None:
    rec = recorder(lambda info: "ok")
    state = AgentState(settings={"temperature": 0.2, "max_tokens": 50, "cwd": "."})
    ModelBoundary(rec.model).invoke(state, "a")
    assert rec.infos[0].model_settings == {"temperature": 0.2, "max_tokens": 50}


def test_unknown_setting_fails_before_the_call(recorder) -> None:
    rec = recorder(lambda info: "ok")
    with pytest.raises(ModelError, match="unknown setting 'typo'"):
        ModelBoundary(rec.model).invoke(AgentState(settings={"typo": 1}), "a")
    assert rec.infos == []


def test_text_call_returns_the_text(recorder) -> None:
    rec = recorder(lambda info: "plain answer")
    assert ModelBoundary(rec.model).invoke(AgentState(), "say it") == "plain answer"
    assert rec.infos[0].output_tools == []
    assert rec.prompt() == "say it"


def test_unsupported_marker_raises_at_the_call(recorder) -> None:
    rec = recorder(lambda info: "ok")
    state = AgentState(unsupported=(("> mcp:", 3), ("> use:", 4)))
    with pytest.raises(UnsupportedFeature) as caught:
        ModelBoundary(rec.model).invoke(state, "a")
    assert caught.value.construct == "> mcp:"
    assert caught.value.line == 3
    assert str(caught.value) == "`> mcp:` is not supported by pytest-kedi (line 3)"
    assert rec.infos == []


@pytest.mark.parametrize("adapter", ["dspy", "langchain"])
def test_other_adapters_are_unsupported(adapter: str) -> None:
    with pytest.raises(UnsupportedFeature, match=f"`> adapter: {adapter}` is not supported"):
        ModelBoundary(TestModel()).invoke(AgentState(adapter=adapter), "a")


def test_requires_advertised_capabilities_pass() -> None:
    state = AgentState(requires=frozenset({"structured_output", "model_override", "settings"}))
    assert ModelBoundary(TestModel()).produce(state, "a", {"ok": (bool, None)}) == {"ok": False}


def test_requires_unadvertised_capability_names_it() -> None:
    state = AgentState(requires=frozenset({"settings", "tool_registration"}))
    with pytest.raises(UnsupportedFeature, match="`> requires: tool_registration`"):
        ModelBoundary(TestModel()).invoke(state, "a")


def test_adapter_without_structured_output_rejects_fields(fake_adapter_factory) -> None:
    boundary = ModelBoundary(adapter=fake_adapter_factory(structured=False))
    with pytest.raises(ModelError, match="no structured output"):
        boundary.produce(AgentState(), "a", {"x": (str, None)})
    assert boundary.invoke(AgentState(), "a") == "text"


def test_invalid_model_output_is_a_one_line_model_error(recorder) -> None:
    rec = recorder(lambda info: {"n": "not a number"})
    with pytest.raises(ModelError) as caught:
        ModelBoundary(rec.model).produce(AgentState(), "a", {"n": (int, None)})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("model call failed (function:")
    assert "UnexpectedModelBehavior" in message


def test_provider_failure_is_a_model_error_naming_the_cause() -> None:
    def boom(messages, info):
        raise ConnectionError("connection reset\nby peer")

    with pytest.raises(ModelError) as caught:
        ModelBoundary(FunctionModel(boom)).invoke(AgentState(), "a")
    assert str(caught.value).endswith("ConnectionError: connection reset by peer")
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_unbuildable_output_type_is_a_model_error() -> None:
    class Opaque:
        pass

    with pytest.raises(ModelError, match="cannot build the output schema"):
        ModelBoundary(TestModel()).produce(AgentState(), "a", {"x": (Opaque, None)})


class _Opaque:
    pass


@pytest.mark.parametrize(
    "field_type",
    [_Opaque, Callable[[], int]],  # no pydantic schema; no JSON schema
    ids=["no-core-schema", "no-json-schema"],
)
@pytest.mark.parametrize("injected", [True, False], ids=["function-model", "offline-test"])
def test_an_unbuildable_output_schema_calls_no_model(field_type: object, injected: bool) -> None:
    """The schema fails before any request: the model is not called, and no call is
    counted for it (the ``models:`` line, the offline model's synthetic-output flag)."""
    calls: list[object] = []

    def answer(messages, info):
        calls.append(info)
        return ModelResponse(parts=[TextPart("x")])

    boundary = ModelBoundary(FunctionModel(answer) if injected else None)
    with pytest.raises(ModelError) as caught:
        boundary.produce(AgentState(), "a", {"x": (field_type, None)})
    assert str(caught.value).startswith("cannot build the output schema: ")
    assert calls == []
    assert boundary.call_counts() == {}
    assert boundary.synthetic_calls == 0


def test_call_from_inside_a_running_event_loop() -> None:
    def answer(messages, info):
        return ModelResponse(parts=[TextPart("inside")])

    boundary = ModelBoundary(FunctionModel(answer))

    async def main() -> str:
        return boundary.invoke(AgentState(), "a")

    assert asyncio.run(main()) == "inside"


def test_async_adapter_api(recorder) -> None:
    rec = recorder(lambda info: {"x": 1} if info.output_tools else "txt")
    adapter = PydanticAIAdapter()
    assert adapter.kind == "agent-framework"
    assert adapter.shortname == "pydantic"
    assert adapter.capabilities.supports_structured_output

    async def main() -> tuple[dict[str, object], str]:
        produced = await adapter.produce(
            template="t", output_schema={"x": int}, model=rec.model, instructions="sys"
        )
        text = await adapter.invoke(prompt="p", model=rec.model, settings={"seed": 1})
        return produced, text

    assert asyncio.run(main()) == ({"x": 1}, "txt")
    assert rec.infos[0].instructions == "sys"
    assert rec.infos[1].model_settings == {"seed": 1}
    assert adapter.produce_sync(template="t", output_schema={"x": int}, model=rec.model) == {"x": 1}
    assert adapter.invoke_sync(prompt="p", model=rec.model) == "txt"
