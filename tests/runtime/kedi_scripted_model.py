"""A scripted pydantic-ai `FunctionModel` for runtime tests (no network, no keys).

Structured calls get arguments synthesised from the output tool's JSON schema
(overridable per field); text calls answer ``text``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

__all__ = ["ScriptedModel", "synthesise"]


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _resolve(defs.get(ref.rsplit("/", 1)[-1], {}), defs)
    return schema


def synthesise(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A value valid for ``schema`` (first enum/const/anyOf option, simple defaults)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    schema = _resolve(schema, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [o for o in schema[key] if _resolve(o, defs).get("type") != "null"]
            return synthesise((options or schema[key])[0], defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "string":
        fmt = schema.get("format")
        return {
            "date": "2024-01-01",
            "date-time": "2024-01-01T00:00:00",
            "time": "00:00:00",
            "uri": "https://example.com/",
            "email": "a@example.com",
            "duration": "PT1S",
        }.get(fmt or "", "text")
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        prefix = schema.get("prefixItems")
        if prefix:
            return [synthesise(item, defs) for item in prefix]
        return [synthesise(schema["items"], defs)] if "items" in schema else []
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = schema.get("required", list(props))
        return {name: synthesise(props[name], defs) for name in props if name in required}
    return "text"


class ScriptedModel(FunctionModel):
    """``fields``: fixed answers per output field; ``text``: the text-call answer or a
    function of the prompt. ``prompts`` records every user prompt seen."""

    def __init__(
        self,
        fields: dict[str, Any] | Callable[[str], dict[str, Any]] | None = None,
        text: str | Callable[[str], str] = "text",
    ) -> None:
        self.fields = fields or {}
        self.text = text
        self.prompts: list[str] = []
        self.instructions: list[str | None] = []
        self.seen_settings: list[Any] = []
        super().__init__(self._answer)

    def _answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = ""
        for part in messages[-1].parts:
            content = getattr(part, "content", None)
            if isinstance(content, str) and getattr(part, "part_kind", "") == "user-prompt":
                prompt = content
        self.prompts.append(prompt)
        self.instructions.append(info.instructions)
        self.seen_settings.append(info.model_settings)
        if info.output_tools:
            tool = info.output_tools[0]
            args = synthesise(tool.parameters_json_schema)
            fixed = self.fields(prompt) if callable(self.fields) else self.fields
            if isinstance(args, dict):
                args.update({k: v for k, v in fixed.items() if k in args})
            return ModelResponse(parts=[ToolCallPart(tool.name, args)])
        answer = self.text(prompt) if callable(self.text) else self.text
        return ModelResponse(parts=[TextPart(answer)])
