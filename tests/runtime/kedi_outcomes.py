"""What a user sees of a Kedi call, for tests that compare two execution paths."""

from __future__ import annotations

from collections.abc import Callable
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


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """What a user sees of a call: its value, or its error in every detail."""
    try:
        value = call()
    except KediExecutionError as err:
        return error_details(err)
    return ("value", type(value), value)


def never_generated(monkeypatch: Any, program: Any) -> None:
    """Switch generated bodies off for ``program``'s procedures (they run on the
    interpreter); other programs keep them."""
    from pytest_kedi.runtime import procedures

    original = procedures.build
    scope = program._unit.scope
    monkeypatch.setattr(
        procedures, "build", lambda proc: None if proc.unit.scope is scope else original(proc)
    )


def built_at_first_call(monkeypatch: Any) -> None:
    """Build every procedure's generated body at its first call (by default a procedure
    runs on the interpreter for its first `BUILD_AFTER` - 1 calls), so a test compares the
    generated body itself with the interpreter."""
    from pytest_kedi.runtime import procedures

    monkeypatch.setattr(procedures, "BUILD_AFTER", 1)
