"""What a row's model calls report: their `Usage` (requests and tokens) and, with tracing on,
one `ModelCallTrace` each, as records and as JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pytest_kedi.evals.safetext import clean_with
from pytest_kedi.runtime.rowscope import ModelCallTrace

__all__ = [
    "NO_USAGE",
    "ModelCallTrace",
    "Usage",
    "call_from_json",
    "call_to_json",
    "clean_call",
    "new_usage",
]


def _optional(text: str | None, found: list[tuple[str, str]]) -> str | None:
    return None if text is None else clean_with(text, found)


def clean_call(call: ModelCallTrace, found: list[tuple[str, str]]) -> ModelCallTrace:
    return replace(
        call,
        prompt=clean_with(call.prompt, found),
        instructions=_optional(call.instructions, found),
        answer=clean_with(call.answer, found),
    )


def call_to_json(call: ModelCallTrace) -> dict[str, Any]:
    return {
        "model": call.model,
        "prompt": call.prompt,
        "instructions": call.instructions,
        "answer": call.answer,
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
        "duration_s": call.duration_s,
    }


def call_from_json(data: Mapping[str, Any]) -> ModelCallTrace:
    return ModelCallTrace(
        model=str(data["model"]),
        prompt=str(data["prompt"]),
        instructions=None if data.get("instructions") is None else str(data["instructions"]),
        answer=str(data["answer"]),
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        duration_s=float(data.get("duration_s") or 0.0),
    )


@dataclass(frozen=True, slots=True)
class Usage:
    """Model usage: requests issued and tokens, summed over a row, a suite or a run (as
    pydantic-ai reports them; answers replayed from a cassette count what they recorded)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.requests + other.requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
        )

    def __bool__(self) -> bool:
        return bool(self.requests or self.input_tokens or self.output_tokens)

    @classmethod
    def of(cls, requests: int = 0, input_tokens: int = 0, output_tokens: int = 0) -> Usage:
        """A usage; every zero usage is one shared instance (most rows call no model)."""
        if requests or input_tokens or output_tokens:
            return cls(requests, input_tokens, output_tokens)
        return NO_USAGE

    @classmethod
    def total(cls, usages: Iterable[Usage]) -> Usage:
        requests = input_tokens = output_tokens = 0
        for usage in usages:  # one pass, no intermediate sums (a suite may have many rows)
            requests += usage.requests
            input_tokens += usage.input_tokens
            output_tokens += usage.output_tokens
        return cls.of(requests, input_tokens, output_tokens)

    def to_json(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Usage:
        if not data:
            return NO_USAGE
        return cls.of(
            int(data.get("requests", 0)),
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
        )


#: The usage of a row that made no model request (shared: `Usage` is immutable; `Usage.of`).
NO_USAGE = Usage()

_new = object.__new__
#: the setters of `Usage`'s slots, which its frozen ``__setattr__`` does not stand in front of
_SET_REQUESTS = Usage.__dict__["requests"].__set__
_SET_INPUT_TOKENS = Usage.__dict__["input_tokens"].__set__
_SET_OUTPUT_TOKENS = Usage.__dict__["output_tokens"].__set__


def new_usage(requests: int, input_tokens: int, output_tokens: int) -> Usage:
    """``Usage(requests, input_tokens, output_tokens)``, set through its slots: the frozen
    dataclass's ``__init__`` sets each field with ``object.__setattr__``, which costs twice
    as much (one usage is made for each row that called a model: `row_usage`)."""
    usage: Usage = _new(Usage)
    _SET_REQUESTS(usage, requests)
    _SET_INPUT_TOKENS(usage, input_tokens)
    _SET_OUTPUT_TOKENS(usage, output_tokens)
    return usage
