"""The model boundary: agent state, model selection and pydantic-ai calls (docs/language.md#models).

The interpreter builds an `AgentState` per call site and asks a `ModelBoundary` to
`produce` (structured outputs) or `invoke` (text). Failures are `ModelError` (one line)
or `UnsupportedFeature` (a construct pytest-kedi does not execute).

Names that need pydantic-ai (`ModelBoundary`, the adapters) are imported on first use,
so loading a program that never calls a model does not pay for importing pydantic-ai.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_kedi.errors import ModelError, UnsupportedFeature
from pytest_kedi.exports import lazy_exports as _lazy_exports
from pytest_kedi.runtime.model.claims import CLAIM_FIELD, CLAIM_SCHEMA, claim_prompt
from pytest_kedi.runtime.model.names import TEST_MODEL, describe_model, normalize_model_name
from pytest_kedi.runtime.model.optimized import (
    InvalidOptimizedPrompts,
    apply_optimized_prefix,
    load_optimized,
    optimized_path,
)
from pytest_kedi.runtime.model.settings import (
    DROPPED_SETTING_KEYS,
    check_setting,
    model_setting_keys,
    parse_setting_value,
    validate_settings,
)
from pytest_kedi.runtime.model.state import AgentState

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime.model.adapter import (
        Adapter,
        AdapterCapabilities,
        PydanticAIAdapter,
    )
    from pytest_kedi.runtime.model.boundary import (
        MODEL_ENV,
        SYNTHETIC_NOTICE,
        ModelBoundary,
        ModelSource,
    )

__all__ = [
    "CLAIM_FIELD",
    "CLAIM_SCHEMA",
    "DROPPED_SETTING_KEYS",
    "MODEL_ENV",
    "SYNTHETIC_NOTICE",
    "TEST_MODEL",
    "Adapter",
    "AdapterCapabilities",
    "AgentState",
    "ModelBoundary",
    "ModelError",
    "ModelSource",
    "PydanticAIAdapter",
    "UnsupportedFeature",
    "InvalidOptimizedPrompts",
    "apply_optimized_prefix",
    "check_setting",
    "claim_prompt",
    "describe_model",
    "load_optimized",
    "model_setting_keys",
    "normalize_model_name",
    "optimized_path",
    "parse_setting_value",
    "validate_settings",
]

_LAZY = {
    "Adapter": "adapter",
    "AdapterCapabilities": "adapter",
    "PydanticAIAdapter": "adapter",
    "MODEL_ENV": "boundary",
    "SYNTHETIC_NOTICE": "boundary",
    "ModelBoundary": "boundary",
    "ModelSource": "boundary",
}


__getattr__ = _lazy_exports(
    globals(), {name: f"pytest_kedi.runtime.model.{module}" for name, module in _LAZY.items()}
)
