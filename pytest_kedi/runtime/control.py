"""Control flow (docs/language.md#newer-syntax): ``> if:``/``> else:``, ``> loop``, ``> map:``, ``>
show:`` and
``[x] := rhs``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from pytest_kedi.errors import (
    KediExecutionError,
    KediNameError,
    KediTypeExecutionError,
    KediValueExecutionError,
    LoopIterationLimitError,
)
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import Frame, Ret
from pytest_kedi.runtime.evaluate import eval_code, eval_rhs, render, type_violation, where
from pytest_kedi.runtime.interpreter import exec_body
from pytest_kedi.runtime.model.calls import ask_claim
from pytest_kedi.runtime.procedures import KediProcedure
from pytest_kedi.runtime.pyerrors import checked, python_error
from pytest_kedi.runtime.scope import MISSING, LazyBinding
from pytest_kedi.runtime.types import describe_value, is_kedi_type, validator_for
from pytest_kedi.runtime.usererrors import user_error
from pytest_kedi.text import exception_text

__all__ = ["condition_holds"]


def condition_holds(cond: nodes.Condition, ctx: Frame) -> bool:
    if cond.code is not None:
        value = eval_code(cond.code, ctx)
        if type(value) is not bool:
            raise KediTypeExecutionError(
                f"{where(ctx, cond)}: condition must be exactly bool, got {describe_value(value)}"
            )
        return value
    assert cond.claim is not None
    try:
        return ask_claim(cond.claim, ctx, cond)
    except KediExecutionError as err:
        raise err.with_outer_frame(ctx.frame("claim", cond.span))


def run_if(stmt: nodes.If, ctx: Frame) -> Ret | None:
    if condition_holds(stmt.condition, ctx):
        return exec_body(stmt.body, ctx.child(ctx.scope.child()))
    if stmt.orelse is not None:
        return exec_body(stmt.orelse, ctx.child(ctx.scope.child()))
    return None


def run_loop(stmt: nodes.Loop, ctx: Frame) -> Ret | None:
    if stmt.condition is not None:
        return _conditional_loop(stmt, stmt.condition, ctx)
    return _iterable_loop(stmt, ctx)


def _iteration_frame(ctx: Frame, stmt: nodes.Loop, index: int) -> Any:
    span = ctx.unit.source_file.line_span(stmt.span.start_line)
    return ctx.frame("loop", span, f"{ctx.label} (iteration {index})")


def _conditional_loop(stmt: nodes.Loop, cond: nodes.Condition, ctx: Frame) -> Ret | None:
    completed = 0
    limit = ctx.unit.runtime.loop_limit
    while condition_holds(cond, ctx):
        if completed >= limit:
            raise LoopIterationLimitError(f"{where(ctx, stmt)}: loop exceeded {limit} iterations")
        try:
            result = exec_body(stmt.body, ctx.child(ctx.scope.child()))
        except KediExecutionError as err:
            raise err.with_outer_frame(_iteration_frame(ctx, stmt, completed + 1))
        if result is not None:
            return result
        completed += 1
    return None


def _iterable_loop(stmt: nodes.Loop, ctx: Frame) -> Ret | None:
    assert stmt.iterable is not None and stmt.binder is not None
    source = eval_code(stmt.iterable, ctx)
    try:
        iterator = iter(source)
    except BaseException as exc:
        trace = exc.__traceback__
        if isinstance(exc, TypeError) and trace is not None and trace.tb_next is None:
            raise KediTypeExecutionError(  # `iter`'s own error: not iterable
                f"{where(ctx, stmt)}: loop value is not iterable: {describe_value(source)}"
            ) from None
        if not user_error(exc):
            raise
        raise python_error(exc) from exc  # raised by the value's own `__iter__`
    kept: list[Frame] = []
    result: Ret | None = None
    index = 0
    try:
        for item in _guarded(iterator):
            index += 1
            scope = ctx.scope.child()
            scope.bind(stmt.binder, item, object)
            iteration = ctx.child(scope)
            try:
                result = exec_body(stmt.body, iteration)
            except KediExecutionError as err:
                raise err.with_outer_frame(_iteration_frame(ctx, stmt, index))
            if result is not None:
                break
            if stmt.map_body is not None:
                kept.append(iteration)
    except BaseException as exc:
        _close(iterator, exc)
        raise
    _close(iterator, None)
    if result is not None or stmt.map_body is None:
        return result
    return _run_map(stmt, stmt.map_body, kept, ctx)


def _close(iterator: Iterator[Any], failing: BaseException | None) -> None:
    """Close the loop's iterator if it can be. Its ``close`` is user code: a failure there
    is located like one in its ``__next__``; while the loop's own failure ``failing``
    propagates, that failure is kept and the other one told in a note on it."""
    try:
        close = getattr(iterator, "close", None)
        if callable(close):
            close()
    except BaseException as exc:
        if not user_error(exc):
            raise
        if failing is None:
            if isinstance(exc, KediExecutionError):
                raise
            raise python_error(exc) from exc
        note = f"(closing the loop's iterator failed too: {type(exc).__name__}: "
        note += f"{exception_text(exc)})"
        user = failing  # the exception the rendering shows the notes of
        while isinstance(user, KediExecutionError) and user.original is not None:
            user = user.original
        if isinstance(user, KediExecutionError):  # a Kedi error: told in its message
            user.message = f"{user.message}\n{note}"
            user.args = (user.message,)
        else:
            user.add_note(note)


def _guarded(iterator: Iterator[Any]) -> Iterator[Any]:
    """Iterate, reporting a failure inside the iterable's own code as a Kedi error."""
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except KediExecutionError:
            raise
        except BaseException as exc:
            if not user_error(exc):
                raise
            raise python_error(exc) from exc
        yield item


