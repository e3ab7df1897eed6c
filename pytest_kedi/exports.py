"""`lazy_exports`: a package's public names imported on first use (PEP 562).

A package whose ``__init__`` imported every module it names would make each importer pay
for all of them: pytest loads the plugin in every process of a project, most of which
never run a suite, parse a file or call a model.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: MutableMapping[str, Any], exports: Mapping[str, str]
) -> Callable[[str], Any]:
    """The module ``__getattr__`` of the package whose ``globals()`` are ``namespace``, for
    ``exports`` (public name -> the module that defines it): the module is imported when
    the name is first read, and the value kept in ``namespace``, so the next read is a
    plain attribute."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
