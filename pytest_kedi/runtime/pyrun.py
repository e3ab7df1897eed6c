"""Running embedded Python (docs/language.md#python-interop): a compiled unit against
the globals of the visible Kedi environment, rebound Kedi names written back, errors
mapped to `.kedi` lines by `pyerrors`. Compiling is `pyinterop`'s."""

from __future__ import annotations

import dis
import types
from typing import Any

from pytest_kedi.errors import KediExecutionError, KediValueExecutionError
from pytest_kedi.runtime.livecopies import RUNNING
from pytest_kedi.runtime.pyanalysis import binding_line
from pytest_kedi.runtime.pyerrors import python_error
from pytest_kedi.runtime.pyglobals import (
    LazyDeleted,
    LazyGlobals,
    build_globals,
    module_globals,
    raw_global,
    reading_globals,
    same_binding,
    split_scope,
)
from pytest_kedi.runtime.pyinterop import CompiledUnit
from pytest_kedi.runtime.scope import MISSING, LazyBinding, Scope
from pytest_kedi.runtime.usererrors import user_error

__all__ = ["NOT_RUN", "run_block", "run_expr", "run_prelude", "run_with_params"]

#: What `run_with_params` returns when the block must run with a frame instead.
NOT_RUN = object()


def run_expr(unit: CompiledUnit, scope: Scope) -> Any:
    try:
        if unit.simple:
            # No nested code and no walrus: module-level names come from the cached
            # globals, frame-level names from a locals mapping (no copying).
            inner, outer = split_scope(scope)
            base = module_globals(outer) if outer is not None else {}
            base = reading_globals(base, unit.global_reads())
            if len(inner) == 1 and not inner[0].hides:
                return eval(unit.code, base, inner[0].vars)
            if not inner:
                return eval(unit.code, base)
            if not any(s.hides for s in inner):  # (else: a name hidden from `base`)
                local: dict[str, Any] = {}
                for s in reversed(inner):
                    local.update(s.vars)
                running = RUNNING.units  # a procedure it calls may rebind what it reads next
                running.append((local, scope, None, None))
                try:
                    return eval(unit.code, base, local)
                finally:
                    running.pop()
        reads = unit.global_reads()
        g = build_globals(scope, reads)
        candidates = unit.candidates if reads is not None else _every_name(g, unit)
        running = RUNNING.units
        if not candidates:
            running.append((g, scope, None, None))
            try:
                return eval(unit.code, g, {})
            finally:
                running.pop()
        # an assignment expression (`:=`): a Kedi name it rebinds is written back, as a
        # block's assignment is (docs/language.md#python-interop)
        before = {name: raw_global(g, name) for name in candidates}
        bound: dict[str, Any] = {}
        running.append((g, scope, before, _writer(unit)))
        try:
            try:
                value = eval(unit.code, g, bound)  # `:=` binds here; in a comprehension, in `g`
            finally:
                running.pop()
        except BaseException as exc:
            _bind_walrus(g, bound, before)
            _write_back_raising(g, before, scope, unit, exc)
            raise
    except BaseException as exc:
        err = python_error(exc, unit) if user_error(exc) else exc
        if err is exc:
            raise
        raise err from exc
    _bind_walrus(g, bound, before)
    _write_back(g, before, scope, unit)
    return value


def _bind_walrus(g: dict[str, Any], bound: dict[str, Any], before: dict[str, Any]) -> None:
    for name, new in bound.items():
        if name in before:
            g[name] = new


def run_block(unit: CompiledUnit, scope: Scope) -> Any:
    """Run a block as a synthetic function; return its ``return`` value (or None)."""
    reads = unit.global_reads()
    g = build_globals(scope, reads)
    candidates = unit.candidates if reads is not None else _every_name(g, unit)
    before = {name: raw_global(g, name) for name in candidates} if candidates else None
    running = RUNNING.units  # procedures it calls read and rebind its Kedi names live
    running.append((g, scope, before, None if before is None else _writer(unit)))
    try:
        try:
            result = types.FunctionType(unit.code_for(before), g)()
        finally:
            running.pop()
    except BaseException as exc:
        if before is not None:  # what it rebound before it raised is kept
            _write_back_raising(g, before, scope, unit, exc)
        deleted = _deleted_lazy(exc, g)
        if deleted is not None:
            raise KediValueExecutionError(_deleted(unit, deleted)) from None
        err = python_error(exc, unit) if user_error(exc) else exc
        if err is exc:
            raise
        raise err from exc
    if before is not None:
        _write_back(g, before, scope, unit)
    return result


def run_with_params(
    unit: CompiledUnit, code: types.CodeType, module: Scope, values: tuple[Any, ...]
) -> Any:
    """Run a procedure's whole-body block compiled as a function of its parameters
    (`CompiledUnit.with_params`) with ``values``, its globals those of ``module``, as
    `run_block` would run it; `NOT_RUN` when it cannot run so: a name the block binds is
    bound at module level (it must be written back), or it reads a lazy binding not
    forced yet."""
    table = reading_globals(module_globals(module), unit.global_reads())
    if type(table) is LazyGlobals:
        return NOT_RUN
    for name in unit.candidates:
        if name in table:
            return NOT_RUN
    g = dict(table)
    running = RUNNING.units  # procedures it calls may rebind what it reads next
    running.append((g, module, None, None))
    try:
        return types.FunctionType(code, g)(*values)
    except BaseException as exc:
        err = python_error(exc, unit) if user_error(exc) else exc
        if err is exc:
            raise
        raise err from exc
    finally:
        running.pop()


