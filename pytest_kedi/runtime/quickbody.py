"""Suite bodies evaluated without the statement interpreter.

A metric body runs once per eval row. The commonest one is a single ``= `expr` `` return
whose Python is simple (no nested scopes, no walrus, no namespace introspection: see
`pyinterop.CompiledUnit.simple`) in a suite without directives. The interpreter would
build a frame scope, dispatch the statement and evaluate the expression with the frame's
names as locals over the module globals; `Program` does that last step alone, with
the row's bindings as the locals. Everything else is the interpreter's, in the same
order: the cancellation check before the statement, the Python error located at its
`.kedi` line and the statement's frame (`QuickBody.failure`), then the body's frame.
tests/runtime/test_runtime_quickbody.py runs bodies both ways and compares values and
errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType

from pytest_kedi.errors import KediError, KediExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import Frame, ModuleUnit
from pytest_kedi.runtime.interpreter import statement_failed
from pytest_kedi.runtime.pyerrors import python_error
from pytest_kedi.runtime.pyinterop import CompiledUnit

__all__ = ["QuickBody", "quick_body"]


@dataclass(frozen=True, slots=True)
class QuickBody:
    """A one-return body of simple Python (see the module docstring). The caller runs
    ``eval(code, module_globals(module scope), bindings)`` after the cancellation check
    (the bindings are not copied: simple Python cannot bind names), and `failure` turns
    an exception escaping it into the error the interpreter raises."""

    stmt: nodes.Return
    unit: CompiledUnit
    code: CodeType

    def failure(self, exc: BaseException, ctx: Frame) -> KediExecutionError:
        """The error of ``exc`` (one of `USER_ERRORS`) located as the interpreter locates
        it in the frame ``ctx``, before the body's own frame is added (``exc`` itself:
        re-raise it)."""
        err = python_error(exc, self.unit)  # as `pyrun.run_expr`
        return statement_failed(err, self.stmt, ctx)  # as `interpreter.exec_body`


def quick_body(
    body: tuple[nodes.Node, ...], directives: tuple[nodes.Directive, ...], module: ModuleUnit
) -> QuickBody | None:
    """``body`` as a `QuickBody`, or None when the interpreter must run it."""
    if directives or len(body) != 1:
        return None
    (stmt,) = body
    if not isinstance(stmt, nodes.Return) or stmt.value.mode != "expr":
        return None
    code = stmt.value.code
    if code is None:
        return None
    try:
        unit = module.runtime.unit_for(code, module.source_file, None)
    except KediError:
        return None  # the interpreter reports it when the body runs
    if not unit.simple or module.scope.kind != "module":
        return None
    return QuickBody(stmt, unit, unit.code)
