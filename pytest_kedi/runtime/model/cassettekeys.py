"""Cassette keys: `request_key` for one request, `KeyTemplate` for the first request of a call.

A request's key is the SHA-256 of the canonical JSON (sorted keys, no whitespace) of the
resolved model (its class and name), the model settings, the rendered message list
(instructions included; timestamps and run ids left out), the request parameters (output
schema, output and function tool definitions) and the repeat index of the row (0 outside a
row). Changing any of them misses exactly the requests it shapes.

A call answered from the cassette in the calling thread has no request to hash. Its key
comes from a `KeyTemplate`: the canonical key text of the call's first request with marks
where the prompt and the repeat index go, made once per model, instructions, settings and
output schema (`key_template`) by letting pydantic-ai prepare that request, exactly as for a
live call, and handing it to a stand-in model (`_Capture`) that keeps it. Filling in the
marks gives the text `request_key` hashes, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai.direct import model_request
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from pytest_kedi.runtime.model.direct import first_request

__all__ = ["KeyTemplate", "canonical", "key_template", "request_key"]

#: request fields that change on every run without changing the answer
_VOLATILE = frozenset({"timestamp", "run_id", "conversation_id"})
_PARAMETERS: TypeAdapter[ModelRequestParameters] = TypeAdapter(ModelRequestParameters)
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
#: where a key template's prompt and repeat index go (never part of a real request)
_PROMPT_MARK = f"kedi-prompt-{uuid.uuid4().hex}"
_REPEAT_MARK = f"kedi-repeat-{uuid.uuid4().hex}"


def canonical(value: Any) -> str:
    """``value`` as canonical JSON (sorted keys, no whitespace, non-ASCII kept)."""
    return _ENCODER.encode(value)


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _key_text(
    model: str,
    messages: list[ModelMessage],
    settings: Mapping[str, Any] | None,
    parameters: ModelRequestParameters,
    repeat: int | str,
) -> str:
    payload = {
        "model": model,
        "settings": dict(settings or {}),
        "messages": _stable(ModelMessagesTypeAdapter.dump_python(messages, mode="json")),
        "parameters": _stable(_PARAMETERS.dump_python(parameters, mode="json")),
        "repeat": repeat,
    }
    return canonical(payload)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def request_key(
    model: str,
    messages: list[ModelMessage],
    settings: Mapping[str, Any] | None,
    parameters: ModelRequestParameters,
    repeat: int,
) -> str:
    """The cassette key of one request (see the module docstring)."""
    return _digest(_key_text(model, messages, settings, parameters, repeat))


@dataclass(frozen=True, slots=True)
class KeyTemplate:
    """The canonical key text of a call's first request cut where its prompt and repeat
    index go: `key` fills them in and gives what `request_key` gives for that request."""

    head: str
    middle: str
    tail: str

    @classmethod
    def cut(cls, text: str) -> KeyTemplate | None:
        """``text`` (made with the marks as prompt and repeat) cut at the marks, or ``None``
        unless each mark occurs once, the prompt's first."""
        prompt, repeat = canonical(_PROMPT_MARK), canonical(_REPEAT_MARK)
        if text.count(prompt) != 1 or text.count(repeat) != 1:
            return None
        head, rest = text.split(prompt)
        if repeat not in rest:
            return None
        middle, tail = rest.split(repeat)
        return cls(head, middle, tail)

    def key(self, prompt: str, repeat: int) -> str:
        # what `canonical` gives for a str (no ASCII escaping) and for an int
        count = str(repeat) if type(repeat) is int else canonical(repeat)
        return _digest(self.head + encode_basestring(prompt) + self.middle + count + self.tail)


def key_template(
    model: Model,
    label: str,
    instructions: str | None,
    settings: ModelSettings | None,
    parameters: ModelRequestParameters,
) -> KeyTemplate | None:
    """The key template of a call's first request to ``model`` (``label``: the model part
    of its keys). pydantic-ai's `model_request` prepares the request and hands it to a
    `_Capture` of ``model``, which keeps it without awaiting anything, so driving the
    coroutine once completes it. ``None`` when that does not happen; the call then goes
    through ``model.request`` as a live one does."""
    capture = _Capture(model)
    call = model_request(
        capture,
        first_request(_PROMPT_MARK, instructions),
        model_settings=settings,
        model_request_parameters=parameters,
    )
    try:
        call.send(None)
    except StopIteration:
        pass
    except Exception:
        return None
    else:  # it awaited something: not a plain preparation
        call.close()
        return None
    if capture.seen is None:
        return None
    messages, seen_settings, seen_parameters = capture.seen
    return KeyTemplate.cut(_key_text(label, messages, seen_settings, seen_parameters, _REPEAT_MARK))


class _Capture(WrapperModel):
    """Stands in for a model and keeps the request it is given."""

    seen: tuple[list[ModelMessage], ModelSettings | None, ModelRequestParameters] | None = None

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self.seen = (messages, model_settings, model_request_parameters)
        return ModelResponse(parts=[])
