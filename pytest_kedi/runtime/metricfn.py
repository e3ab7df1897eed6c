"""A metric body as a Python function of a row's values (`Program.metric_function`).

`metric_caller` wraps the function compiled from the body (`QuickBody.function_code`) in
the function a suite's runner calls once per row: it stops a timed-out row, keeps the
function's globals the module's current table and turns an error into the one the
interpreter raises (``failed``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

from pytest_kedi.runtime.cancel import STATE as CANCEL
from pytest_kedi.runtime.cancel import check_current
from pytest_kedi.runtime.pyglobals import LazyGlobals, module_globals, reading_globals
from pytest_kedi.runtime.scope import EPOCHS, Scope

__all__ = ["metric_caller"]

Failed = Callable[[BaseException, tuple[Any, ...]], BaseException]


def metric_caller(
    code: CodeType, scope: Scope, reads: frozenset[str] | None, arity: int, failed: Failed
) -> Callable[..., Any]:
    """The function of a row's ``arity`` (1 or 2) values that runs ``code`` (a function of
    that many parameters) with the globals of the module ``scope`` read as ``reads``
    (`reading_globals`); ``failed(exc, values)`` gives the error to raise for ``exc``."""
    # `module_globals(scope)`'s cache entry (its prelude epoch and table) the function was
    # made with, its globals, the function, and whether to settle again at the next row: the
    # table is lazy, its plain twin not ready yet. Each row checks the entry is current
    # (what `module_globals` checks, inline: it runs once per row) instead of asking it.
    known: tuple[tuple[object, object], object, Callable[..., Any], bool] = (
        (None, None),
        None,
        len,
        True,
    )

    def settled() -> Callable[..., Any]:
        nonlocal known
        base = module_globals(scope)
        g = reading_globals(base, reads)
        fn = known[2] if known[1] is g else FunctionType(code, g)
        again = g is base and type(base) is LazyGlobals
        known = (scope._gcache or (None, None), g, fn, again)
        return fn

    def one(value: Any) -> Any:
        # `metric_runner`'s function, the row's value a parameter (one call per row).
        if CANCEL.pending:  # a timed-out row stops at its next statement
            check_current()
        entry, _, fn, again = known
        if again or entry is not scope._gcache or entry[0] != EPOCHS.prelude or scope.volatile:
            fn = settled()
        try:
            return fn(value)
        except BaseException as exc:
            error = failed(exc, (value,))
            if error is exc:
                raise
            raise error from exc

    def two(value: Any, expected: Any) -> Any:
        # `one`, with the row's expected value.
        if CANCEL.pending:  # a timed-out row stops at its next statement
            check_current()
        entry, _, fn, again = known
        if again or entry is not scope._gcache or entry[0] != EPOCHS.prelude or scope.volatile:
            fn = settled()
        try:
            return fn(value, expected)
        except BaseException as exc:
            error = failed(exc, (value, expected))
            if error is exc:
                raise
            raise error from exc

    return one if arity == 1 else two
