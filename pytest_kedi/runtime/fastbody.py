"""Generated fast paths: a procedure body of simple statements as one Python function.

A body qualifies when it is a run of ``[name: T] = rhs`` assignments and ``>>`` templates
ending in one ``= rhs`` return, each right-hand side a backtick expression, a text template
or a ``<call(...)>`` (or the body is one fenced return), each template output of a built-in
type, no name bound twice, and the procedure is defined at module level. `fastbuild.build`
turns it into ``def <proc>(<params>)`` that does what the interpreter does, in the same order:

* checks each parameter (an exact-type test first, then the strict validator);
* checks the cancellation token before every statement;
* evaluates backtick code inlined with its `.kedi` line numbers and columns; reads a
  substitution as a local (parameters, earlier assignments) or a module global;
  renders text from exact strings (anything else through `evaluate.render`); calls a
  ``<call(...)>`` through `evaluate.apply_callee`;
* renders a ``>>`` template's prompt as text and asks the model through
  `pytest_kedi.runtime.model.calls.TemplateCall` (what `run_template` does: the same
  boundary call, output checks and errors), binding its outputs as locals;
* checks every assigned value and the returned value against its type;
* runs a one-fence body as the interpreter runs a fence (`run_fence`).

Before each operation that can fail, the function stores the operation's index in its
local ``_kedi_at`` (only on the failing branch for checks); `FastBody.failure` reads
it from the traceback and builds the error the interpreter raises at that point: same
class, message, Python traces and `.kedi` frames. Anything else keeps the procedure on
the interpreter (`fastbuild.build` returns None); tests/runtime/test_runtime_fastbody.py checks
that both paths agree.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import Frame
from pytest_kedi.runtime.evaluate import (
    CALL_LINE,
    NotCallable,
    not_callable,
    type_violation,
    unknown_name,
)
from pytest_kedi.runtime.interpreter import stmt_frame
from pytest_kedi.runtime.pyerrors import UnitInfo, python_error
from pytest_kedi.runtime.pyglobals import reading_globals
from pytest_kedi.runtime.pyinterop import CompiledUnit
from pytest_kedi.runtime.pyrun import NOT_RUN, run_block, run_with_params
from pytest_kedi.runtime.scope import Scope

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime.procedures import KediProcedure

__all__ = ["AT", "PREFIX", "FastBody", "Op", "fail", "run_fence"]

#: Names of the generated function's own locals and helper parameters start with this.
PREFIX = "_kedi_"
#: The local holding the index of the operation running (in `FastBody.ops`).
AT = "_kedi_at"


class _Invalid(Exception):
    """Raised by generated code for a value failing its type check."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def fail(value: Any) -> None:
    raise _Invalid(value)


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of a generated body that can fail.

    ``kind``: ``args`` (parameter checks), ``python`` (backtick code), ``lookup`` (a
    module-level name), ``call``, ``render``, ``fence``, ``assign`` / ``return`` (type
    checks)."""

    kind: str
    stmt: nodes.Node | None = None
    node: nodes.Node | None = None
    info: UnitInfo | None = None
    tp: Any = None
    name: str = ""


@dataclass(frozen=True, slots=True)
class FastBody:
    """A generated body: its code, the helper values its trailing parameters default
    to, its operations (indexed by ``_kedi_at``) and the global names its inlined Python
    reads (`global_reads`)."""

    code: types.CodeType
    helpers: tuple[Any, ...]
    ops: tuple[Op, ...]
    reads: frozenset[str] | None

    def bind(self, globals_: dict[str, Any]) -> Callable[..., Any]:
        """The body as a function of the module's globals (`module_globals`): their plain
        twin when every name it reads is forced (`reading_globals`). The caller binds it
        again when the module's bindings change (`EPOCHS.module`)."""
        table = reading_globals(globals_, self.reads)
        return types.FunctionType(self.code, table, self.code.co_name, self.helpers)

    def failure(
        self, exc: BaseException, proc: KediProcedure, values: tuple[Any, ...]
    ) -> tuple[BaseException, BaseException | None]:
        """The error the interpreter raises where ``exc`` escaped the generated body,
        and its cause (``exc`` itself: re-raise it unchanged)."""
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code is not self.code:
            tb = tb.tb_next
        index = None if tb is None else tb.tb_frame.f_locals.get(AT)
        if tb is None or index is None:
            return exc, None
        op = self.ops[index]
        invalid = isinstance(exc, _Invalid)
        if op.kind == "args" and invalid:
            error = proc.argument_error(values)
            return (exc, None) if error is None else (error, None)
        ctx = Frame(
            Scope(dict(zip(proc.names, values, strict=False)), proc.closure, "frame", proc.state),
            proc.unit,
            proc.name,
            proc,
        )
        err: BaseException
        cause: BaseException | None = None
        if op.kind == "python":
            assert op.info is not None
            err = python_error(exc, None, origin=(self.code, op.info))
            cause = exc
        elif invalid and op.kind == "assign":
            assert isinstance(op.stmt, nodes.Assign)
            what = f"assignment to {op.stmt.target!r}"
            err = type_violation(ctx, op.stmt, what, op.tp, exc.value)  # type: ignore[attr-defined]
        elif invalid and op.kind == "return":
            assert op.stmt is not None
            err = proc.violation(op.stmt, exc.value)  # type: ignore[attr-defined]
        elif op.kind == "lookup" and isinstance(exc, NameError) and tb.tb_next is None:
            assert op.node is not None
            err = unknown_name(op.name, ctx, op.node)
        elif op.kind == "call" and isinstance(exc, NotCallable):
            assert isinstance(op.node, nodes.CallSubst)
            callee = tb.tb_frame.f_locals.get(op.name)
            err = not_callable(op.node, ctx, callee)
        elif isinstance(exc, RecursionError) and not isinstance(exc, KediExecutionError):
            err = KediExecutionError("maximum recursion depth exceeded", original=exc)
            cause = exc
        else:
            err = cause = exc
            if isinstance(exc, KediExecutionError) and isinstance(op.node, nodes.CallSubst):
                setattr(exc, CALL_LINE, op.node.span.start_line)  # as `call_value` marks it
        if not isinstance(err, KediExecutionError):
            return exc, None
        assert op.stmt is not None
        err.with_outer_frame(stmt_frame(op.stmt, ctx, err))
        return err.with_outer_frame(proc.frame), cause


def run_fence(unit: CompiledUnit, proc: KediProcedure, values: tuple[Any, ...]) -> Any:
    """Run a procedure's one-fence body: as a function of its parameters, as Python runs
    a function (`run_with_params`), else in a frame of its parameters."""
    closure = proc.closure
    if closure.kind == "module":
        code = unit.with_params(proc.names)
        if code is not None:
            result = run_with_params(unit, code, closure, values)
            if result is not NOT_RUN:
                return result
    frame = Scope(dict(zip(proc.names, values, strict=True)), proc.closure, "frame", proc.state)
    frame.params = proc.param_set
    return run_block(unit, frame)
