"""Logical-line heads parsed with ``grammar/header.lark``: procedure and type
headers (parameters, annotations, defaults), bracketed targets and metric heads.
Lark failures become Kedi-worded `KediSyntaxError`s here."""

from __future__ import annotations

import keyword
import re
import string
from functools import lru_cache
from typing import cast

from lark import Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.fastheads import fast_metric_head, fast_signature, fast_target, fast_type
from pytest_kedi.lang.grammars import header_parser, parse_head
from pytest_kedi.lang.shapes import HeadShape, RawParam, TypeShape
from pytest_kedi.lang.source import KediSyntaxError, Source
from pytest_kedi.lang.syntax import IDENT, is_identifier

__all__ = ["check_name", "check_type", "parse_metric_head", "parse_signature", "parse_target"]

_NAME_RULE = f"names must match {IDENT}"
_TERMINAL_WORDS = {
    "NAME": "a name",
    "CODE": "a backtick expression",
    "STRING": "a string",
    "NUMBER": "a number",
    "FENCE": "a fence",
    "$END": "the end of the header",
}
_KIND_WORDS = {
    "proc_header": "procedure header",
    "type_header": "custom type header",
    "target": "assignment target",
    "metric_head": "metric header",
}


@lru_cache(maxsize=4096)
def _type_ok(text: str) -> int:
    """-1 when ``text`` is a well-formed direct type, else the failing index."""
    if fast_type(text):
        return -1
    try:
        header_parser().parse(text, start="annot")
    except LarkError as exc:
        return int(getattr(exc, "pos_in_stream", None) or 0)
    return -1


def check_type(text: str, offset: int) -> None:
    """Raise when ``text`` (at source ``offset``) is not a direct type annotation."""
    bad = _type_ok(text)
    if bad >= 0:
        raise KediSyntaxError(
            offset + min(bad, max(len(text) - 1, 0)),
            f"malformed type annotation {text!r}: write a Python type such as "
            "list[str] or str | None, or a backtick expression",
        )


RESERVED_ARGS = "'args' is reserved for command-line arguments and cannot be assigned"


def check_name(name: str, offset: int, what: str, *, binds: bool = False) -> None:
    """Reject malformed identifiers and Python keywords (names are used from Python);
    with ``binds`` (the name is bound in a Kedi scope) also the runtime-owned ``args``."""
    if not name:
        raise KediSyntaxError(offset, f"missing {what}: expected a name here")
    if not is_identifier(name):
        raise KediSyntaxError(offset, f"invalid {what} {name!r}: {_NAME_RULE}")
    if keyword.iskeyword(name):
        raise KediSyntaxError(
            offset, f"invalid {what} {name!r}: it is a Python keyword and cannot be used as a name"
        )
    if binds and name == "args":
        raise KediSyntaxError(offset, RESERVED_ARGS)


def _word(terminal: str) -> str:
    if terminal in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[terminal]
    try:
        pattern = header_parser().get_terminal(terminal).pattern
    except (KeyError, LarkError):
        return terminal.lower()
    return repr(pattern.value) if pattern.type == "str" else terminal.lower()


_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "_")  # `syntax.IDENT_CHAR`
_NAME_RUN = re.compile(r"[^\s(),:\[\]=`]+")


def _glued_name(text: str, pos: int) -> tuple[int, str] | None:
    """A name position holding a stray character (``a-b``, ``café``): (start, whole word)."""
    if pos >= len(text) or text[pos] in " \t\r\n(),:[]=`":
        return None
    start = pos  # the name's characters before ``pos``, walked back (a regex search for
    while start > 0 and text[start - 1] in _NAME_CHARS:  # them retried every start: O(n²))
        start -= 1
    if start == pos:
        return None
    before = text[:start].rstrip()
    if before and not before.endswith(("@", "~", "(", ",", "[")):
        return None
    word = _NAME_RUN.match(text, start)
    assert word is not None
    return start, word.group()


def _unclosed_bracket(text: str, pos: int) -> int | None:
    """Where the '[' is that ``text[pos]``, a ')' or ':', meets still open (a type's
    subscript), if it does; quoted strings and backticks are skipped."""
    if pos >= len(text) or text[pos] not in "):":
        return None
    stack: list[int] = []
    i = 0
    while i < pos:
        ch = text[i]
        if ch in "\"'`":
            end = text.find(ch, i + 1)
            i = pos if end < 0 else end + 1
            continue
        if ch in "([":
            stack.append(i)
        elif ch in ")]" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack and text[stack[-1]] == "[" else None


