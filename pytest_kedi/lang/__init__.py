"""The Kedi front end: source text -> AST (`nodes`) + located diagnostics.

`parse`, `parse_file` and `check_python` are imported on first use: building the
parser's grammars and regular expressions is most of the package's import time, and a
pytest run whose ``.kedi`` files are all in the parse cache never needs them
(`parse_file` imports the parser on a miss); the AST's node classes (`nodes`) are
imported by what builds or reads a tree, not by the plugin's start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_kedi.exports import lazy_exports as _lazy_exports
from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError

__all__ = ["Diagnostic", "KediParseError", "check_python", "parse", "parse_file"]

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang.files import parse_file
    from pytest_kedi.lang.parser import parse
    from pytest_kedi.lang.pycheck import check_python

#: The names imported on first use, and their modules.
_LAZY = {
    "check_python": "pytest_kedi.lang.pycheck",
    "parse": "pytest_kedi.lang.parser",
    "parse_file": "pytest_kedi.lang.files",
}


__getattr__ = _lazy_exports(globals(), _LAZY)
