"""The Kedi runtime: AST -> running program (interpreter, types, Python interop, errors)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_kedi.runtime import errors

__all__ = ["Program", "errors", "load"]

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime.program import Program, load


def __getattr__(name: str) -> Any:
    if name in ("load", "Program"):
        from pytest_kedi.runtime import program

        value = getattr(program, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pytest_kedi.runtime' has no attribute {name!r}")
