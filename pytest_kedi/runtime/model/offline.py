"""The offline default model: pydantic-ai's `TestModel`, answering strings of a known JSON
Schema ``format`` with a value of that format (docs/language.md#model-selection: synthetic
values of the right type).

pydantic-ai's `TestModel` answers every string ``"a"`` (a ``date`` aside), which no
``datetime``, ``time``, ``timedelta``, ``Email``, ``HttpUrl`` or ``FileUrl`` accepts, so
every template with such an output field failed under the default model.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.models.test import TestModel as _PydanticTestModel
from pydantic_ai.tools import ToolDefinition

__all__ = ["TestModel"]

#: A value of each string ``format`` pydantic's schemas use for the built-in types.
_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "time": "00:00:00",
    "duration": "P1D",
    "email": "user@example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
}


class TestModel(_PydanticTestModel):
    """pydantic-ai's `TestModel` (same class name, so cassette keys are unchanged) whose
    tool arguments hold well-formed strings for the formats above and ``uri``."""

    __test__ = False  # not a pytest test class

    def gen_tool_args(self, tool_def: ToolDefinition) -> Any:
        schema = tool_def.parameters_json_schema
        args = super().gen_tool_args(tool_def)
        return _conform(args, schema, schema.get("$defs") or {})


def _resolve(schema: Any, defs: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
        target = defs.get(schema["$ref"].removeprefix("#/$defs/"))
        if not isinstance(target, dict):
            break
        schema, seen = target, seen + 1
    return schema


def _formatted(schema: dict[str, Any]) -> str | None:
    fmt = schema.get("format")
    if fmt == "uri":  # `HttpUrl` caps its length, `FileUrl` does not
        return "https://example.com/" if "maxLength" in schema else "file:///tmp/example"
    return _FORMATS.get(fmt) if isinstance(fmt, str) else None


def _conform(value: Any, schema: Any, defs: dict[str, Any]) -> Any:
    """``value``, generated for ``schema``, with each generated string of a known format
    replaced by a well-formed one."""
    schema = _resolve(schema, defs)
    if not isinstance(schema, dict):
        return value
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        return _conform_branch(value, branches, defs)
    if isinstance(value, str):
        return _formatted(schema) or value
    if isinstance(value, list):
        prefix = schema.get("prefixItems")
        items = schema.get("items", {})
        if isinstance(items, list):
            prefix, items = prefix or items, {}
        prefix = prefix if isinstance(prefix, list) else []
        return [
            _conform(item, prefix[i] if i < len(prefix) else items, defs)
            for i, item in enumerate(value)
        ]
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return {
            key: _conform(item, properties.get(key, extra if isinstance(extra, dict) else {}), defs)
            for key, item in value.items()
        }
    return value


def _conform_branch(value: Any, branches: list[Any], defs: dict[str, Any]) -> Any:
    """``value`` for the first branch of a union that has its JSON kind."""
    if isinstance(value, str):
        kind = "string"
    elif isinstance(value, list):
        kind = "array"
    elif isinstance(value, dict):
        kind = "object"
    else:
        return value
    for branch in branches:
        resolved = _resolve(branch, defs)
        if isinstance(resolved, dict) and resolved.get("type") == kind:
            if kind == "string" and _formatted(resolved) is None:
                continue
            return _conform(value, resolved, defs)
    return value
