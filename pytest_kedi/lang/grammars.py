"""The lark LALR parsers, built once per process from ``grammar/*.lark``."""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path
from types import MappingProxyType

from lark import Lark

from pytest_kedi.lang.shapes import HeadShapes
from pytest_kedi.lang.syntax import IDENT

__all__ = ["HEADER_STARTS", "header_parser", "terminals", "text_parser"]

_GRAMMAR_DIR = Path(__file__).with_name("grammar")
HEADER_STARTS = ["proc_header", "type_header", "target", "metric_head", "annot"]


def _grammar(name: str) -> str:
    """A grammar file with the identifier terminal ``NAME`` appended (one rule, in `syntax`)."""
    text = (_GRAMMAR_DIR / name).read_text(encoding="utf-8")
    return f"{text}\nNAME: /{IDENT}/\n"


# A terminal definition on one line: ``NAME: /regex/`` or ``NAME.2: "literal"``.
_TERMINAL = re.compile(r'^(_?[A-Z][A-Z0-9_]*)(?:\.\d+)?:[ \t]*(?:/(.*)/|"(.*)")[ \t]*$', re.M)


@cache
def terminals(name: str) -> MappingProxyType[str, str]:
    """The terminals of grammar file ``name`` as Python regexes (literals escaped), read from
    the same text lark builds its parser from, so regex fast paths stay the grammar's own."""
    found = {
        m.group(1): m.group(2) if m.group(2) is not None else re.escape(m.group(3))
        for m in _TERMINAL.finditer(_grammar(name))
    }
    return MappingProxyType(found)


@cache
def header_parser() -> Lark:
    """Parses a head straight into its shape (`HeadShapes` runs during the parse)."""
    return Lark(
        _grammar("header.lark"),
        parser="lalr",
        start=HEADER_STARTS,
        propagate_positions=True,
        maybe_placeholders=False,
        transformer=HeadShapes(),
    )


@cache
def text_parser() -> Lark:
    return Lark(
        _grammar("text.lark"),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
    )


@lru_cache(maxsize=4096)
def parse_head(text: str, start: str) -> object:
    """The shape of a head (see `shapes.HeadShapes`) for the grammar rule ``start``."""
    return header_parser().parse(text, start=start)
