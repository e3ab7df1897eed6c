"""Regex fast paths for the commonest heads (simple targets and signatures).

The regexes are assembled from the terminals of ``grammar/header.lark`` (`grammars.terminals`:
names, backtick code, numbers, the whitespace the grammar ignores) following its rules for a
subset of shapes whose meaning is unambiguous: dotted names with up to two levels of type
arguments (names, numbers, strings, ``...``), ``|`` unions, one-line backtick annotations and
defaults. They return exactly what the grammar's reading (`heads.lark_signature`,
`heads.lark_target`) returns; anything else returns ``None`` and goes to lark. The tests check
both agree on every head of the corpus and on generated heads.
"""

from __future__ import annotations

import re

from pytest_kedi.lang.grammars import terminals
from pytest_kedi.lang.shapes import RawParam, TypeShape

__all__ = [
    "RawParam",
    "TypeShape",
    "fast_metric_head",
    "fast_signature",
    "fast_target",
    "fast_type",
]

_T = terminals("header.lark")
_NAME = _T["NAME"]
_CODE = _T["CODE"]
_WS = rf"(?:{_T['WS']})?"  # the grammar ignores whitespace between any two tokens
# dotted: NAME ("." NAME)*
_DOTTED = rf"{_NAME}(?:{_WS}\.{_WS}{_NAME})*"
_LITERAL = rf"(?:{_T['NUMBER']}|{_T['STRING']}|{_T['ELLIPSIS']})"


def _generic(atom: str) -> str:
    """generic: dotted ("[" _targs? "]")? whose type arguments are ``atom`` or `|` unions.

    Comma-separated unions of atoms are the atoms separated by `|` or `,`; written so that
    ``atom`` appears once (each atom is followed by a separator that is not followed by
    ``]``, or by ``]``), as every copy multiplies the size of the nested patterns, and
    compiling them is most of what importing the parser costs."""
    return rf"{_DOTTED}(?:{_WS}\[{_WS}(?:{atom}{_WS}(?:[|,]{_WS}(?!\])|(?=\])))*\])?"


# Two levels of type arguments (``dict[str, list[int]]``, ``Literal["a", "b"]``).
_SIMPLE = _generic(rf"(?:{_generic(rf'(?:{_DOTTED}|{_LITERAL})')}|{_LITERAL})")
# type: tatom ("|" tatom)*
_TYPE = rf"{_SIMPLE}(?:{_WS}\|{_WS}{_SIMPLE})*"
_ANNOT = rf"(?:(?P<type>{_TYPE})|(?P<code>{_CODE}))"
_PARAM = re.compile(
    rf"{_WS}(?P<name>{_NAME}){_WS}(?::{_WS}{_ANNOT}{_WS})?"
    rf"(?:={_WS}(?P<default>{_CODE}){_WS})?(?:,|\Z)"
)
_HEAD = re.compile(
    rf"(?P<sigil>[@~])(?P<name>{_NAME})\((?P<params>[^()]*)\){_WS}"
    rf"(?:->{_WS}(?P<ret>{_TYPE}|{_CODE}){_WS})?(?P<colon>:?)"
)
_DIRECT_TYPE = re.compile(rf"{_WS}{_TYPE}{_WS}")
_TARGET = re.compile(rf"\[{_WS}(?P<name>{_NAME}){_WS}(?::{_WS}{_ANNOT}{_WS})?\]")
# metric_head: NAME ("(" NAME? ")")?
_METRIC = re.compile(rf"{_WS}(?P<name>{_NAME}){_WS}(?:\({_WS}(?:(?P<data>{_NAME}){_WS})?\){_WS})?")


def _annot(m: re.Match[str], base: int) -> TypeShape | None:
    if m.group("type") is not None:
        return "", base + m.start("type"), base + m.end("type"), False
    if m.group("code") is not None:
        return m.group("code")[1:-1], base + m.start("code"), base + m.end("code"), True
    return None


def fast_signature(
    text: str, start: str
) -> tuple[str, int, list[RawParam], TypeShape | None] | None:
    m = _HEAD.fullmatch(text)
    if m is None or (m.group("sigil") == "@") != (start == "proc_header"):
        return None
    if (start == "proc_header") != bool(m.group("colon")) or (
        start == "type_header" and m.group("ret") is not None
    ):
        return None
    params: list[RawParam] = []
    inner = m.group("params")
    base = m.start("params")
    if inner.strip():
        pos = 0
        while pos < len(inner):
            p = _PARAM.match(inner, pos)
            if p is None or p.end() == pos:
                return None
            default = None
            if p.group("default") is not None:
                d = p.group("default")
                default = (d[1:-1], base + p.start("default"), base + p.end("default"))
            last = max(
                e for e in (p.end("name"), p.end("type"), p.end("code"), p.end("default")) if e >= 0
            )
            params.append(
                (
                    p.group("name"),
                    base + p.start("name"),
                    base + p.start("name"),
                    base + last,
                    _annot(p, base),
                    default,
                )
            )
            pos = p.end()
            if inner[pos - 1 : pos] == "," and not inner[pos:].strip():
                return None  # a trailing comma: leave it to the grammar
    ret: TypeShape | None = None
    if m.group("ret") is not None:
        r = m.group("ret")
        backtick = r.startswith("`")
        ret = (r[1:-1] if backtick else "", m.start("ret"), m.end("ret"), backtick)
    return m.group("name"), m.start("name"), params, ret


def fast_target(text: str) -> tuple[str, int, TypeShape | None] | None:
    m = _TARGET.fullmatch(text)
    if m is None:
        return None
    return m.group("name"), m.start("name"), _annot(m, 0)


def fast_type(text: str) -> bool:
    """True when ``text`` is a direct type of the simple shapes above (the grammar's ``annot``
    accepts it too); False means "ask the grammar"."""
    return _DIRECT_TYPE.fullmatch(text) is not None


def fast_metric_head(text: str) -> tuple[tuple[str, int], tuple[str, int] | None] | None:
    """The metric's name and the dataset's, each with its offset, as the grammar's
    ``metric_head`` reads them; None means "ask the grammar"."""
    m = _METRIC.fullmatch(text)
    if m is None:
        return None
    data = m.group("data")
    return (m.group("name"), m.start("name")), (None if data is None else (data, m.start("data")))
