"""How deeply a program may nest does not depend on how deep the caller's stack is
(docs/language.md#indentation): the same file parses the same under the command line, pytest
or an xdist worker.

The parser and the Python checks run in place, on the caller's stack (a thread costs more than
parsing a small file); when they reach the recursion limit there, `stack_limited` runs them
again on a new thread's empty stack, where the limit is the same from any caller, and that
outcome is the one reported. Work that succeeds in place succeeds on a fresh stack too, so
the answer is always the fresh stack's.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["on_fresh_stack", "reached_limit", "stack_limited"]

T = TypeVar("T")

#: The C stack of the thread: room for Python's recursion limit at any parser depth.
_STACK_SIZE = 64 * 1024 * 1024
_START = threading.Lock()
_FRESH = threading.local()


class _LimitInPlace(Exception):
    """The recursion limit was reached on the caller's stack: run again on a fresh one."""


def reached_limit() -> None:
    """Called where a `RecursionError` is turned into a diagnostic: on the caller's stack the
    limit depends on the caller, so the work is run again on a fresh stack instead."""
    if not getattr(_FRESH, "active", False):
        raise _LimitInPlace


def stack_limited(fn: Callable[[], T]) -> T:
    """``fn()`` in place; again on a fresh stack when it calls `reached_limit` in place."""
    try:
        return fn()
    except _LimitInPlace:
        return on_fresh_stack(fn)


def on_fresh_stack(fn: Callable[[], T]) -> T:
    """``fn()`` run on a new thread's empty stack (its result, or its exception raised
    here); run in place when already on one."""
    if getattr(_FRESH, "active", False):
        return fn()
    context = contextvars.copy_context()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        _FRESH.active = True
        try:
            outcome.append(context.run(fn))
        except BaseException as exc:  # handed to the caller, raised there
            failure.append(exc)

    with _START:
        previous = threading.stack_size(_STACK_SIZE)
        try:
            thread = threading.Thread(target=target, name="kedi-parser", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]
