"""The Kedi front end: source text -> AST (`nodes`) + located diagnostics."""

from __future__ import annotations

from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError
from pytest_kedi.lang.parser import parse, parse_file

__all__ = ["Diagnostic", "KediParseError", "parse", "parse_file"]
