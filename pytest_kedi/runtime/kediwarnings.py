"""Warnings pytest-kedi itself gives, at a user's line (docs/language.md#python-warnings)."""

from __future__ import annotations

import warnings
from typing import Any

from pytest_kedi.catchable import catchable
from pytest_kedi.errors import KediExecutionError
from pytest_kedi.text import exception_text

__all__ = ["python_module", "warn_at"]


def warn_at(
    message: str,
    path: str,
    line: int,
    module: str | None = None,
    registry: dict[Any, Any] | None = None,
) -> None:
    """A `UserWarning` at ``path:line``, with `warnings.warn_explicit`'s arguments. When the
    warnings filter makes it an error (``-W error``), the error is a Kedi error standing for
    the warning (``except UserWarning`` catches it), which the Kedi frames of the statement
    that gave it locate, as they locate a warning embedded Python gives; it is never the
    warning raised from pytest-kedi's own code."""
    try:
        if module is None:  # (`warn_explicit` given ``module=None`` shows nothing)
            warnings.warn_explicit(message, UserWarning, path, line)
        else:
            warnings.warn_explicit(message, UserWarning, path, line, module, registry)
    except Warning as exc:
        error = catchable(KediExecutionError, type(exc))
        raise error(exception_text(exc), original=exc.with_traceback(None)) from None


def python_module(prelude: dict[str, Any]) -> tuple[str | None, dict[Any, Any] | None]:
    """The module name and warnings registry of a file's Python (its prelude's globals
    ``prelude``): `warn_at`'s ``module`` and ``registry`` for a warning of the file
    (docs/language.md#python-warnings)."""
    name, registry = prelude.get("__name__"), prelude.get("__warningregistry__")
    return (
        name if isinstance(name, str) else None,
        registry if isinstance(registry, dict) else None,
    )
