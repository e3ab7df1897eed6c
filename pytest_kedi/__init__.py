"""pytest-kedi: run Kedi evaluation suites and test cases as pytest tests.

The error hierarchy (`KediError` and its subclasses, see `pytest_kedi.errors`) is
imported eagerly; the parser (`parse`, `parse_file`) and the runtime (`load`, `Program`)
are imported on first use, so that a plain ``pytest`` run does not pay for them (nor for
pydantic-ai).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_kedi import errors
from pytest_kedi.errors import *  # noqa: F403 (the whole public error vocabulary)
from pytest_kedi.exports import lazy_exports as _lazy_exports
from pytest_kedi.lang.diagnostics import KediParseError

__version__ = "0.1.0"

__all__ = [
    "KediParseError",
    "Program",
    "__version__",
    "load",
    "parse",
    "parse_file",
]
__all__ += errors.__all__

_RUNTIME_EXPORTS = {
    "parse": "pytest_kedi.lang",
    "parse_file": "pytest_kedi.lang",
    "load": "pytest_kedi.runtime",
    "Program": "pytest_kedi.runtime",
}

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import parse, parse_file
    from pytest_kedi.runtime import Program, load


__getattr__ = _lazy_exports(globals(), _RUNTIME_EXPORTS)
