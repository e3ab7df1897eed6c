"""Validation mode (§3.2, §9.1, §10.4): every root declaration in source order, with
top-level bindings made lazy; side-effect statements and the top-level return never run."""

from __future__ import annotations

import copy
import threading
from typing import Any

from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import Ctx, ModuleUnit
from pytest_kedi.runtime.directives import STATEMENT_DIRECTIVES
from pytest_kedi.runtime.errors import KediExecutionError, KediNameError, KediUnsupportedError
from pytest_kedi.runtime.interpreter import exec_stmt
from pytest_kedi.runtime.scope import MISSING, KediState, LazyBinding

__all__ = ["declare_all"]

_DECLARATIONS = (nodes.Procedure, nodes.TypeDecl)
_SKIPPED_DIRECTIVES = STATEMENT_DIRECTIVES | {"auto", "optimize"}


def _binding_names(stmt: nodes.Node) -> tuple[str, ...]:
    if isinstance(stmt, (nodes.Assign, nodes.RawCapture)):
        return (stmt.target,)
    if isinstance(stmt, nodes.Template):
        return tuple(f.name for f in stmt.outputs)
    return ()


def declare_all(unit: ModuleUnit) -> None:
    """Process the root module for tests/evals (validation mode)."""
    scope = unit.scope
    scope.forcer = _force
    ctx = Ctx(scope, unit, "<program>")
    for stmt in unit.module.body:
        if isinstance(stmt, _DECLARATIONS):
            exec_stmt(stmt, ctx)
        elif isinstance(stmt, nodes.Directive):
            if stmt.name == "import":
                _declare_import(stmt, ctx)
            elif stmt.name not in _SKIPPED_DIRECTIVES:
                exec_stmt(stmt, ctx)
        else:
            names = _binding_names(stmt)
            if names:
                lazy = LazyBinding(names, _runner(stmt, ctx, scope.state), scope)
                for name in names:
                    scope.bind(name, lazy)


def _declare_import(stmt: nodes.Directive, ctx: Ctx) -> None:
    """An import of an unsupported (bundled/registry) module does not fail the file: its
    listed names raise the error when read; for a whole-module import, unknown names
    report it (§8: clear errors only on the code path that needs them)."""
    try:
        exec_stmt(stmt, ctx)
    except KediUnsupportedError as err:
        if not stmt.names:
            ctx.unit.import_failures.append(err)
            return
        failure = copy.copy(err)

        def fail() -> None:
            raise copy.copy(failure)

        lazy = LazyBinding(tuple(stmt.names), fail, ctx.scope)
        for name in stmt.names:
            ctx.scope.bind(name, lazy)


def _runner(stmt: nodes.Node, ctx: Ctx, state: KediState) -> Any:
    def run() -> None:
        scope = ctx.scope
        saved = scope.state
        scope.state = state  # the binding's own source-position agent state
        try:
            exec_stmt(stmt, ctx)
        finally:
            scope.state = saved

    return run


_LOCK = threading.RLock()


def _force(lazy: LazyBinding, name: str) -> Any:
    """Run a lazy top-level binding on its first read; failures re-raise at each read.

    Forcing is serialised (rows may run on worker threads); a binding forced by another
    thread meanwhile is simply read.
    """
    with _LOCK:
        current = lazy.scope.vars.get(name, MISSING)
        if current is not lazy and current is not MISSING and type(current) is not LazyBinding:
            return current
        return _force_locked(lazy, name)


def _force_locked(lazy: LazyBinding, name: str) -> Any:
    if lazy.error is not None:
        raise copy.copy(lazy.error)
    if lazy.running:
        raise KediNameError(f"top-level {name!r} is read during its own initialization")
    runner_scope = lazy.scope
    previous = {n: v for n, v in runner_scope.vars.items() if n in lazy.names}
    lazy.running = True
    try:
        lazy.runner()
    except KediExecutionError as err:
        lazy.error = copy.copy(err)
        raise
    finally:
        lazy.running = False
    # A later declaration of the same name keeps winning (§3.1).
    for other, before in previous.items():
        if before is not lazy:
            runner_scope.set_existing(other, before)
    value = runner_scope.vars.get(name, MISSING)
    if type(value) is LazyBinding or value is MISSING:
        raise KediNameError(f"top-level {name!r} could not be initialized")
    return value
