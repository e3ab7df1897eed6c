"""One model call as pydantic-ai direct requests (`pydantic_ai.direct.model_request`).

A call is one request, plus at most one more when the answer fails output validation: the
second request carries the whole exchange and the validation error, so the model can
correct itself (what an `Agent` run with its default single output retry does, without
the agent machinery's per-call cost).

Structured calls offer the output both ways and let the model's profile choose the mode
(``output_mode="auto"``): an output tool (tool mode) and an output object definition
(native mode, or prompted mode where the schema goes into the instructions). The answer
is read from a call of the output tool when the response has one, else from its text as
JSON (Markdown fences allowed).

Every request goes through ``Model.request`` of the model the adapter resolved, so
wrappers around that model (`pydantic_ai.models.wrapper.WrapperModel`) see every request.
The one exception is `replayed_output`: a call whose first answer is in the cassette is
answered in the calling thread, read and validated by the same code as a live answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from pydantic import BaseModel, ValidationError
from pydantic_ai import messages as pai_messages
from pydantic_ai.direct import model_request
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from pytest_kedi.runtime.model.cassettefiles import Entry
from pytest_kedi.runtime.model.schema import StableToolJsonSchema, schema_error
from pytest_kedi.runtime.model.stored import stored_answer, stored_tool_call

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime.model.cassettes import CassetteModel

__all__ = [
    "MAX_OUTPUT_RETRIES",
    "CallStats",
    "OutputPlan",
    "first_request",
    "replayed_output",
    "stored_output",
    "request_output",
]

#: Requests after the first one that an invalid answer may cost (an `Agent`'s default).
MAX_OUTPUT_RETRIES = 1
OUTPUT_TOOL_NAME = "final_result"
OUTPUT_TOOL_DESCRIPTION = "The final response which ends this conversation"
_TEXT_PARAMS = ModelRequestParameters()
_FENCED_JSON = re.compile(r"```(?:\w+)?\r?\n(\{.*?\})\s*(?:\r?\n?```|\Z)", flags=re.DOTALL)
_ASK_FOR_TEXT = "Please return text."
_ASK_FOR_TOOL = "Please include your response in a tool call."
_ASK_FOR_OUTPUT = "Please return text or include your response in a tool call."
#: why a call failed whose last answer held no text (nor a call of the output tool)
_EMPTY = "the model's answer was empty"
#: pydantic-ai 2.62 splits the retry part in two; 2.58 has only `RetryPromptPart`.
_SPLIT_RETRY_PARTS = hasattr(pai_messages, "RetryFeedbackPart")


class Tokens(Protocol):
    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...


class Answer(Protocol):
    """What reading an answer needs: a `ModelResponse` has it, and so has an answer read
    from a cassette (`pytest_kedi.runtime.model.cassettes.StoredAnswer`)."""

    @property
    def parts(self) -> Sequence[ModelResponsePart]: ...

    @property
    def usage(self) -> Tokens: ...


@dataclass(slots=True)
class CallStats:
    """What one call cost and answered, filled on the model loop, read by the caller after."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    #: the validated output: ``{name: value}`` for structured calls, the text otherwise
    output: Any = None

    def count(self, response: Answer) -> None:
        self.requests += 1
        usage = response.usage
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0


@dataclass(frozen=True, slots=True)
class OutputPlan:
    """How a structured call asks for and reads its output model (built once per model)."""

    output: type[BaseModel]
    params: ModelRequestParameters = field(repr=False)
    #: the output model's pydantic-core validator
    validator: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "validator", self.output.__pydantic_validator__)

    @classmethod
    def build(cls, output: type[BaseModel]) -> OutputPlan:
        try:
            schema = output.model_json_schema(schema_generator=StableToolJsonSchema)
        except Exception as error:  # a field type without a JSON schema (`Callable`)
            raise schema_error(error) from error
        name = schema.get("title") or output.__name__
        description = schema.pop("description", None)
        tool = ToolDefinition(
            name=OUTPUT_TOOL_NAME,
            description=description or OUTPUT_TOOL_DESCRIPTION,
            parameters_json_schema=schema,
            kind="output",
        )
        target = OutputObjectDefinition(json_schema=schema, name=name, description=description)
        params = ModelRequestParameters(
            output_mode="auto", output_tools=[tool], output_object=target, allow_text_output=True
        )
        return cls(output, params)


