"""What a cassette entry answered, read without validating the whole stored response
(`pytest_kedi.runtime.model.cassettes.CassetteModel.request` validates it): the usual
structured answer, one call of the output tool, as its arguments (`stored_tool_call`), and
any other answer of text and tool-call parts as those parts (`stored_answer`). Both give
``None`` for an answer they do not read; the call then takes the usual path, which does."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from pydantic_ai.messages import TextPart, ToolCallPart

from pytest_kedi.runtime.model.cassettefiles import Entry

__all__ = ["StoredAnswer", "StoredTokens", "stored_answer", "stored_tool_call"]


class StoredTokens(NamedTuple):
    input_tokens: int
    output_tokens: int


class StoredAnswer(NamedTuple):
    """What output validation and usage read of a stored answer (`direct.Answer`)."""

    parts: tuple[TextPart | ToolCallPart, ...]
    usage: StoredTokens


def stored_tool_call(entry: Entry, tool_name: str) -> tuple[dict[str, Any], int, int] | None:
    """The arguments and input and output token counts of an entry whose answer is exactly
    one call of the tool ``tool_name`` with an object of arguments (a structured call's usual
    answer), read without building its parts; ``None`` for any other answer
    (`stored_answer` reads those). What `stored_answer` would give for it, the arguments'
    object itself included."""
    try:
        data = entry["response"]
        (part,) = data["parts"]
        args = part["args"]
        if (
            type(args) is not dict
            or part["part_kind"] != "tool-call"
            or part["tool_name"] != tool_name
            or type(part["tool_call_id"]) is not str
        ):
            return None
        usage = data.get("usage", {})  # fields at their default value (0) are not stored
        tokens_in, tokens_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    if not (_count(tokens_in) and _count(tokens_out) and (len(usage) < 3 or _usage_ok(usage))):
        return None  # (`CassetteModel.request` names what is wrong with it)
    return args, tokens_in, tokens_out


def stored_answer(entry: Entry) -> StoredAnswer | None:
    """The text and tool-call parts and the token usage of an entry's answer, read without
    validating the whole stored response (as `CassetteModel.request` does); ``None`` for an
    answer holding any other part (thinking aside) or an unexpected shape."""
    try:
        data = entry["response"]
        parts: list[TextPart | ToolCallPart] = []
        for part in data["parts"]:
            kind = part["part_kind"]
            if kind == "text" and type(part["content"]) is str:
                parts.append(TextPart(part["content"]))
            elif (
                kind == "tool-call"
                and type(part["tool_name"]) is str
                and type(part["tool_call_id"]) is str
                and ((args := part.get("args")) is None or type(args) in (str, dict))
            ):
                parts.append(
                    ToolCallPart(
                        tool_name=part["tool_name"], args=args, tool_call_id=part["tool_call_id"]
                    )
                )
            elif kind != "thinking":
                return None
        usage = data.get("usage", {})  # fields at their default value (0) are not stored
        tokens = StoredTokens(usage.get("input_tokens", 0), usage.get("output_tokens", 0))
    except (KeyError, TypeError, AttributeError):
        return None
    if not (_count(tokens.input_tokens) and _count(tokens.output_tokens) and _usage_ok(usage)):
        return None
    return StoredAnswer(tuple(parts), tokens)


def _count(value: object) -> bool:
    """``value`` is a token count as an entry stores it: an int, 0 or more."""
    return type(value) is int and value >= 0


def _usage_ok(usage: dict[str, Any]) -> bool:
    """Every count of a stored usage is possible (`cassettefiles.usage_problem` names the
    one that is not)."""
    for name, value in usage.items():
        if name == "details":
            if type(value) is not dict or not all(_count(v) for v in value.values()):
                return False
        elif type(value) is bool or (isinstance(value, (int, float)) and not 0 <= value < math.inf):
            return False
    return True
