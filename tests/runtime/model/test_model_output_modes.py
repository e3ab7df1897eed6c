"""Structured output in every mode a model's profile asks for (tool, native, prompted), the one
output-validation retry that feeds the validation error back, and usage per call."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.usage import RequestUsage

from pytest_kedi.runtime.model import AgentState, ModelBoundary, ModelError

Answer = Callable[[int, AgentInfo], ModelResponse]


class Scripted:
    """A FunctionModel answering request ``n`` (0-based) with ``answer(n, info)``."""

    def __init__(self, answer: Answer, profile: ModelProfile | None = None) -> None:
        self.answer = answer
        self.infos: list[AgentInfo] = []
        self.histories: list[list[ModelMessage]] = []
        self.model = FunctionModel(self._respond, profile=profile)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.histories.append(list(messages))
        self.infos.append(info)
        return self.answer(len(self.infos) - 1, info)

    def feedback(self, index: int = -1) -> str:
        """Everything the last request of history ``index`` tells the model."""
        last = self.histories[index][-1]
        assert isinstance(last, ModelRequest)
        return repr(last.parts)


def tool_answer(*answers: dict[str, Any]) -> Answer:
    def answer(n: int, info: AgentInfo) -> ModelResponse:
        (tool,) = info.output_tools
        return ModelResponse(parts=[ToolCallPart(tool.name, answers[n], tool_call_id=f"call-{n}")])

    return answer


def text_answer(*texts: str) -> Answer:
    def answer(n: int, info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[TextPart(texts[n])], usage=RequestUsage(input_tokens=10, output_tokens=3)
        )

    return answer


NATIVE = ModelProfile(supports_json_schema_output=True, default_structured_output_mode="native")
PROMPTED = ModelProfile(default_structured_output_mode="prompted")


def test_tool_output_by_default() -> None:
    model = Scripted(tool_answer({"n": 4}))
    assert ModelBoundary(model.model).produce(AgentState(), "count", {"n": int}) == {"n": 4}
    (info,) = model.infos
    assert info.model_request_parameters.output_mode == "tool"
    assert [tool.name for tool in info.output_tools] == ["final_result"]
    assert not info.allow_text_output


def test_an_invalid_tool_answer_is_retried_once_with_the_validation_error() -> None:
    model = Scripted(tool_answer({"n": "many"}, {"n": 4}))
    assert ModelBoundary(model.model).produce(AgentState(), "count", {"n": int}) == {"n": 4}
    assert len(model.infos) == 2
    second = model.histories[1]
    # The retry carries the whole exchange: the prompt, the rejected call, the error.
    assert [type(message).__name__ for message in second] == [
        "ModelRequest",
        "ModelResponse",
        "ModelRequest",
    ]
    feedback = model.feedback(1)
    assert "call-0" in feedback
    assert "valid integer" in feedback and "'many'" in feedback


def test_a_second_invalid_answer_fails_naming_the_field() -> None:
    model = Scripted(tool_answer({"n": "many"}, {"n": "lots"}))
    with pytest.raises(ModelError) as caught:
        ModelBoundary(model.model).produce(AgentState(), "count", {"n": int})
    assert len(model.infos) == 2
    message = str(caught.value)
    assert "UnexpectedModelBehavior" in message
    assert "output field 'n' expects int, got 'lots'" in message


def _positive(value: int) -> int:
    if value <= 0:
        raise ValueError(f"must be positive, got {value}")
    return value


def test_an_answer_a_fields_validator_rejects_keeps_the_validators_reason() -> None:
    """The failure said only ``expects Annotated[int, AfterValidator(_positive)], got -5``:
    the validator's own message was lost."""
    from typing import Annotated

    from pydantic import AfterValidator

    positive = Annotated[int, AfterValidator(_positive)]
    model = Scripted(tool_answer({"n": -5}, {"n": -5}))
    with pytest.raises(ModelError) as caught:
        ModelBoundary(model.model).produce(AgentState(), "count", {"n": positive})
    assert (
        "output field 'n' expects Annotated[int, AfterValidator(_positive)], got -5 (int): "
        "must be positive, got -5"
    ) in str(caught.value)


@pytest.mark.parametrize(
    ("constraint", "answer", "reason"),
    [
        ("gt", -1, "got -1 (int): Input should be greater than 0"),
        ("max_length", "toolong", "got 'toolong' (str): String should have at most 3 characters"),
    ],
)
def test_an_answer_a_fields_constraint_rejects_names_the_constraint(
    constraint: str, answer: object, reason: str
) -> None:
    """A `Field(gt=0)` or `Field(max_length=3)` constraint's reason was dropped from the
    model output's error (it was kept for a validator and at every other boundary)."""
    from typing import Annotated

    from pydantic import Field

    field = Field(gt=0) if constraint == "gt" else Field(max_length=3)
    base = int if constraint == "gt" else str
    model = Scripted(tool_answer({"n": answer}, {"n": answer}))
    with pytest.raises(ModelError) as caught:
        ModelBoundary(model.model).produce(AgentState(), "give", {"n": Annotated[base, field]})
    assert "output field 'n' expects Annotated[" in str(caught.value)
    assert str(caught.value).endswith(reason)


