"""Validation mode (docs/language.md#validation-mode, #block-scopes, #lazy-bindings): every root
declaration in source order, with
top-level bindings made lazy; side-effect statements and the top-level return never run."""

from __future__ import annotations

import copy
import threading
from typing import Any

from pytest_kedi.errors import KediExecutionError, KediNameError, KediUnsupportedError
from pytest_kedi.lang import nodes
from pytest_kedi.lang.syntax import Runtime, names
from pytest_kedi.runtime.context import Frame, ModuleUnit
from pytest_kedi.runtime.interpreter import exec_stmt
from pytest_kedi.runtime.model.state import AgentState
from pytest_kedi.runtime.pyglobals import same_binding
from pytest_kedi.runtime.rowscope import apart
from pytest_kedi.runtime.scope import MISSING, LazyBinding, Scope

__all__ = ["declare_all"]

_DECLARATIONS = (nodes.Procedure, nodes.TypeDecl)
#: Statements that are not run while declaring (unsupported ones, model calls).
_SKIPPED_DIRECTIVES = names(lambda d: d.runtime in (Runtime.UNSUPPORTED, Runtime.OPTIMIZE))


def _binding_names(stmt: nodes.Node) -> tuple[str, ...]:
    if isinstance(stmt, (nodes.Assign, nodes.RawCapture)):
        return (stmt.target,)
    if isinstance(stmt, nodes.Template):
        return tuple(f.name for f in stmt.outputs)
    return ()


def declare_all(unit: ModuleUnit) -> None:
    """Process the root module for tests/evals (validation mode).

    Work is linear in the file: each statement records only the names it rebinds.
    """
    scope = unit.scope
    scope.forcer = _force
    ctx = Frame(scope, unit, "<program>")
    history = _History(scope)
    for index, stmt in enumerate(unit.module.body):
        touched: dict[str, Any] = {}
        scope.observer = touched
        try:
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
                    position = _Position(index, history)
                    lazy = LazyBinding(names, _runner(stmt, ctx, scope.state, position), scope)
                    for name in names:
                        scope.bind(name, lazy)
        finally:
            scope.observer = None
        for name, before in touched.items():
            value = scope.vars.get(name, MISSING)
            if before is not value and not same_binding(before, value):
                history.declared(name, index, value)


def _declare_import(stmt: nodes.Directive, ctx: Frame) -> None:
    """An import of an unsupported (bundled/registry) module does not fail the file: its
    listed names raise the error when read; for a whole-module import, unknown names
    report it (docs/language.md#support-matrix: clear errors only on the code path that needs
    them)."""
    try:
        exec_stmt(stmt, ctx)
    except KediUnsupportedError as err:
        if not stmt.names:
            ctx.unit.import_failures.append(err)
            return
        failure = copy.copy(err)

        def fail(lazy: LazyBinding) -> dict[str, Any]:
            raise copy.copy(failure)

        lazy = LazyBinding(tuple(stmt.names), fail, ctx.scope)
        for name in stmt.names:
            ctx.scope.bind(name, lazy)


class _History:
    """For each top-level name, the declarations that bound it: (statement index,
    value, contract), in source order."""

    __slots__ = ("entries", "module")

    def __init__(self, module: Scope) -> None:
        self.module = module
        contracts = module.contracts
        self.entries: dict[str, list[tuple[int, Any, Any]]] = {
            name: [(-1, value, contracts.get(name, MISSING))] for name, value in module.vars.items()
        }

    def declared(self, name: str, index: int, value: Any) -> None:
        entry = (index, value, self.module.contracts.get(name, MISSING))
        self.entries.setdefault(name, []).append(entry)


class _Position:
    """The module environment at a lazy binding's source position
    (docs/language.md#validation-mode).

    A name still bound by the same declaration reads its live value (so write-backs and
    ``:=`` are seen); a name rebound by a later declaration reads the value it had at
    the binding's position; names declared later are not visible.
    """

    __slots__ = ("history", "index")

    def __init__(self, index: int, history: _History) -> None:
        self.index = index
        self.history = history

    def scope(self, module: Scope, state: AgentState) -> tuple[Scope, dict[str, Any]]:
        """A scope standing for the module at this position, and the names read live."""
        env: dict[str, Any] = {}
        live: dict[str, Any] = {}
        contracts: dict[str, Any] = {}
        index = self.index
        for name, entries in self.history.entries.items():
            last = entries[-1]
            if last[0] < index and name in module.vars:
                env[name] = live[name] = module.vars[name]
                contract = module.contracts.get(name, MISSING)
            else:
                found = next((e for e in reversed(entries) if e[0] < index), None)
                if found is None:
                    continue
                env[name], contract = found[1], found[2]
            if contract is not MISSING:
                contracts[name] = contract
        overlay = Scope(env, module.parent, "module", state)
        overlay.forcer = _force
        overlay._contracts = contracts
        return overlay, live


def _runner(stmt: nodes.Node, ctx: Frame, state: AgentState, position: _Position) -> Any:
    def run(lazy: LazyBinding) -> dict[str, Any]:
        module = ctx.scope
        overlay, live = position.scope(module, state)
        exec_stmt(stmt, Frame(overlay, ctx.unit, ctx.label))
        # Python write-back to a top-level name still owned by its declaration
        # (docs/language.md#python-interop).
        for name, before in live.items():
            after = overlay.vars.get(name, MISSING)
            current = module.vars.get(name, MISSING)
            unchanged = same_binding(before, current)
            if after is not before and name not in lazy.names and unchanged:
                module.set_existing(name, after)
        values: dict[str, Any] = {}
        for name in lazy.names:
            values[name] = overlay.vars[name]
            if module.vars.get(name) is lazy:
                contract = overlay.contracts.get(name, MISSING)
                module.bind(name, values[name], contract)
        return values

    return run


_LOCK = threading.RLock()


def _force(lazy: LazyBinding, name: str) -> Any:
    """Run a lazy top-level binding on its first read; failures re-raise at each read.

    Forcing is serialised (rows may run on worker threads); a binding forced by another
    thread meanwhile is simply read.
    """
    with _LOCK:
        return _force_locked(lazy, name)


def _force_locked(lazy: LazyBinding, name: str) -> Any:
    if lazy.values is not None:
        return lazy.values[name]
    if lazy.error is not None:
        raise copy.copy(lazy.error)
    if lazy.running:
        raise KediNameError(f"top-level {name!r} is read during its own initialization")
    lazy.running = True
    try:
        # its model requests are counted on their own, as in no row's repeat: their cassette
        # keys do not depend on which row, case or run read the name first
        with apart("lazy top-level binding"):
            lazy.values = lazy.runner(lazy)
    except KediExecutionError as err:
        lazy.error = copy.copy(err)
        raise
    finally:
        lazy.running = False
    return lazy.values[name]
