"""`parse_file` and `parse_data`: file content -> module, through the in-process cache.

Kept apart from `pytest_kedi.lang.parser` so that reading an unchanged file again (a
cache hit) does not import the parser, whose grammars and regular expressions take most
of the front end's import time.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pytest_kedi.fileread import read_bytes
from pytest_kedi.lang.cache import MODULES
from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes as n

__all__ = ["parse_data", "parse_file", "path_text", "read_source", "source_text"]


def read_source(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a `.kedi` file (every reader of program files reads them here)."""
    return read_bytes(path)


def path_text(path: object, caller: str) -> str:
    """``path`` (a str or an ``os.PathLike`` of one) as a str; a clear `TypeError`, naming
    the public function ``caller``, for anything else (None, bytes, a number), which would
    otherwise fail deep inside or be read as a file named ``None``."""
    name = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(name, str):
        raise TypeError(
            f"{caller}() takes the path of a .kedi file as str or os.PathLike, "
            f"not {type(name).__name__}"
        )
    return name


def source_text(source: object, caller: str) -> str:
    """``source`` when it is program text (a str), else a clear `TypeError`."""
    if not isinstance(source, str):
        hint = " (decode it first: data.decode('utf-8'))" if isinstance(source, bytes) else ""
        raise TypeError(
            f"{caller}() takes the source text as str, not {type(source).__name__}{hint}"
        )
    return source


def parse_file(path: str | os.PathLike[str]) -> n.Module:
    """Parse a `.kedi` file; unchanged content (same path and hash) is not reparsed."""
    name = path_text(path, "parse_file")
    return parse_data(name, read_source(name))


def parse_data(name: str, data: bytes) -> n.Module:
    """`parse_file` of the content ``data`` read from the file ``name`` (same cache)."""
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KediParseError([_undecodable(name, data, exc)]) from None
    return MODULES.get_or_parse(name, source, _parse)


def _parse(source: str, path: str) -> n.Module:
    from pytest_kedi.lang.parser import parse

    return parse(source, path)


def _undecodable(path: str, data: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    """Locate the first byte that is not UTF-8 (Kedi source is UTF-8, docs/language.md#lines)."""
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    line_end = data.find(b"\n", exc.start)
    raw = data[line_start : line_end if line_end >= 0 else len(data)]
    text = raw.decode("utf-8", "replace").rstrip("\r")
    column = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
    line = data.count(b"\n", 0, exc.start) + 1
    message = f"the file is not valid UTF-8 text (byte 0x{data[exc.start]:02x})"
    return Diagnostic(path, line, column, message, text)