def test_a_type_mismatch_adds_no_reason() -> None:
    model = Scripted(tool_answer({"n": "lots"}, {"n": "lots"}))
    with pytest.raises(ModelError) as caught:
        ModelBoundary(model.model).produce(AgentState(), "count", {"n": int})
    assert str(caught.value).endswith("output field 'n' expects int, got 'lots' (str)")


def _invalid_tool_arguments(n: int, info: AgentInfo) -> ModelResponse:
    (tool,) = info.output_tools
    return ModelResponse(parts=[ToolCallPart(tool.name, "{not json", tool_call_id=f"c{n}")])


@pytest.mark.parametrize(
    ("answer", "profile", "reason"),
    [
        (_invalid_tool_arguments, None, "the answer is invalid: Invalid JSON: key must be a"),
        (text_answer("[1]", "[1]"), NATIVE, "the answer is invalid: Input should be an object"),
    ],
)
def test_an_answer_that_is_not_a_json_object_says_why(
    answer: Answer, profile: ModelProfile | None, reason: str
) -> None:
    """The failure said only ``Exceeded maximum output retries (1)``: the reason (invalid
    JSON, not an object) was dropped, as it names no output field."""
    model = Scripted(answer, profile)
    with pytest.raises(ModelError) as caught:
        ModelBoundary(model.model).produce(AgentState(), "count", {"n": int})
    assert f"Exceeded maximum output retries (1); {reason}" in str(caught.value)


@pytest.mark.parametrize("structured", [False, True])
def test_an_empty_answer_says_so(structured: bool) -> None:
    """Two empty answers (the first and its retry) to a `<<` capture or a `>>` template
    failed with only ``Exceeded maximum output retries (1)``: the answer was empty."""
    model = Scripted(text_answer("", ""))
    boundary = ModelBoundary(model.model)
    with pytest.raises(ModelError) as caught:
        if structured:
            boundary.produce(AgentState(), "count", {"n": int})
        else:
            boundary.invoke(AgentState(), "say something")
    assert str(caught.value).endswith(
        "Exceeded maximum output retries (1); the model's answer was empty"
    )
    assert len(model.infos) == 2  # the empty answer was retried once, as any other


def test_native_output_when_the_profile_prefers_it() -> None:
    model = Scripted(text_answer('{"label": "billing", "score": 3}'), NATIVE)
    result = ModelBoundary(model.model).produce(
        AgentState(), "classify", {"label": (str, "the topic"), "score": int}
    )
    assert result == {"label": "billing", "score": 3}
    (info,) = model.infos
    params = info.model_request_parameters
    assert params.output_mode == "native"
    assert info.output_tools == []
    assert params.output_object is not None
    assert params.output_object.json_schema["properties"]["label"]["description"] == "the topic"


def test_invalid_native_json_is_retried_with_the_error() -> None:
    model = Scripted(text_answer('{"score": "high"}', '```json\n{"score": 5}\n```'), NATIVE)
    assert ModelBoundary(model.model).produce(AgentState(), "rate", {"score": int}) == {"score": 5}
    assert len(model.infos) == 2
    assert "valid integer" in model.feedback(1)


def test_prompted_output_puts_the_schema_into_the_instructions() -> None:
    model = Scripted(text_answer('{"city": "Paris"}'), PROMPTED)
    state = AgentState(instructions=lambda: "Be brief.")
    assert ModelBoundary(model.model).produce(state, "where?", {"city": str}) == {"city": "Paris"}
    (info,) = model.infos
    assert info.model_request_parameters.output_mode == "prompted"
    assert info.instructions is not None
    assert info.instructions.startswith("Be brief.")
    assert '"city"' in info.instructions


def test_a_text_answer_to_a_tool_request_is_retried() -> None:
    def answer(n: int, info: AgentInfo) -> ModelResponse:
        if n == 0:
            return ModelResponse(parts=[TextPart("I think it is four.")])
        return tool_answer({}, {"n": 4})(n, info)

    model = Scripted(answer)
    assert ModelBoundary(model.model).produce(AgentState(), "count", {"n": int}) == {"n": 4}
    assert len(model.infos) == 2


def test_an_empty_text_answer_is_retried() -> None:
    model = Scripted(text_answer("", "hello"))
    assert ModelBoundary(model.model).invoke(AgentState(), "greet") == "hello"
    assert len(model.infos) == 2


def test_text_parts_are_joined() -> None:
    model = Scripted(lambda n, info: ModelResponse(parts=[TextPart("a"), TextPart("b")]))
    assert ModelBoundary(model.model).invoke(AgentState(), "x") == "ab"


def test_the_structured_answer_json_round_trips() -> None:
    model = Scripted(tool_answer({"tags": ["x", "y"]}))
    result = ModelBoundary(model.model).produce(AgentState(), "tag", {"tags": list[str]})
    assert json.dumps(result) == '{"tags": ["x", "y"]}'