def run_prelude(unit: CompiledUnit, namespace: dict[str, Any]) -> None:
    """Run the prelude in ``namespace``, which holds the reserved `args`: the prelude
    reads it, and rebinding or deleting it is the located error it is in any block."""
    args = namespace.get("args", MISSING)
    try:
        exec(unit.code, namespace)
    except BaseException as exc:
        err = python_error(exc, unit) if user_error(exc) else exc
        if err is exc:
            raise
        raise err from exc
    now = namespace.get("args", MISSING)
    if now is not args:
        namespace["args"] = args
        where = _where(unit, "args")
        if now is MISSING:
            raise KediValueExecutionError(
                f"{where}: Kedi binding 'args' cannot be deleted from Python"
            )
        raise KediValueExecutionError(f"{where}: `args` is runtime-owned and cannot be assigned")


def _every_name(g: dict[str, Any], unit: CompiledUnit) -> frozenset[str]:
    """The write-back candidates of a unit that calls `globals`, `exec`, ... (no known
    reads): it may rebind any visible name (``globals()["n"] = 5``)."""
    names = set(dict.keys(g)).union(unit.candidates)
    if type(g) is LazyGlobals:
        names.update(g._pending)
    return frozenset(names)


def _writer(unit: CompiledUnit) -> Any:
    """How `livecopies.flush` writes back what ``unit`` rebound so far."""
    return lambda g, before, scope: _write_back(g, before, scope, unit)


def _write_back_raising(
    g: dict[str, Any], before: dict[str, Any], scope: Scope, unit: CompiledUnit, exc: BaseException
) -> None:
    """Write back what a unit rebound before it raised ``exc``, as a Python module keeps
    what its code bound before an exception (docs/language.md#python-interop). ``exc``
    still propagates: a rebinding that is an error (a parameter, `args`, a deleted
    binding) is not written back and is told as a note on ``exc``."""
    errors: list[str] = []
    _write_back(g, before, scope, unit, errors)
    user = exc  # the exception the rendering shows the notes of
    while isinstance(user, KediExecutionError) and user.original is not None:
        user = user.original
    for message in errors:
        note = f"(not written back: {message})"
        if isinstance(user, KediExecutionError):  # a Kedi error: told in its message
            user.message = f"{user.message}\n{note}"
            user.args = (user.message,)
        else:
            user.add_note(note)


def _write_back(
    g: dict[str, Any],
    before: dict[str, Any],
    scope: Scope,
    unit: CompiledUnit,
    errors: list[str] | None = None,
) -> None:
    """Write back the Kedi names ``unit`` rebound; an illegal rebinding raises, or with
    ``errors`` is appended to it and skipped."""
    for name, old in before.items():
        new = dict.get(g, name, MISSING)
        if new is MISSING and type(old) is LazyBinding:
            continue  # still pending (or deleted once forced: not told apart)
        if same_binding(old, new) or old is MISSING is new:
            continue
        owner = scope.find_owner(name)
        if owner is None or owner.vars[name] is MISSING:  # (MISSING: a hidden name)
            continue  # a new name: it vanishes (docs/language.md#python-interop)
        where = _where(unit, name)
        message = None
        if new is MISSING and owner.kind != "prelude":  # `del n` of a Kedi binding
            message = _deleted(unit, name)
        elif name in owner.params:
            message = f"{where}: parameter {name!r} is read-only and cannot be rebound from Python"
        elif owner.kind == "module" and name == "args":
            message = f"{where}: `args` is runtime-owned and cannot be assigned"
        if message is None:
            owner.set_existing(name, new)
        elif errors is None:
            raise KediValueExecutionError(message)
        else:
            errors.append(message)


def _deleted(unit: CompiledUnit, name: str) -> str:
    return f"{_where(unit, name)}: Kedi binding {name!r} cannot be deleted from Python"


def _deleted_lazy(exc: BaseException, g: dict[str, Any]) -> str | None:
    """The name of a lazy top-level binding, not forced yet, that ``exc`` says a ``del``
    could not delete (it is not in the globals until read: docs/language.md#lazy-bindings),
    so that the deletion is the error deleting a forced one is, without forcing it."""
    if isinstance(exc, LazyDeleted):  # `del globals()["n"]`
        return str(exc.args[0])
    if type(exc) is not NameError or type(g) is not LazyGlobals:
        return None  # (before reading `.name`: a user's exception class may fail that read)
    name = exc.name
    if name is None:
        return None
    if name not in g._pending or dict.__contains__(g, name) or exc.__traceback__ is None:
        return None
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    if frame.f_globals is not g:
        return None
    for op in dis.get_instructions(frame.f_code):
        if op.offset == tb.tb_lasti:
            deleting = op.opname == "DELETE_GLOBAL" and op.argval == name
            return name if deleting else None
    return None


def _where(unit: CompiledUnit, name: str) -> str:
    """``path:line`` of the statement of ``unit`` that rebound or deleted ``name`` (its
    first line when no statement visibly did: ``globals()["n"] = 5``)."""
    code = unit.info.code
    line = binding_line(code.source, code.kind == "expr", name)
    return f"{unit.info.source_file.path}:{code.line + (line or 1) - 1}"
