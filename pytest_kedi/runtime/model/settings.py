"""`> settings:` values and key filtering (`KEDI.md` §4.3)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from pytest_kedi.runtime.model.errors import ModelError

__all__ = [
    "DROPPED_SETTING_KEYS",
    "MODEL_SETTING_KEYS",
    "parse_setting_value",
    "validate_settings",
]

#: pydantic-ai `ModelSettings` keys passed through to the model (§4.3 reading).
MODEL_SETTING_KEYS: frozenset[str] = frozenset(
    {
        "max_tokens",
        "temperature",
        "top_p",
        "timeout",
        "parallel_tool_calls",
        "tool_choice",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "stop_sequences",
        "extra_headers",
        "thinking",
        "service_tier",
        "extra_body",
    }
)

#: Keys Kedi documents only for other backends (agent harnesses): silently dropped.
DROPPED_SETTING_KEYS: frozenset[str] = frozenset(
    {"stop", "cwd", "env", "sandbox", "permission_mode"}
)

_NUMBER = (int, float)
# Value checks for keys whose type is unambiguous; other keys are passed as given.
_VALUE_CHECKS: dict[str, tuple[tuple[type, ...], str]] = {
    "max_tokens": ((int,), "an integer"),
    "seed": ((int,), "an integer"),
    "temperature": (_NUMBER, "a number"),
    "top_p": (_NUMBER, "a number"),
    "timeout": (_NUMBER, "a number of seconds"),
    "presence_penalty": (_NUMBER, "a number"),
    "frequency_penalty": (_NUMBER, "a number"),
    "parallel_tool_calls": ((bool,), "true or false"),
    "logit_bias": ((dict,), "a dict"),
    "extra_headers": ((dict,), "a dict"),
    "stop_sequences": ((list, tuple), "a list of strings"),
}

_TRUE = frozenset({"true"})
_FALSE = frozenset({"false"})
_NULL = frozenset({"null", "none"})


def parse_setting_value(text: str) -> Any:
    """Parse a plain ``key: value`` setting: bool, then null/none, int, float, literal, text."""
    raw = text.strip()
    lowered = raw.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    if lowered in _NULL:
        return None
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw


def _check_value(key: str, value: Any) -> None:
    check = _VALUE_CHECKS.get(key)
    if check is None or value is None:
        return
    types, wanted = check
    ok = isinstance(value, types) and (bool in types or not isinstance(value, bool))
    if ok and key == "stop_sequences":
        ok = all(isinstance(item, str) for item in value)
    if not ok:
        raise ModelError(f"setting '{key}' must be {wanted}, got {value!r}")


def validate_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Filter merged settings for pydantic-ai.

    Documented `ModelSettings` keys pass (with a basic value check), keys documented only
    for other Kedi backends are dropped, anything else raises `ModelError`.
    """
    result: dict[str, Any] = {}
    for key, value in settings.items():
        if key in MODEL_SETTING_KEYS:
            _check_value(key, value)
            if key == "stop_sequences" and isinstance(value, tuple):
                value = list(value)
            result[key] = value
        elif key in DROPPED_SETTING_KEYS:
            continue
        else:
            allowed = " ".join(sorted(MODEL_SETTING_KEYS))
            raise ModelError(
                f"unknown setting '{key}' in `> settings:` "
                f"(pydantic-ai model settings are: {allowed})"
            )
    return result
