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

A suite with many rows runs its metric as a Python function of the row's names instead
(`QuickBody.function_code`, `Program.metric_function`): the same expression, compiled once
more as ``return <expr>`` with the names as parameters, so a row passes its values
without building a dictionary for ``eval``. Simple Python reads a name the same way
either way: the row's names first, then the module's, then the builtins.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from types import CodeType

from pytest_kedi.errors import KediError, KediExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.lang.pycheck import may_warn
from pytest_kedi.runtime.context import Frame, ModuleUnit
from pytest_kedi.runtime.interpreter import statement_failed
from pytest_kedi.runtime.pyerrors import PYTHON_UNITS, python_error
from pytest_kedi.runtime.pyinterop import CompiledUnit, function_code, relocated_expression

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
    #: `function_code` by parameters, compiled on first use
    functions: dict[tuple[str, ...], CodeType | None] = field(default_factory=dict)

    def function_code(self, params: tuple[str, ...]) -> CodeType | None:
        """The body as the code of a function of ``params`` returning the expression
        (compiled once per ``params``), its frames located as the unit's; None when
        compiling the text again may make Python warn again (`lang.pycheck.may_warn`)."""
        if params in self.functions:
            return self.functions[params]
        info = self.unit.info
        code: CodeType | None = None
        if not may_warn(info.code.source) and len(set(params)) == len(params):
            try:
                expr = relocated_expression(info.code, info.source_file).body
                body: list[ast.stmt] = [ast.copy_location(ast.Return(value=expr), expr)]
                path, line = info.source_file.path, info.code.line
                code = function_code("_kedi_metric", params, body, path, line, positioned=True)
            except (SyntaxError, TypeError, ValueError):  # compiled once already: unexpected
                code = None
            else:
                PYTHON_UNITS.track(code, info)
        self.functions[params] = code
        return code

    def failure(self, exc: BaseException, ctx: Frame) -> KediExecutionError:
        """The error of ``exc`` (a `user_error`) located as the interpreter locates
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
