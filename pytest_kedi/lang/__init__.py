"""The Kedi front end: source text -> AST (`nodes`) + located diagnostics."""

from __future__ import annotations

from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError
from pytest_kedi.lang.parser import parse, parse_file
from pytest_kedi.lang.pycheck import check_python

__all__ = ["Diagnostic", "KediParseError", "check_python", "parse", "parse_file"]
