"""``> auto:`` procedures supplied by the sibling ``prog.cache.kedi``
(docs/language.md#unsupported-directives).

pytest-kedi never generates code. When a procedure whose body holds ``> auto:`` is
defined and the cache file defines a procedure of the same name, that definition is used
(its errors are located in the cache file); otherwise calling the procedure raises
"`> auto:` is not supported by pytest-kedi".
"""

from __future__ import annotations

from pathlib import Path

from pytest_kedi.lang import nodes, parse_file
from pytest_kedi.runtime.context import ModuleUnit
from pytest_kedi.runtime.sourcefile import SourceFile

__all__ = ["cache_path", "cached_procedure", "has_auto"]


def cache_path(kedi_path: str) -> Path:
    path = Path(kedi_path)
    return (
        path.with_name(path.name[: -len(".kedi")] + ".cache.kedi")
        if path.suffix == ".kedi"
        else path.with_name(path.name + ".cache.kedi")
    )


def has_auto(proc: nodes.Procedure) -> bool:
    return any(isinstance(s, nodes.Directive) and s.name == "auto" for s in proc.body)


def cached_procedure(unit: ModuleUnit, name: str) -> tuple[nodes.Procedure, ModuleUnit] | None:
    """The cache file's definition of ``name`` and a unit for its source, if any."""
    cache_unit = unit.auto_cache
    if cache_unit is None:
        path = cache_path(unit.path)
        if not path.is_file():
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
    for proc in cache_unit.module.procedures:
        if proc.name == name and not has_auto(proc):
            return proc, cache_unit
    return None