def _fail(text: str, base: int, start: str, exc: UnexpectedInput) -> KediSyntaxError:
    kind = _KIND_WORDS.get(start, "header")
    expected: set[str]
    if isinstance(exc, UnexpectedEOF):
        pos, found, expected = len(text), "$END", {str(e) for e in exc.expected}
    elif isinstance(exc, UnexpectedCharacters):
        pos, found, expected = exc.pos_in_stream or 0, "", {str(e) for e in exc.allowed or ()}
    else:
        tok = getattr(exc, "token", None)
        found = str(getattr(tok, "type", "$END"))
        pos = len(text) if found == "$END" else (getattr(tok, "start_pos", 0) or 0)
        expected = {str(e) for e in getattr(exc, "expected", ())}
    where = base + min(pos, max(len(text.rstrip()) - 1, 0))
    before = text[:pos].rstrip()
    if found == "FENCE" or text.startswith("```", pos):
        return KediSyntaxError(
            where, "a parameter default must be a one-line backtick expression, not a fence"
        )
    if before.endswith("="):
        return KediSyntaxError(
            where, "a default value must be a one-line backtick expression such as `0`"
        )
    if found == "$END" and "COLON" in expected and start == "proc_header":
        return KediSyntaxError(base + len(text.rstrip()), "procedure header must end with ':'")
    if found == "$END" and "RPAR" in expected:
        return KediSyntaxError(where, f"unbalanced '(' in {kind}: missing ')'")
    if found == "$END" and "RSQB" in expected:
        return KediSyntaxError(where, f"unbalanced '[' in {kind}: missing ']'")
    glued = _glued_name(text, pos)
    if glued is not None:
        start_at, bad = glued
        return KediSyntaxError(
            base + start_at,
            f"invalid name {bad!r} in {kind}: {_NAME_RULE}",
        )
    if "NAME" in expected and (before.endswith(("@", "~", "(", ",", "[")) or not before):
        word = re.match(r"[^\s(),:\[\]=]*", text[pos:])
        bad = word.group() if word else text[pos:]
        if not bad:
            opened = _unclosed_bracket(text, pos)
            if opened is not None:  # `Literal["x",)`: the ')' closes no '['
                return KediSyntaxError(base + opened, f"unbalanced '[' in {kind}: missing ']'")
            return KediSyntaxError(base + pos, f"missing name in {kind}: expected a name here")
        return KediSyntaxError(where, f"invalid name {bad!r} in {kind}: {_NAME_RULE}")
    if expected <= {"$END", "<END-OF-FILE>"}:
        return KediSyntaxError(where, f"unexpected text after the {kind}")
    shown = text[pos] if pos < len(text) else "end of line"
    words = sorted({_word(t) for t in expected})
    return KediSyntaxError(
        where, f"unexpected {shown!r} in {kind}; expected {' or '.join(words) or 'nothing'}"
    )


def _parse(text: str, base: int, start: str) -> object:
    try:
        return parse_head(text, start)
    except UnexpectedInput as exc:
        raise _fail(text, base, start, exc) from None


def lark_signature(text: str, start: str) -> tuple[str, int, list[RawParam], TypeShape | None]:
    """The grammar's reading of a signature (no semantic checks)."""
    head = cast(HeadShape, _parse(text, 0, start))
    params: list[RawParam] = []
    for p in head.params:
        default: tuple[str, int, int] | None = None
        if p.default is not None:
            tok = p.default
            if tok.type == "FENCE":
                raise KediSyntaxError(
                    tok.start_pos or 0,
                    "a parameter default must be a one-line backtick expression, not a fence",
                )
            default = (tok.value[1:-1], tok.start_pos or 0, tok.end_pos or 0)
        params.append((p.name.value, p.start, p.start, p.end, p.annot, default))
    return head.name.value, head.name.start_pos or 0, params, head.ret


