"""Model names -> pydantic-ai models; pydantic-ai alone decides what a provider needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_kedi.errors import ModelError
from pytest_kedi.runtime.model.names import TEST_MODEL, normalize_model_name
from pytest_kedi.text import one_line

if TYPE_CHECKING:  # pragma: no cover
    from pydantic_ai.models import Model

__all__ = ["resolve_model"]


def resolve_model(name: str) -> Model:
    """Build the pydantic-ai model for ``name``.

    Called at a program's first model call, never at load time, so a missing package,
    key or base URL surfaces there. Whatever pydantic-ai's own construction raises
    (for instance a missing ``OPENAI_API_KEY``, which it does not need when
    ``OPENAI_BASE_URL`` points at a keyless server) becomes one line naming the model
    and pydantic-ai's error class and message, otherwise unchanged.
    """
    normalized = normalize_model_name(name)
    if normalized == TEST_MODEL:
        from pydantic_ai.models.test import TestModel

        return TestModel()
    from pydantic_ai.models import infer_model

    try:
        return infer_model(normalized)
    except Exception as error:
        raise ModelError(
            f"model '{normalized}' is not available: {type(error).__name__}: {one_line(error)}"
        ) from error
