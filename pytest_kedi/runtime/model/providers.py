"""Model names -> pydantic-ai models, with one-line errors for missing extras or keys."""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_kedi.runtime.model.errors import ModelError, one_line
from pytest_kedi.runtime.model.names import TEST_MODEL, normalize_model_name

if TYPE_CHECKING:  # pragma: no cover
    from pydantic_ai.models import Model

__all__ = ["ProviderNeeds", "resolve_model"]


@dataclass(frozen=True, slots=True)
class ProviderNeeds:
    """What a provider needs before it can be constructed: a package and an API key."""

    module: str
    install: str
    env_vars: tuple[str, ...]


_KEDI_EXTRA = "pip install 'pytest-kedi[{}]'"
_SLIM_EXTRA = "pip install 'pydantic-ai-slim[{}]'"

_PROVIDERS: dict[str, ProviderNeeds] = {
    "openai": ProviderNeeds("openai", _KEDI_EXTRA.format("openai"), ("OPENAI_API_KEY",)),
    "openai-chat": ProviderNeeds("openai", _KEDI_EXTRA.format("openai"), ("OPENAI_API_KEY",)),
    "openai-responses": ProviderNeeds("openai", _KEDI_EXTRA.format("openai"), ("OPENAI_API_KEY",)),
    "openrouter": ProviderNeeds("openai", _KEDI_EXTRA.format("openai"), ("OPENROUTER_API_KEY",)),
    "deepseek": ProviderNeeds("openai", _KEDI_EXTRA.format("openai"), ("DEEPSEEK_API_KEY",)),
    "anthropic": ProviderNeeds(
        "anthropic", _KEDI_EXTRA.format("anthropic"), ("ANTHROPIC_API_KEY",)
    ),
    "groq": ProviderNeeds("groq", _KEDI_EXTRA.format("groq"), ("GROQ_API_KEY",)),
    "google": ProviderNeeds(
        "google.genai", _KEDI_EXTRA.format("google"), ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    ),
    "google-gla": ProviderNeeds(
        "google.genai", _KEDI_EXTRA.format("google"), ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    ),
    "mistral": ProviderNeeds("mistralai", _SLIM_EXTRA.format("mistral"), ("MISTRAL_API_KEY",)),
    "cohere": ProviderNeeds("cohere", _SLIM_EXTRA.format("cohere"), ("CO_API_KEY",)),
}

_ENV_HINT = re.compile(r"Set the `([A-Z][A-Z0-9_]*)` environment variable")
_GROUP_HINT = re.compile(r"the `([a-z0-9-]+)` optional group")
_KEDI_EXTRAS = frozenset({"openai", "anthropic", "groq", "google"})


def _module_available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _precheck(name: str) -> None:
    provider, _, _ = name.partition(":")
    needs = _PROVIDERS.get(provider)
    if needs is None:
        return
    problems: list[str] = []
    if not _module_available(needs.module):
        problems.append(f"install its provider package: {needs.install}")
    if not any(os.environ.get(var) for var in needs.env_vars):
        problems.append("set " + " or ".join(needs.env_vars))
    if problems:
        raise ModelError(f"model '{name}' is not available: " + " and ".join(problems))


def _translate(name: str, error: Exception) -> ModelError:
    text = one_line(error)
    if isinstance(error, ImportError):
        group = _GROUP_HINT.search(text)
        if group is not None:
            extra = group.group(1)
            hint = (_KEDI_EXTRA if extra in _KEDI_EXTRAS else _SLIM_EXTRA).format(extra)
            return ModelError(
                f"model '{name}' is not available: install its provider package: {hint}"
            )
    env = _ENV_HINT.search(text)
    if env is not None:
        return ModelError(f"model '{name}' is not available: set {env.group(1)}")
    return ModelError(f"model '{name}' is not available: {type(error).__name__}: {text}")


def resolve_model(name: str) -> Model:
    """Build the pydantic-ai model for ``name`` (no network; keys checked here, at first use)."""
    normalized = normalize_model_name(name)
    if normalized == TEST_MODEL:
        from pydantic_ai.models.test import TestModel

        return TestModel()
    _precheck(normalized)
    from pydantic_ai.models import infer_model

    try:
        return infer_model(normalized)
    except Exception as error:
        raise _translate(normalized, error) from error
