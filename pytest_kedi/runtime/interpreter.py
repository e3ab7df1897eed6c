"""Statement execution: the dispatch table, bodies, and the simple statements
(assignments, returns, Python lines and fences) (docs/language.md#assignment, #returns,
#python, #environments)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_kedi.errors import KediExecutionError, KediValueExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.cancel import STATE as CANCEL
from pytest_kedi.runtime.cancel import check_current
from pytest_kedi.runtime.context import Frame, Ret
from pytest_kedi.runtime.evaluate import (
    CALL_LINE,
    eval_rhs,
    resolve_type,
    run_fence,
    type_violation,
    where,
)
from pytest_kedi.runtime.pyerrors import checked
from pytest_kedi.runtime.types import validator_for

__all__ = [
    "HANDLERS",
    "Handler",
    "exec_body",
    "exec_stmt",
    "named_line",
    "statement_failed",
    "stmt_frame",
]

Handler = Callable[[Any, Frame], "Ret | None"]

#: Statement node type -> handler. Filled by `runtime.dispatch.install()` (called by
#: `runtime.load`), which lists every handler explicitly; the handler modules need
#: `exec_body`, so this module cannot import them.
HANDLERS: dict[type, Handler] = {}

_KINDS: dict[type, str] = {
    nodes.Assign: "assignment",
    nodes.Reassign: "assignment",
    nodes.Template: "template",
    nodes.RawCapture: "template",
    nodes.Return: "return",
    nodes.PythonStmt: "python",
    nodes.PythonBlock: "python",
    nodes.If: "branch",
    nodes.Loop: "loop",
    nodes.Show: "show",
    nodes.Procedure: "procedure",
    nodes.TypeDecl: "type",
    nodes.Directive: "directive",
}


def stmt_frame(stmt: nodes.Node, ctx: Frame, error: KediExecutionError | None = None) -> Any:
    """The frame of ``stmt``: its first line, or for ``error`` raised by the statement itself
    the line of a multi-line statement (a template row, a continued return) it names, or
    whose ``<call()>`` it left."""
    kind = _KINDS.get(type(stmt), "program")
    if isinstance(stmt, nodes.Directive) and stmt.name == "optimize":
        kind = "template"
    span = stmt.span
    called = getattr(error, CALL_LINE, None)
    if called is not None:
        setattr(error, CALL_LINE, None)  # (the statements around this one: their own line)
    if span.end_line > span.start_line:
        line = span.start_line
        if called is not None and span.start_line < called <= span.end_line:
            line = called  # a `<call()>` on a later row failed
        elif error is not None and not error.frames and not error.python_traces:
            line = named_line(error.message, span) or line
        span = ctx.unit.source_file.line_span(line)
    return ctx.frame(kind, span)


def named_line(message: str, span: nodes.Span) -> int | None:
    """The line of ``span`` after its first that ``message`` names (``path:LINE: ...``)."""
    prefix = f"{span.path}:"
    if not message.startswith(prefix):
        return None
    digits = message[len(prefix) :].partition(":")[0]
    if not digits.isdigit():
        return None
    line = int(digits)
    return line if span.start_line < line <= span.end_line else None


def exec_stmt(stmt: nodes.Node, ctx: Frame) -> Ret | None:
    if CANCEL.pending:  # a timed-out row stops at its next statement
        check_current()
    try:
        return HANDLERS[type(stmt)](stmt, ctx)
    except KediExecutionError as err:
        raise err.with_outer_frame(stmt_frame(stmt, ctx, err))


def exec_body(body: tuple[nodes.Node, ...], ctx: Frame) -> Ret | None:
    """Run statements in order; the first taken return ends the body."""
    for stmt in body:
        if CANCEL.pending:  # a timed-out row stops at its next statement
            check_current()
        try:
            result = HANDLERS[type(stmt)](stmt, ctx)
        except (KediExecutionError, RecursionError) as exc:
            error = statement_failed(exc, stmt, ctx)
            if error is exc:
                raise
            raise error from exc
        if result is not None:
            return result
    return None


def statement_failed(
    exc: KediExecutionError | RecursionError, stmt: nodes.Node, ctx: Frame
) -> KediExecutionError:
    """The error a statement of a body raises when ``exc`` escapes it: located at the
    statement (a `RecursionError` becomes a Kedi error first)."""
    if isinstance(exc, KediExecutionError):
        return exc.with_outer_frame(stmt_frame(stmt, ctx, exc))
    deep = KediExecutionError("maximum recursion depth exceeded", original=exc)
    return deep.with_outer_frame(stmt_frame(stmt, ctx))


# ----------------------------------------------------------------------------- statements


def check_assignable(target: str, ctx: Frame, node: nodes.Node) -> None:
    scope = ctx.scope
    if target in scope.params:
        raise KediValueExecutionError(
            f"{where(ctx, node)}: parameter {target!r} is read-only and cannot be assigned"
        )
    if target == "args":
        raise KediValueExecutionError(
            f"{where(ctx, node)}: `args` is runtime-owned and cannot be assigned"
        )


def run_assign(stmt: nodes.Assign, ctx: Frame) -> None:
    check_assignable(stmt.target, ctx, stmt)
    tp = resolve_type(stmt.type, ctx)
    value = eval_rhs(stmt.value, ctx)
    if not checked(validator_for(tp), value):  # (user code it runs: `check_error`)
        raise type_violation(ctx, stmt, f"assignment to {stmt.target!r}", tp, value)
    ctx.scope.bind(stmt.target, value, tp)
    return None


def run_return(stmt: nodes.Return, ctx: Frame) -> Ret:
    value = eval_rhs(stmt.value, ctx)
    if ctx.returns is not None:
        ctx.returns(value, stmt)
    return Ret(value, stmt)


def run_python(stmt: nodes.PythonStmt | nodes.PythonBlock, ctx: Frame) -> None:
    run_fence(stmt.code, ctx)
    return None


def skip_suite(stmt: nodes.TestSuite | nodes.EvalSuite, ctx: Frame) -> None:
    return None  # suites never run as part of a program
