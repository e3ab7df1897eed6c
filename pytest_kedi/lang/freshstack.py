"""Run the parser and the Python checks on a stack of their own, so that how deeply a program
may nest does not depend on how deep the caller's stack is (docs/language.md#indentation): the
same file parses the same under the command line, pytest or an xdist worker."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["on_fresh_stack"]

T = TypeVar("T")

#: The C stack of the thread: room for Python's recursion limit at any parser depth.
_STACK_SIZE = 64 * 1024 * 1024
_START = threading.Lock()
_FRESH = threading.local()


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
