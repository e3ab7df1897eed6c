"""Evaluating values: embedded expressions, text rendering, right-hand sides, calls
(docs/language.md#assignment, #returns, #substitutions) and type annotations
(docs/language.md#types)."""

from __future__ import annotations

import copy
from typing import Any

from pytest_kedi.errors import (
    KediExecutionError,
    KediNameError,
    KediTypeExecutionError,
)
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import Frame
from pytest_kedi.runtime.pyinterop import build_globals, compile_unit, python_error, type_code
from pytest_kedi.runtime.pyrun import run_block, run_expr
from pytest_kedi.runtime.scope import MISSING
from pytest_kedi.runtime.typeresolve import resolve_strings, resolve_type_source
from pytest_kedi.runtime.types import TYPE_BUILTINS, describe_value, expectation
from pytest_kedi.runtime.usererrors import user_error
from pytest_kedi.text import exception_text

__all__ = [
    "CALL_LINE",
    "NotCallable",
    "PositionalCallee",
    "apply_callee",
    "call_value",
    "eval_arg",
    "eval_code",
    "eval_rhs",
    "lookup",
    "not_callable",
    "render",
    "render_text",
    "resolve_type",
    "run_fence",
    "type_violation",
    "unknown_name",
]

_NATIVE_ARG = (nodes.InlinePython, nodes.Subst, nodes.CallSubst, nodes.ExprSubst)

#: The attribute of a `KediExecutionError` naming the line of the ``<call()>`` it left:
#: the frame of a statement of several lines (a template row, a continued return) is
#: located there (`interpreter.stmt_frame`, which takes it off).
CALL_LINE = "_kedi_call_line"


class PositionalCallee:
    """A callee that takes ``<proc(a, b)>`` arguments itself (Kedi procedures).

    Defined here, below `procedures`, so that evaluating a call needs no import of it.
    """

    __slots__ = ()

    def invoke_positional(self, args: list[Any]) -> Any:
        raise NotImplementedError


def where(ctx: Frame, node: nodes.Node | nodes.Span | None) -> str:
    span = node.span if isinstance(node, nodes.Node) else node
    if span is None:
        return ctx.unit.path
    return f"{span.path}:{span.start_line}"


def type_violation(
    ctx: Frame, node: nodes.Node | nodes.Span | None, what: str, tp: Any, value: Any
) -> KediTypeExecutionError:
    return KediTypeExecutionError(f"{where(ctx, node)}: {what} expects {expectation(tp, value)}")


def lookup(name: str, ctx: Frame, node: nodes.Node) -> Any:
    value = ctx.scope.get(name)
    if value is MISSING:
        raise unknown_name(name, ctx, node)
    return value


def unknown_name(name: str, ctx: Frame, node: nodes.Node) -> KediExecutionError:
    """The error for reading an unbound name (a deferred import failure explains it)."""
    if ctx.unit.import_failures:
        return copy.copy(ctx.unit.import_failures[0])
    return KediNameError(f"{where(ctx, node)}: unknown name {name!r}")


def eval_code(code: nodes.PyCode, ctx: Frame) -> Any:
    """Evaluate one backtick expression (native result)."""
    return run_expr(ctx.compiled(code), ctx.scope)


def run_fence(code: nodes.PyCode, ctx: Frame) -> Any:
    """Run a fenced block; its ``return`` value (or None)."""
    return run_block(ctx.compiled(code), ctx.scope)


def render(value: Any) -> str:
    if type(value) is str:
        return value
    try:
        return str(value)
    except BaseException as exc:
        if not user_error(exc):
            raise
        raise python_error(exc) from exc


def render_text(text: nodes.Text, ctx: Frame) -> str:
    """Render text left to right; every substitution becomes ``str(value)``."""
    out: list[str] = []
    for part in text.parts:
        if isinstance(part, nodes.Literal):
            out.append(part.value)
        elif isinstance(part, nodes.OutputField):
            out.append(f"[{part.name}]")
        else:
            out.append(render(eval_part(part, ctx)))
    return "".join(out)


def eval_part(part: nodes.TextPart, ctx: Frame) -> Any:
    if isinstance(part, nodes.Subst):
        return lookup(part.name, ctx, part)
    if isinstance(part, (nodes.InlinePython, nodes.ExprSubst)):
        return eval_code(part.code, ctx)
    if isinstance(part, nodes.CallSubst):
        return call_value(part, ctx)
    if isinstance(part, nodes.Literal):
        return part.value
    return f"[{part.name}]"


def eval_arg(arg: nodes.Arg, ctx: Frame) -> Any:
    """Native when the argument is exactly one substitution/backtick; else rendered."""
    parts = arg.parts
    if len(parts) == 1 and isinstance(parts[0], _NATIVE_ARG):
        return eval_part(parts[0], ctx)
    out: list[str] = []
    for part in parts:
        if isinstance(part, nodes.Literal):
            out.append(part.value)
        else:
            out.append(render(eval_part(part, ctx)))
    return "".join(out)


