"""pytest-kedi: run Kedi evaluation suites and test cases as pytest tests.

The front end (`parse`, `parse_file`, `KediParseError`) is imported eagerly; the
runtime (`load`, errors) is imported on first use so that a plain ``pytest`` run
does not pay for pydantic-ai.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_kedi.lang import KediParseError, parse, parse_file

__version__ = "0.1.0"

__all__ = [
    "KediExecutionError",
    "KediParseError",
    "KediUnsupportedError",
    "Program",
    "__version__",
    "load",
    "parse",
    "parse_file",
]

_RUNTIME_EXPORTS = {
    "load": "pytest_kedi.runtime",
    "Program": "pytest_kedi.runtime",
    "KediExecutionError": "pytest_kedi.runtime.errors",
    "KediUnsupportedError": "pytest_kedi.runtime.errors",
    "KediTypeExecutionError": "pytest_kedi.runtime.errors",
    "KediValueExecutionError": "pytest_kedi.runtime.errors",
    "KediKeyExecutionError": "pytest_kedi.runtime.errors",
    "KediNameError": "pytest_kedi.runtime.errors",
    "LoopIterationLimitError": "pytest_kedi.runtime.errors",
}

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime import Program, load
    from pytest_kedi.runtime.errors import KediExecutionError, KediUnsupportedError


def __getattr__(name: str) -> Any:
    module = _RUNTIME_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_kedi' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
