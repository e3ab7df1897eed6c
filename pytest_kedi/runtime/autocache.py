"""``> auto:`` procedures supplied by the sibling ``prog.cache.kedi``
(docs/language.md#unsupported-directives).

pytest-kedi never generates code. When a procedure whose body holds ``> auto:`` is
defined and the cache file defines a procedure of the same name, that definition is used
(its errors are located in the cache file); otherwise calling the procedure raises
"`> auto:` is not supported by pytest-kedi". The cache's ``@test:`` suites named after
such a procedure are the file's generated tests (`generated_suites`): they run on the
file's runtime, after the file's own suites, located in the cache file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pytest_kedi.fileread import is_file
from pytest_kedi.lang import nodes, parse_file
from pytest_kedi.runtime.context import ModuleUnit
from pytest_kedi.runtime.sourcefile import SourceFile

__all__ = ["cache_path", "cached_procedure", "generated_names", "generated_suites", "has_auto"]


def cache_path(kedi_path: str) -> Path:
    path = Path(kedi_path)
    return (
        path.with_name(path.name[: -len(".kedi")] + ".cache.kedi")
        if path.suffix == ".kedi"
        else path.with_name(path.name + ".cache.kedi")
    )


def has_auto(proc: nodes.Procedure) -> bool:
    return proc.is_auto


def _cache_unit(unit: ModuleUnit) -> ModuleUnit | None:
    """The unit of ``unit``'s sibling cache file (parsed once), or None without one."""
    cache_unit = unit.auto_cache
    if cache_unit is None:
        path = cache_path(unit.path)
        if not is_file(path):
            return None
        module = parse_file(str(path))
        cache_unit = ModuleUnit(
            unit.runtime,
            module,
            SourceFile(str(path), module.source),
            unit.prelude_scope,
            unit.scope,
            unit.optimized,
        )
        unit.auto_cache = cache_unit
    return cache_unit


def cached_procedure(unit: ModuleUnit, name: str) -> tuple[nodes.Procedure, ModuleUnit] | None:
    """The cache file's definition of ``name`` and a unit for its source, if any."""
    cache_unit = _cache_unit(unit)
    if cache_unit is None:
        return None
    for proc in cache_unit.module.procedures:
        if proc.name == name and not has_auto(proc):
            return proc, cache_unit
    return None


def generated_names(autos: Iterable[str], cache: nodes.Module) -> frozenset[str]:
    """The ``> auto:`` procedures (``autos``: their names) that ``cache`` defines with a
    body: the names of the ``@test:`` suites it generated for them."""
    wanted = set(autos)
    return frozenset(p.name for p in cache.procedures if p.name in wanted and not p.is_auto)


def generated_suites(unit: ModuleUnit) -> tuple[nodes.TestSuite, ...]:
    """The ``@test:`` suites of ``unit``'s cache file named after an ``> auto:`` procedure
    of ``unit`` that the cache defines, in the cache's order (docs/language.md §4.5)."""
    if not any(has_auto(proc) for proc in unit.module.procedures):
        return ()
    cache_unit = _cache_unit(unit)
    if cache_unit is None:
        return ()
    autos = (proc.name for proc in unit.module.procedures if proc.is_auto)
    names = generated_names(autos, cache_unit.module)
    return tuple(suite for suite in cache_unit.module.test_suites if suite.name in names)