class _Retry(Exception):
    """An answer that cannot be used: ``part`` tells the model why (and ``error``, or
    ``reason`` when there is none, tells the user if it was the last)."""

    def __init__(
        self, part: ModelRequestPart, error: BaseException | None = None, reason: str = ""
    ) -> None:
        super().__init__()
        self.part = part
        self.error = error
        self.reason = reason


async def request_output(
    model: Model,
    plan: OutputPlan | None,
    prompt: str,
    instructions: str | None,
    settings: Mapping[str, Any] | None,
    stats: CallStats,
) -> BaseModel | str:
    """The validated output of one call (``plan`` None: text); usage goes to ``stats``."""
    history = first_request(prompt, instructions)
    params = plan.params if plan is not None else _TEXT_PARAMS
    model_settings = _model_settings(settings)
    retry: _Retry | None = None
    for _ in range(MAX_OUTPUT_RETRIES + 1):
        response = await model_request(
            model, history, model_settings=model_settings, model_request_parameters=params
        )
        stats.count(response)
        try:
            output = _read_output(response, plan, model)
        except _Retry as caught:
            retry = caught
            history.append(response)
            history.append(ModelRequest(parts=[caught.part], instructions=instructions))
            continue
        stats.output = output
        return output
    assert retry is not None
    reason = f"; {retry.reason}" if retry.reason else ""  # (an error says why itself)
    raise UnexpectedModelBehavior(
        f"Exceeded maximum output retries ({MAX_OUTPUT_RETRIES}){reason}"
    ) from retry.error


def replayed_output(
    model: CassetteModel,
    plan: OutputPlan | None,
    prompt: str,
    instructions: str | None,
    settings: Mapping[str, Any] | None,
    stats: CallStats,
    repeat: int | None = None,
) -> BaseModel | str | None:
    """The validated output of one call whose first answer ``model``'s cassette holds, read
    in the calling thread (no request, no event loop); usage goes to ``stats``. ``repeat``:
    the row's repeat index (``None``: read from the current row scope).

    ``None`` when the call must be made by `request_output` instead, which then behaves
    exactly as without this shortcut: in record mode, on a cassette miss, and when the stored
    answer fails output validation (the validation retry is a second request, made there).
    """
    params = plan.params if plan is not None else _TEXT_PARAMS
    model_settings = cast("ModelSettings | None", settings or None)  # read, never changed
    output: BaseModel | str | None = model.replay(
        prompt,
        instructions,
        model_settings,
        params,
        repeat,
        lambda entry: stored_output(entry, plan, model, stats),
    )
    return output


def stored_output(
    entry: Entry, plan: OutputPlan | None, model: Model, stats: CallStats
) -> BaseModel | str | None:
    """`replayed_output` of the cassette entry holding the answer."""
    if plan is not None:
        call = stored_tool_call(entry, OUTPUT_TOOL_NAME)
        if call is not None:
            # the usual answer, read as `_read` reads it without building its parts
            args, tokens_in, tokens_out = call
            try:
                output = cast(BaseModel, plan.validator.validate_python(args))
            except ValidationError:
                return None
            stats.requests += 1
            stats.input_tokens += tokens_in
            stats.output_tokens += tokens_out
            stats.output = output
            return output
    answer = stored_answer(entry)
    if answer is None:
        return None
    try:
        result = _read_output(answer, plan, model)
    except _Retry:
        return None
    stats.count(answer)
    stats.output = result
    return result


