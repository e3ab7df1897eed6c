"""Model names: normalization and labels (no pydantic-ai import)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pydantic_ai.models import Model

from pytest_kedi.constants import TEST_MODEL

__all__ = ["TEST_MODEL", "describe_model", "normalize_model_name"]


def normalize_model_name(name: str) -> str:
    """``vendor/model`` without ``:`` becomes ``vendor:model`` (docs/language.md#model-directives
    reading)."""
    text = name.strip()
    if ":" not in text and "/" in text:
        vendor, _, rest = text.partition("/")
        if vendor and rest:
            return f"{vendor}:{rest}"
    return text


#: model classes that pydantic-ai's model names reach by a prefix other than their system's
#: (``openai:`` is the Responses API, ``openai-chat:`` the Chat Completions one)
_PREFIXES = {("OpenAIChatModel", "openai"): "openai-chat"}


def describe_model(model: Model | str, *, as_named: bool = True) -> str:
    """A short label for messages and report headers: the name a user gives the model
    (``openai-chat:gpt-4o``) where pydantic-ai's ``system`` would be ambiguous
    (``as_named=False``: pydantic-ai's ``system:name``, as cassette keys hold it)."""
    if isinstance(model, str):
        return model
    name = getattr(model, "model_name", None)
    system = getattr(model, "system", None)
    if as_named and isinstance(system, str):
        system = _PREFIXES.get((type(model).__name__, system), system)
    if isinstance(name, str) and name:
        if isinstance(system, str) and system and system != name and ":" not in name:
            return f"{system}:{name}"
        return name
    return type(model).__name__
