"""What a user sees of a Kedi call, for tests that compare two execution paths."""

from __future__ import annotations

from typing import Any

from pytest_kedi.errors import KediExecutionError


def error_details(err: KediExecutionError) -> tuple[Any, ...]:
    """An execution error in every detail a user sees (message, frames, traces, rendering)."""
    return (
        "error",
        type(err),
        err.message,
        err.frames,
        err.python_traces,
        type(err.original),
        type(err.__cause__),
        err.line,
        err.render(),
    )
