"""The interpreter's dispatch table, listed explicitly: statement node type -> handler.

`interpreter.exec_body` finds handlers in `interpreter.HANDLERS`. The handler modules
import `interpreter` (for `exec_body`), so the table is assembled here, above all of
them, and `install()` (called by `runtime.load` before any statement runs) puts it in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pytest_kedi.lang import nodes
from pytest_kedi.runtime import control, directive_effects, interpreter, procedures
from pytest_kedi.runtime.interpreter import Handler
from pytest_kedi.runtime.model import calls as modelcalls

__all__ = ["TABLE", "install"]

TABLE: Mapping[type, Handler] = MappingProxyType(
    {
        nodes.Assign: interpreter.run_assign,
        nodes.Reassign: control.run_reassign,
        nodes.Return: interpreter.run_return,
        nodes.PythonStmt: interpreter.run_python,
        nodes.PythonBlock: interpreter.run_python,
        nodes.Template: modelcalls.run_template,
        nodes.RawCapture: modelcalls.run_raw_capture,
        nodes.If: control.run_if,
        nodes.Loop: control.run_loop,
        nodes.Show: control.run_show,
        nodes.Directive: directive_effects.run_directive,
        nodes.Procedure: procedures.define_procedure,
        nodes.TypeDecl: procedures.define_type,
        nodes.TestSuite: interpreter.skip_suite,
        nodes.EvalSuite: interpreter.skip_suite,
    }
)


def install() -> None:
    """Put `TABLE` in place for the interpreter (idempotent)."""
    if interpreter.HANDLERS != TABLE:
        interpreter.HANDLERS.clear()
        interpreter.HANDLERS.update(TABLE)
