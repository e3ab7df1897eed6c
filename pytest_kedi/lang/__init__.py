"""The Kedi front end: source text -> AST (`nodes`) + located diagnostics.

`parse` is imported on first use: building the parser's grammars and regular
expressions is most of the package's import time, and a pytest run whose ``.kedi``
files are all in the parse cache never needs them (`parse_file` imports it on a miss).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError
from pytest_kedi.lang.files import parse_file
from pytest_kedi.lang.pycheck import check_python

__all__ = ["Diagnostic", "KediParseError", "check_python", "parse", "parse_file"]

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang.parser import parse


def __getattr__(name: str) -> Any:
    if name == "parse":
        from pytest_kedi.lang import parser

        value = getattr(parser, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pytest_kedi.lang' has no attribute {name!r}")
