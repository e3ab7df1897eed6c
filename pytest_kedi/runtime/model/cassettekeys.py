"""Cassette keys: `request_key` for one request, `KeyTemplate` for the first request of a call.

A request's key is the SHA-256 of the canonical JSON (sorted keys, no whitespace) of

* ``call``: the SHA-256 of the resolved model (its class and name), the model settings and
  the request parameters (output schema, output and function tool definitions);
* ``messages``: the rendered message list, instructions included;
* ``repeat``: the repeat index of the row (0 outside a row).

Changing any of them misses exactly the requests it shapes. Requests alike in all of them,
sent more than once in one row (or test case, program run, dataset load), are told apart by
their occurrence (`occurrence_key`): the first keeps the key above, so cassettes recorded
before occurrences were counted replay unchanged; the n-th (n > 0) has the SHA-256 of the
canonical JSON of that key and n. Messages and parameters enter
the key through `key_view`, which keeps what the model is sent and leaves out what is not:
metadata about an answer's origin (timestamps, run ids, usage, provider details, the
answering model's name) and every field that holds its default value. A pydantic-ai release
that adds a field with a default therefore keeps every key, so cassettes recorded with one
version replay under another. (The model, settings and parameters are hashed apart so that
the text hashed per replayed call stays short: see `KeyTemplate`.)

A call answered from the cassette in the calling thread has no request to hash. Its key
comes from a `KeyTemplate`: the canonical key text of the call's first request with marks
where the prompt and the repeat index go, made once per model, instructions, settings and
output schema (`key_template`) by letting pydantic-ai prepare that request, exactly as for a
live call, and handing it to a stand-in model (`_Capture`) that keeps it. Filling in the
marks gives the text `request_key` hashes, byte for byte.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from pydantic_ai.direct import model_request
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_core import to_jsonable_python

from pytest_kedi.runtime.model.direct import first_request

__all__ = [
    "KeyTemplate",
    "canonical",
    "key_template",
    "key_view",
    "occurrence_key",
    "occurrence_note",
    "request_key",
]

#: fields about where an answer came from, not what the model is sent (left out of keys)
_ORIGIN = frozenset(
    {
        "timestamp",
        "run_id",
        "conversation_id",
        "metadata",
        "usage",
        "model_name",
        "provider_name",
        "provider_url",
        "provider_details",
        "provider_response_id",
        "finish_reason",
        "id",
    }
)
#: fields kept even at their default value: the discriminators of messages and parts
_KINDS = frozenset({"kind", "part_kind"})
_MISSING = object()
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
#: where a key template's prompt and repeat index go (never part of a real request)
_PROMPT_MARK = f"kedi-prompt-{uuid.uuid4().hex}"
_REPEAT_MARK = f"kedi-repeat-{uuid.uuid4().hex}"


def canonical(value: Any) -> str:
    """``value`` as canonical JSON (sorted keys, no whitespace, non-ASCII kept)."""
    return _ENCODER.encode(value)


_FIELDS: dict[type, tuple[tuple[str, Any], ...]] = {}


def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """``(name, default)`` of each field of dataclass ``cls`` (`_MISSING`: no default)."""
    known = _FIELDS.get(cls)
    if known is None:
        items = []
        for item in dataclasses.fields(cls):
            if item.default is not dataclasses.MISSING:
                default: Any = item.default
            elif item.default_factory is not dataclasses.MISSING:
                default = item.default_factory()
            else:
                default = _MISSING
            items.append((item.name, default))
        known = _FIELDS[cls] = tuple(items)
    return known


def key_view(value: Any, leave_out: frozenset[str] = _ORIGIN) -> Any:
    """``value`` (pydantic-ai messages, request parameters, tool definitions: dataclasses)
    as JSON builtins, without the fields named in ``leave_out`` and without fields that hold
    their default value (the discriminators ``kind``/``part_kind`` are always kept)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        retry = _retry_view(value)
        if retry is not None:
            return retry
        view: dict[str, Any] = {}
        for name, default in _fields(type(value)):
            if name in leave_out:
                continue
            item = getattr(value, name)
            if name in _KINDS or default is _MISSING or not _same(item, default):
                view[name] = key_view(item, leave_out)
        return view
    if type(value) in (str, int, float, bool) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): key_view(v, leave_out) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [key_view(v, leave_out) for v in value]
    return to_jsonable_python(value, bytes_mode="base64", fallback=str)


