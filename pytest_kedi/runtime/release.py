"""Taking a loaded program apart so that dropping it frees it at once (`Program.release`)."""

from __future__ import annotations

from pytest_kedi.runtime.context import ModuleUnit
from pytest_kedi.runtime.procedures import KediProcedure
from pytest_kedi.runtime.pyglobals import LazyGlobals
from pytest_kedi.runtime.pymodule import drop_modules
from pytest_kedi.runtime.sourcefile import SourceFile

__all__ = ["take_apart"]


def take_apart(root: ModuleUnit) -> list[SourceFile]:
    """Empty the scopes, Python globals tables and runtime tables of ``root`` and of every
    module it loaded, and unregister their Python modules (`pymodule`; `Program.release`,
    but for the record of compiled code); the files whose code it was."""
    runtime = root.runtime
    units = [root, *runtime.modules.values()]
    units += [unit.auto_cache for unit in units if unit.auto_cache is not None]
    for unit in units:
        unit.prelude_scope.heir = None  # the module scope's parent: a cycle
        for scope in (unit.scope, unit.prelude_scope):
            cached, scope._gcache = scope._gcache, None
            if cached is not None:
                table = cached[1]
                if isinstance(table, LazyGlobals):
                    table.empty()
                else:
                    table.clear()
            for value in scope.vars.values():
                if isinstance(value, KediProcedure):
                    value.release()
            scope.vars.clear()
        if unit.exports is not None:
            unit.exports.clear()
    runtime.modules.clear()
    drop_modules(runtime.py_modules)  # their Python modules are unregistered
    runtime.compiled.clear()
    runtime.type_cache.clear()
    runtime.type_units.clear()
    return [unit.source_file for unit in units]