def first_request(prompt: str, instructions: str | None) -> list[ModelMessage]:
    """The message list of a call's first request."""
    return [ModelRequest(parts=[UserPromptPart(prompt)], instructions=instructions)]


def _model_settings(settings: Mapping[str, Any] | None) -> ModelSettings | None:
    return cast(ModelSettings, dict(settings)) if settings else None


def _read_output(response: Answer, plan: OutputPlan | None, model: Model) -> BaseModel | str:
    """The validated output of ``response``; `_Retry` when it needs a validation retry."""
    return _read(response, plan, model) if plan is not None else _read_text(response)


def _text(response: Answer) -> str:
    return "".join(part.content for part in response.parts if isinstance(part, TextPart))


def _read_text(response: Answer) -> str:
    text = _text(response)
    if not text:
        raise _Retry(_feedback(_ASK_FOR_TEXT, "no_output"), reason=_EMPTY)
    return text


def _read(response: Answer, plan: OutputPlan, model: Model) -> BaseModel:
    call = None
    for part in response.parts:  # the first call of the output tool
        if isinstance(part, ToolCallPart) and part.tool_name == OUTPUT_TOOL_NAME:
            call = part
            break
    if call is not None:
        try:
            if isinstance(call.args, str):
                return plan.output.model_validate_json(call.args or "{}")
            # what `model_validate` does, without its wrapper (hot for replayed calls)
            return cast(BaseModel, plan.validator.validate_python(call.args or {}))
        except ValidationError as error:
            raise _Retry(_tool_retry(error, call), error) from None
    text = _text(response)
    if not text:
        raise _Retry(_feedback(_ASK_FOR_OUTPUT, "no_output"), reason=_EMPTY)
    if not text.startswith("{"):
        fenced = _FENCED_JSON.search(text)
        if fenced is not None:
            text = fenced.group(1)
    try:
        return plan.output.model_validate_json(text)
    except ValidationError as error:
        if _prefers_tools(model) and not text.lstrip().startswith("{"):
            raise _Retry(_feedback(_ASK_FOR_TOOL, "no_output"), error) from None
        raise _Retry(_feedback(_errors(error), "validation_error"), error) from None


def _prefers_tools(model: Model) -> bool:
    """Whether the model answers structured calls through the output tool."""
    try:
        profile = model.profile
    except NotImplementedError:  # a router (FallbackModel) has no profile of its own
        return True
    return bool(profile.get("default_structured_output_mode", "tool") == "tool")


def _errors(error: ValidationError) -> list[Any]:
    return cast(list[Any], error.errors(include_url=False, include_context=False))


def _tool_retry(error: ValidationError, call: ToolCallPart) -> ModelRequestPart:
    """The answer to an output tool call whose arguments failed validation."""
    if _SPLIT_RETRY_PARTS:
        return pai_messages.ToolReturnPart(
            tool_name=call.tool_name,
            content=_errors(error),
            tool_call_id=call.tool_call_id,
            outcome="retried",  # type: ignore[arg-type,unused-ignore]
            retry=pai_messages.RetryInfo(cause="validation_error"),  # type: ignore[attr-defined,call-arg,unused-ignore]
        )
    return pai_messages.RetryPromptPart(  # pragma: no cover - pydantic-ai 2.58
        content=_errors(error), tool_name=call.tool_name, tool_call_id=call.tool_call_id
    )


def _feedback(
    content: str | list[Any], cause: Literal["validation_error", "no_output"]
) -> ModelRequestPart:
    """Feedback on a response that answered no tool call."""
    if _SPLIT_RETRY_PARTS:
        return cast(
            ModelRequestPart,
            pai_messages.RetryFeedbackPart(  # type: ignore[attr-defined,unused-ignore]
                content=content,
                retry=pai_messages.RetryInfo(cause=cause),  # type: ignore[attr-defined,unused-ignore]
            ),
        )
    return pai_messages.RetryPromptPart(content=content)  # pragma: no cover - pydantic-ai 2.58