@lru_cache(maxsize=4096)
def _signature_shape(
    text: str, start: str, what: str
) -> tuple[str, int, tuple[RawParam, ...], TypeShape | None]:
    shape = fast_signature(text, start)
    name, name_at, params, ret = shape if shape is not None else lark_signature(text, start)
    proc = start == "proc_header"
    check_name(name, name_at, "procedure name" if proc else "type name", binds=True)
    seen: set[str] = set()
    default_seen = False
    for p_name, at, _, _, annot, default in params:
        check_name(p_name, at, what, binds=proc)
        if p_name in seen:
            raise KediSyntaxError(at, f"duplicate {what} {p_name!r}")
        seen.add(p_name)
        if default is not None:
            default_seen = True
            if annot is None and start == "type_header":
                raise KediSyntaxError(
                    at, f"untyped field {p_name!r} cannot have a default: add a type"
                )
        elif default_seen:
            raise KediSyntaxError(at, f"required {what} {p_name!r} follows a {what} with a default")
    return name, name_at, tuple(params), ret


def lark_target(text: str) -> tuple[str, int, TypeShape | None]:
    """The grammar's reading of a bracketed target."""
    name, shape = cast("tuple[Token, TypeShape | None]", _parse(text, 0, "target"))
    return name.value, name.start_pos or 0, shape


@lru_cache(maxsize=4096)
def _target_shape(text: str) -> tuple[str, TypeShape | None]:
    fast = fast_target(text)
    name, at, shape = fast if fast is not None else lark_target(text)
    check_name(name, at, "target name", binds=True)
    return name, shape


def _type_ref(src: Source, base: int, shape: TypeShape) -> n.TypeRef:
    source, start, end, backtick = shape
    start += base
    end += base
    return n.TypeRef(src.span(start, end), source if backtick else src.text[start:end], backtick)


def parse_signature(
    src: Source, text: str, base: int, start: str, what: str
) -> tuple[str, int, list[n.Param], n.TypeRef | None]:
    """Parse ``@name(params) -> T:`` or ``~Name(fields)``.

    Returns (name, name offset, params, return type); checks names, duplicates,
    required-after-default and (for type fields) untyped defaults.
    """
    try:
        name, name_at, shapes, ret = _signature_shape(text, start, what)
    except KediSyntaxError as exc:  # cached shapes use offsets relative to ``text``
        raise KediSyntaxError(base + exc.offset, exc.message) from None
    params: list[n.Param] = []
    for p_name, _, p_start, p_end, annot, default in shapes:
        code = None
        if default is not None:
            d_src, d_start, d_end = default
            line, col = src.position(base + d_start + 1)
            code = n.PyCode(src.span(base + d_start, base + d_end), d_src, "expr", line, col)
        ref = _type_ref(src, base, annot) if annot is not None else None
        params.append(n.Param(src.span(base + p_start, base + p_end), p_name, ref, code))
    ret_ref = _type_ref(src, base, ret) if ret is not None else None
    return name, base + name_at, params, ret_ref


def parse_target(src: Source, text: str, base: int) -> tuple[str, n.TypeRef | None]:
    """Parse ``[name]`` / ``[name: T]`` / ``[name: `T`]`` starting at ``base``."""
    try:
        name, shape = _target_shape(text)
    except KediSyntaxError as exc:
        raise KediSyntaxError(base + exc.offset, exc.message) from None
    return name, (_type_ref(src, base, shape) if shape is not None else None)


def lark_metric_head(text: str) -> tuple[tuple[str, int], tuple[str, int] | None]:
    """The grammar's reading of a metric head: the metric's name and the dataset's, each
    with its offset."""
    names = cast("tuple[Token, ...]", _parse(text, 0, "metric_head"))
    found = [(tok.value, tok.start_pos or 0) for tok in names]
    return found[0], (found[1] if len(found) > 1 else None)


def parse_metric_head(text: str, base: int) -> tuple[str, str | None]:
    try:
        shape = fast_metric_head(text) or lark_metric_head(text)
    except KediSyntaxError as exc:
        raise KediSyntaxError(base + exc.offset, exc.message) from None
    metric, data = shape
    for name, at in (metric, data) if data is not None else (metric,):
        check_name(name, base + at, "metric or dataset name")
    return metric[0], (data[0] if data is not None else None)