def call_value(call: nodes.CallSubst, ctx: Frame) -> Any:
    """``<proc(a, b)>``: positional arguments, evaluated left to right; native result."""
    callee = lookup(call.callee, ctx, call)
    args = [eval_arg(arg, ctx) for arg in call.args]
    try:
        return apply_callee(callee, args)
    except NotCallable:
        raise not_callable(call, ctx, callee) from None
    except KediExecutionError as err:
        setattr(err, CALL_LINE, call.span.start_line)
        raise


class NotCallable(Exception):
    """Raised by `apply_callee` for a callee that cannot be called."""


def apply_callee(callee: Any, args: list[Any]) -> Any:
    """Call what a ``<proc(...)>`` names with its evaluated arguments: a Kedi procedure
    takes them itself; a Python error of another callable is located."""
    if isinstance(callee, PositionalCallee):
        return callee.invoke_positional(args)
    if not callable(callee):
        raise NotCallable
    try:
        return callee(*args)
    except KediExecutionError:
        raise
    except BaseException as exc:
        if not user_error(exc):
            raise
        raise python_error(exc, None) from exc


def not_callable(call: nodes.CallSubst, ctx: Frame, callee: Any) -> KediTypeExecutionError:
    return KediTypeExecutionError(
        f"{where(ctx, call)}: {call.callee!r} is not callable (it is {describe_value(callee)})"
    )


def eval_rhs(rhs: nodes.Rhs, ctx: Frame) -> Any:
    mode = rhs.mode
    if mode == "expr":
        assert rhs.code is not None
        return eval_code(rhs.code, ctx)
    if mode == "call":
        assert rhs.call is not None
        return call_value(rhs.call, ctx)
    if mode == "fence":
        assert rhs.code is not None
        return run_fence(rhs.code, ctx)
    assert rhs.text is not None
    return render_text(rhs.text, ctx)


# ----------------------------------------------------------------------------- types


def resolve_type(ref: nodes.TypeRef | None, ctx: Frame) -> Any:
    """Resolve an annotation in the current scope; ``None`` (no annotation) is ``str``."""
    if ref is None:
        return str
    cache = ctx.unit.runtime.type_cache
    entry = cache.get(id(ref))
    if entry is not None and entry[0] is ref:
        return entry[1]
    try:
        if ref.backtick:
            return _backtick_type(ref, ctx)
        scope = ctx.scope
        scope_dependent = False

        def lookup_name(name: str) -> Any:
            nonlocal scope_dependent
            scope_dependent = True
            value = scope.get(name)
            if value is MISSING:
                raise KeyError(name)
            return value

        at = (ctx.unit.source_file.path, ref.span.start_line)
        tp = resolve_type_source(ref.source, lookup_name, at)
        if not isinstance(tp, type):  # a prelude alias may hold strings: `list["P"]`
            tp = resolve_strings(
                tp, lambda text: resolve_type_source(text, lookup_name, at, ref.source)
            )
    except KediExecutionError as err:
        if not err.message.startswith(ref.span.path):
            err.message = f"{where(ctx, ref)}: {err.message}"
            err.args = (err.message,)
        raise err.with_inner_frame(ctx.frame("type", ref.span))
    if not scope_dependent:
        cache[id(ref)] = (ref, tp)
    return tp


def _backtick_type(ref: nodes.TypeRef, ctx: Frame) -> Any:
    """A backtick annotation, evaluated (on each use) in the full Python namespace."""
    units = ctx.unit.runtime.type_units
    entry = units.get(id(ref))
    if entry is not None and entry[0] is ref:
        unit = entry[1]
    else:
        runtime = ctx.unit.runtime
        unit = compile_unit(
            type_code(ref), ctx.unit.source_file, ctx.procedure_name, store=runtime.code_store
        )
        units[id(ref)] = (ref, unit)
    namespace = build_globals(ctx.scope, unit.global_reads())
    for name, value in TYPE_BUILTINS.items():
        if name not in namespace:
            dict.__setitem__(namespace, name, value)
    try:
        value = eval(unit.code, namespace)
    except BaseException as exc:
        if not user_error(exc):
            raise
        raise python_error(exc, unit) from exc
    if isinstance(value, type):
        return value

    def forward(text: str) -> Any:  # a string in the type: Python's forward reference
        try:
            return eval(compile(text, "<annotation>", "eval", dont_inherit=True), namespace)
        except NameError as exc:
            message = f"unknown type {exc.name!r} in annotation {ref.source.strip()!r}"
        except KediExecutionError:
            raise  # a lazy binding it read failed: its own located error
        except SyntaxError as exc:
            message = f"invalid type annotation {text!r}: {exc.msg}"
        except Exception as exc:
            message = f"invalid type annotation {text!r}: {exception_text(exc)}"
        raise KediTypeExecutionError(message)

    return resolve_strings(value, forward)