def _run_map(
    stmt: nodes.Loop, body: tuple[nodes.Stmt, ...], kept: list[Frame], ctx: Frame
) -> Ret | None:
    first: KediExecutionError | None = None
    span = stmt.map_span or stmt.span
    for number, iteration in enumerate(kept, start=1):
        # A child of the iteration's scope (its bindings), with the directives in force where
        # the map stands, not those of the loop body (docs/language.md#block-scopes).
        scope = iteration.scope.child()
        scope.state = ctx.scope.state
        try:
            result = exec_body(body, iteration.child(scope))
        except KediExecutionError as err:
            if first is None:
                first = err.with_outer_frame(
                    ctx.frame(
                        "map",
                        ctx.unit.source_file.line_span(span.start_line),
                        f"{ctx.label} (map {number})",
                    )
                )
            continue
        if result is not None:
            return result
    if first is not None:
        raise first
    return None


def run_show(stmt: nodes.Show, ctx: Frame) -> None:
    value = eval_rhs(stmt.value, ctx)
    text = render(value) + "\n"
    try:  # a stream refusing the text fails this line, as `print` in a fence does
        sys.stdout.write(text)  # (docs/language.md#show)
    except Exception as exc:
        raise python_error(exc) from None
    return None


def run_reassign(stmt: nodes.Reassign, ctx: Frame) -> None:
    name = stmt.target
    owner = ctx.scope.find_owner(name)
    if owner is None or owner.kind == "prelude" or owner.vars[name] is MISSING:
        raise KediNameError(f"{where(ctx, stmt)}: no Kedi binding {name!r} to update with :=")
    if name in owner.params:
        raise KediValueExecutionError(f"{where(ctx, stmt)}: parameter {name!r} is read-only")
    if name == "args" and owner.kind == "module":
        raise KediValueExecutionError(f"{where(ctx, stmt)}: `args` cannot be assigned")
    current = owner.vars[name]
    if type(current) is LazyBinding:
        current = ctx.scope.get(name)
    if isinstance(current, KediProcedure) or is_kedi_type(current):
        raise KediValueExecutionError(
            f"{where(ctx, stmt)}: {name!r} is a procedure or type, not a value binding"
        )
    contract = owner.contracts.get(name, str)
    value = eval_rhs(stmt.value, ctx)
    if not checked(validator_for(contract), value):  # (user code it runs: `check_error`)
        raise type_violation(ctx, stmt, f"reassignment of {name!r}", contract, value)
    owner.set_existing(name, value)
    return None