def _retry_view(part: Any) -> dict[str, Any] | None:
    """One view of the feedback asking the model to try again, whichever part carries it:
    older pydantic-ai releases send a `RetryPromptPart`, newer ones a `ToolReturnPart` with
    outcome ``retried`` (feedback on a tool call) or a `RetryFeedbackPart`; the model is sent
    the same content either way."""
    kind = getattr(part, "part_kind", None)
    if kind not in ("retry-prompt", "retry-feedback") and not (
        kind == "tool-return" and getattr(part, "outcome", None) == "retried"
    ):
        return None
    view = {"part_kind": "retry", "content": key_view(part.content)}
    tool = getattr(part, "tool_name", None)
    if tool is not None:
        view["tool_name"] = tool
        view["tool_call_id"] = part.tool_call_id
    return view


def _same(value: Any, default: Any) -> bool:
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # a value whose comparison raises is never a default
        return False


def _call_digest(
    model: str, settings: Mapping[str, Any] | None, parameters: ModelRequestParameters
) -> str:
    payload = {"model": model, "parameters": key_view(parameters), "settings": dict(settings or {})}
    return _digest(canonical(payload))


def _key_text(
    model: str,
    messages: list[ModelMessage],
    settings: Mapping[str, Any] | None,
    parameters: ModelRequestParameters,
    repeat: int | str,
) -> str:
    payload = {
        "call": _call_digest(model, settings, parameters),
        "messages": key_view(messages),
        "repeat": repeat,
    }
    return canonical(payload)


_sha256 = hashlib.sha256


def _digest(text: str) -> str:
    return _sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def request_key(
    model: str,
    messages: list[ModelMessage],
    settings: Mapping[str, Any] | None,
    parameters: ModelRequestParameters,
    repeat: int,
) -> str:
    """The cassette key of one request (see the module docstring)."""
    return _digest(_key_text(model, messages, settings, parameters, repeat))


def occurrence_key(key: str, occurrence: int) -> str:
    """The key of the ``occurrence``-th (0-based) request whose first occurrence's key is
    ``key``: ``key`` itself for the first, else the hash of ``key`` and ``occurrence``."""
    if not occurrence:
        return key
    return _digest(canonical({"key": key, "occurrence": occurrence}))


def occurrence_note(
    counts: tuple[dict[str, int], str] | None, occurrence: int, first: object
) -> str:
    """What a miss message adds about a request sent before in its row (case, run):
    ``counts`` is `rowscope.request_counts`, ``first`` the first occurrence's entry."""
    if not occurrence or counts is None:
        return ""
    n = occurrence + 1
    nth = f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    hint = "; the cassette has an entry for the first only: record it again" if first else ""
    return f", sent for the {nth} time in this {counts[1]} (each time has its own entry{hint})"


@dataclass(frozen=True, slots=True)
class KeyTemplate:
    """The canonical key text of a call's first request cut where its prompt and repeat
    index go: `key` fills them in and gives what `request_key` gives for that request."""

    head: str
    middle: str
    tail: str
    #: the hash of ``head`` alone, which each key's hash continues from a copy of
    hashed: Any = dataclasses.field(init=False, repr=False, compare=False)
    #: the UTF-8 of what follows the prompt, by repeat index (`after`)
    afters: dict[int, bytes] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hashed", _sha256(self.head.encode("utf-8", "surrogatepass")))
        object.__setattr__(self, "afters", {})

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
        after = self.afters.get(repeat) if type(repeat) is int else None
        if after is None:
            after = self.after(repeat)
        # as `_digest` of the whole text: UTF-8 encodes it piece by piece (a surrogate too);
        # `encode_basestring` is what `canonical` gives for a str (no ASCII escaping)
        hashed = self.hashed.copy()
        hashed.update(encode_basestring(prompt).encode("utf-8", "surrogatepass"))
        hashed.update(after)
        return hashed.hexdigest()

    def after(self, repeat: int) -> bytes:
        """The UTF-8 of the key text after the prompt (kept for the first repeat indexes)."""
        # what `canonical` gives for an int
        count = str(repeat) if type(repeat) is int else canonical(repeat)
        after = "".join((self.middle, count, self.tail)).encode("utf-8", "surrogatepass")
        if type(repeat) is int and len(self.afters) < 64:
            self.afters[repeat] = after
        return after


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
