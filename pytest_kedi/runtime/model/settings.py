"""`> settings:` values and key filtering against pydantic-ai's own `ModelSettings`."""

from __future__ import annotations

import ast
import functools
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_kedi.errors import ModelError
from pytest_kedi.runtime.rowscope import short_repr

if TYPE_CHECKING:  # pydantic is imported when a setting is first checked
    from pydantic import TypeAdapter

__all__ = [
    "DROPPED_SETTING_KEYS",
    "RESERVED_SETTING_KEYS",
    "check_setting",
    "model_setting_keys",
    "parse_setting_row",
    "parse_setting_value",
    "validate_settings",
]

#: Keys Kedi documents only for other backends (agent harnesses): silently dropped.
DROPPED_SETTING_KEYS: frozenset[str] = frozenset(
    {"stop", "cwd", "env", "sandbox", "permission_mode"}
)

#: pydantic-ai keys pytest-kedi keeps to itself, each with why: an error names it.
RESERVED_SETTING_KEYS: dict[str, str] = {
    "max_retries": (
        "pytest-kedi retries failed requests itself (--kedi-retries), so that every request "
        "is counted and --kedi-max-requests holds"
    ),
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


def parse_setting_row(text: str) -> str:
    """One row of a setting's indented list: a string; a quoted row (``"a, b"``) is the
    Python string it spells, as a quoted one-line value is (docs/language.md#model-directives)."""
    raw = text.strip()
    if raw[:1] in ("'", '"'):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return text
        if isinstance(value, str):
            return value
    return text


@functools.cache
def _model_settings_adapters() -> dict[str, TypeAdapter[Any]]:
    """One strict validator per key of the installed pydantic-ai's `ModelSettings`."""
    from pydantic import TypeAdapter
    from pydantic_ai.settings import ModelSettings

    hints = typing.get_type_hints(ModelSettings)
    return {key: TypeAdapter(hint) for key, hint in hints.items()}


def model_setting_keys() -> frozenset[str]:
    """The keys of the installed pydantic-ai's `ModelSettings`, passed to the model."""
    return frozenset(_model_settings_adapters())


def _check_value(key: str, value: Any, adapter: TypeAdapter[Any]) -> Any:
    if value is None:
        return None
    if isinstance(value, tuple):
        value = list(value)
    from pydantic import ValidationError

    try:
        return adapter.validate_python(value, strict=True)
    except ValidationError as exc:
        reasons = "; ".join(dict.fromkeys(error["msg"] for error in exc.errors()))
        raise ModelError(f"setting '{key}': {reasons}, got {short_repr(value)}") from None


def check_setting(key: str, value: Any) -> Any:
    """One setting as `validate_settings` checks it: its value as passed to the model;
    `ModelError` for a key that is not pydantic-ai's (the caller drops
    `DROPPED_SETTING_KEYS` first) or a value of the wrong type."""
    adapters = _model_settings_adapters()
    adapter = adapters.get(key)
    if key in RESERVED_SETTING_KEYS:
        raise ModelError(
            f"setting '{key}' is not available in `> settings:`: {RESERVED_SETTING_KEYS[key]}"
        )
    if adapter is None:
        allowed = " ".join(sorted(set(adapters) - RESERVED_SETTING_KEYS.keys()))
        raise ModelError(
            f"unknown setting '{key}' in `> settings:` (pydantic-ai model settings are: {allowed})"
        )
    return _check_value(key, value, adapter)


def validate_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Filter merged settings for pydantic-ai.

    Keys of pydantic-ai's own `ModelSettings` pass when their value has the type it
    declares (checked strictly: no coercion, so ``true`` is not an integer), keys
    documented only for other Kedi backends are dropped, anything else raises `ModelError`.
    ``None`` values pass (they mean "the provider's default").
    """
    known = _model_settings_adapters()
    return {
        key: check_setting(key, value)
        for key, value in settings.items()
        if key in known or key not in DROPPED_SETTING_KEYS
    }
