"""The text sub-grammar (docs/language.md#text-and-escapes, #substitutions): literals, escapes,
substitutions,
calls, inline Python and output fields. Grammar: ``grammar/text.lark``.

Text takes a regex fast path assembled from the grammar's terminals (literals, escapes,
inline code, substitutions, calls with plain arguments, output fields); anything else (nested
calls, parentheses inside arguments, errors) goes through the LALR parser (trees cached per
string) and a `Transformer`. Both paths build the same nodes (the tests check they agree).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from keyword import iskeyword
from typing import Any, NamedTuple, TypeAlias

from lark import Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, VisitError
from lark.tree import Meta

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.grammars import terminals, text_parser
from pytest_kedi.lang.heads import check_name, check_type
from pytest_kedi.lang.source import KediSyntaxError, Source
from pytest_kedi.lang.texterrors import MISSING_ARGUMENT, explain

__all__ = ["ESCAPES", "parse_text", "parse_text_with_grammar"]

ESCAPES = {c: c for c in "<>[]()=@#~,`\\"}
ESCAPES.update({"t": "\t", "n": "\n", "s": " "})

# The fast path is built from the grammar's own terminals (`grammars.terminals`) following the
# ``start`` rule, with calls limited to plain arguments; what it does not match goes to lark.
_T = terminals("text.lark")
# lit | punct: possessive, since the alternatives never share a character (no backtracking)
_LIT = rf"(?:{_T['LIT']}|{_T['LPAR']}|{_T['RPAR']}|{_T['COMMA']})++"
_WS = rf"(?:{_T['_WS']})?"
_PLAIN = re.compile(rf"(?:{_LIT})?")
# Call arguments without nested calls or parentheses (_apart without paren; `[` is literal).
_APART = (
    rf"(?P<lit>{_T['LIT']})|(?P<esc>{_T['ESC']})|(?P<code>{_T['CODE']})"
    rf"|<(?P<name>{_T['NAME']})>|<(?P<ecode>{_T['CODE']})>|(?P<bracket>{_T['LSQB']})"
)
_ARG_PIECE = re.compile(rf"{_APART}|(?P<comma>{_T['COMMA']})")
_ARGS = re.sub(r"\(\?P<\w+>", "(?:", rf"(?:(?:{_APART})++(?:{_T['COMMA']}(?:{_APART})++)*)?")
_PIECE = re.compile(
    rf"(?P<lit>{_LIT})"  # lit / punct
    rf"|(?P<esc>{_T['ESC']})"  # esc
    rf"|(?P<code>{_T['CODE']})"  # inline
    rf"|<(?P<name>{_T['NAME']})>"  # name_subst
    rf"|<(?P<ecode>{_T['CODE']})>"  # expr_subst
    rf"|<(?P<call>{_T['NAME']}){_T['LPAR']}(?P<args>{_ARGS}){_T['RPAR']}>"  # call_subst
    rf"|{_T['LSQB']}{_WS}(?P<field>{_T['NAME']}){_WS}"  # plain_field, then
    rf"(?::{_WS}(?:(?P<ctype>{_T['CODE']}){_WS}"  # code_field
    rf"|(?P<type>(?>{_T['FTYPE']}))))?\]"  # typed_field (FTYPE matched whole, as lexed)
)
_ESCAPE_LIST = "< > [ ] ( ) , = @ # ~ ` \\ and \\t \\n \\s"
#: In text an unescaped `[` opens an output field (docs/language.md#text-and-escapes), which a
#: call argument cannot hold: its value exists only once the model answers.
_BRACKET_IN_ARGUMENT = (
    "an unescaped '[' in a call argument opens an output field, which a call argument cannot "
    "hold; write '\\[' for a literal bracket"
)


# A literal chunk (start, end, value) relative to the text; a list is a parenthesised run.
_Chunk: TypeAlias = tuple[int, int, str]
_Piece: TypeAlias = "_Chunk | Token | n.TextPart | list[_Piece]"


def _unescape(raw: str) -> str:
    """Resolve ``~~`` in a raw literal chunk (escapes arrive as separate tokens)."""
    return raw.replace("~~", "~") if "~~" in raw else raw


class _Builder:
    """Turns text pieces into nodes with absolute spans."""

    __slots__ = ("base", "field_message", "fields", "src")

    def __init__(self, src: Source, base: int, fields: bool, field_message: str) -> None:
        self.src = src
        self.base = base
        self.fields = fields
        self.field_message = field_message

    def literal(self, chunks: list[tuple[int, int, str]]) -> n.Literal:
        start = chunks[0][0]
        end = chunks[-1][1]
        value = "".join(c[2] for c in chunks)
        return n.Literal(self.src.span(self.base + start, self.base + end), value)

    def code(self, tok: Token, kind: str = "expr") -> n.PyCode:
        start = self.base + (tok.start_pos or 0)
        end = self.base + (tok.end_pos or 0)
        line, col = self.src.position(start + 1)
        return n.PyCode(self.src.span(start, end), tok.value[1:-1], kind, line, col)  # type: ignore[arg-type]

    def field(self, start: int, end: int, name: str, type_ref: n.TypeRef | None) -> n.OutputField:
        if not self.fields:
            raise KediSyntaxError(self.base + start, self.field_message)
        if name == "args" or iskeyword(name):
            at = self.src.text.find(name, self.base + start)
            check_name(name, at, "output field name", binds=True)
        return n.OutputField(self.src.span(self.base + start, self.base + end), name, type_ref)

    def type_ref(self, start: int, text: str) -> n.TypeRef:
        stripped = text.strip()
        lead = len(text) - len(text.lstrip())
        begin = self.base + start + lead
        check_type(stripped, begin)
        return n.TypeRef(self.src.span(begin, begin + len(stripped)), stripped, False)

    def merge(self, pieces: Iterable[_Piece], trim: bool) -> list[n.TextPart]:
        """Join adjacent literal chunks into `Literal` nodes (parenthesised groups flattened)."""
        out: list[n.TextPart] = []
        chunks: list[_Chunk] = []
        for piece in pieces:
            if isinstance(piece, tuple):
                chunks.append(piece)
            elif isinstance(piece, Token):  # '(' ')' ',' '[' used literally
                chunks.append((piece.start_pos or 0, piece.end_pos or 0, piece.value))
            elif isinstance(piece, list):  # a parenthesised group inside call arguments
                for inner in self.merge(piece, False):
                    if isinstance(inner, n.Literal):
                        s = inner.span.start_offset - self.base
                        chunks.append((s, inner.span.end_offset - self.base, inner.value))
                    else:
                        if chunks:
                            out.append(self.literal(chunks))
                            chunks = []
                        out.append(inner)
            else:
                if chunks:
                    out.append(self.literal(chunks))
                    chunks = []
                out.append(piece)
        if chunks:
            out.append(self.literal(chunks))
        if trim and out:
            out = self.trim(out)
        return out

    def trim(self, parts: list[n.TextPart]) -> list[n.TextPart]:
        """Trim raw whitespace at both ends of an argument."""
        first = parts[0]
        if isinstance(first, n.Literal):
            text = self.src.text[first.span.start_offset : first.span.end_offset]
            lead = len(text) - len(text.lstrip())
            if lead:
                value = first.value[lead:] if first.value.startswith(text[:lead]) else first.value
                if not text.strip():
                    parts = parts[1:]
                else:
                    start = first.span.start_offset + lead
                    parts[0] = n.Literal(self.src.span(start, first.span.end_offset), value)
        if parts and isinstance(parts[-1], n.Literal):
            last = parts[-1]
            text = self.src.text[last.span.start_offset : last.span.end_offset]
            tail = len(text) - len(text.rstrip())
            if tail:
                if not text.strip():
                    parts = parts[:-1]
                else:
                    value = last.value[: len(last.value) - tail]
                    end = last.span.end_offset - tail
                    parts[-1] = n.Literal(self.src.span(last.span.start_offset, end), value)
        return parts

    def escape(self, tok: Token) -> str:
        ch = tok.value[1]
        try:
            return ESCAPES[ch]
        except KeyError:
            raise KediSyntaxError(
                self.base + (tok.start_pos or 0),
                f"unsupported escape '\\{ch}': in text, '\\' escapes only {_ESCAPE_LIST}"
                " (write '\\\\' for a literal backslash)",
            ) from None


class _Arg(NamedTuple):
    pieces: list[Any]
    start: int  # offset of the argument in the text


class _TextNodes(Transformer[Token, list[n.TextPart]]):
    """Text parse trees -> nodes with absolute spans (through the `_Builder`)."""

    def __init__(self, builder: _Builder) -> None:
        super().__init__(visit_tokens=False)
        self.b = builder

    def start(self, children: list[Any]) -> list[n.TextPart]:
        return self.b.merge(children, False)

    @v_args(inline=True)
    def lit(self, tok: Token) -> _Chunk:
        return tok.start_pos or 0, tok.end_pos or 0, _unescape(tok.value)

    punct = lit

    @v_args(inline=True)
    def bracket(self, tok: Token) -> _Chunk:
        raise KediSyntaxError(self.b.base + (tok.start_pos or 0), _BRACKET_IN_ARGUMENT)

    @v_args(inline=True)
    def esc(self, tok: Token) -> _Chunk:
        return tok.start_pos or 0, tok.end_pos or 0, self.b.escape(tok)

    @v_args(inline=True)
    def inline(self, tok: Token) -> n.InlinePython:
        code = self.b.code(tok)
        return n.InlinePython(code.span, code)

    def paren(self, children: list[Any]) -> list[Any]:
        return children

    @v_args(meta=True)
    def arg(self, meta: Meta, children: list[Any]) -> _Arg:
        return _Arg(children, meta.start_pos)

    def _span(self, meta: Meta) -> n.Span:
        return self.b.src.span(self.b.base + meta.start_pos, self.b.base + meta.end_pos)

    @v_args(meta=True, inline=True)
    def name_subst(self, meta: Meta, name: Token) -> n.Subst:
        return n.Subst(self._span(meta), name.value)

    @v_args(meta=True, inline=True)
    def expr_subst(self, meta: Meta, code: Token) -> n.ExprSubst:
        return n.ExprSubst(self._span(meta), self.b.code(code))

    @v_args(meta=True, inline=True)
    def call_subst(self, meta: Meta, name: Token, *rest: Token | _Arg) -> n.CallSubst:
        b = self.b
        args: list[n.Arg] = []
        ends: list[int] = []  # each argument's following ',' or ')'
        for arg in rest:
            if isinstance(arg, Token):  # '(' ',' ')'
                if arg.type != "LPAR" and len(ends) < len(args):
                    ends.append(arg.start_pos or 0)
                continue
            parts = b.merge(arg.pieces, True)
            if parts:
                a_span = b.src.span(parts[0].span.start_offset, parts[-1].span.end_offset)
            else:
                a_span = b.src.span(b.base + arg.start, b.base + arg.start)
            args.append(n.Arg(a_span, tuple(parts)))
        return n.CallSubst(self._span(meta), name.value, _call_args(b, args, ends))

    @v_args(meta=True, inline=True)
    def plain_field(self, meta: Meta, _lsqb: Token, name: Token) -> n.OutputField:
        return self.b.field(meta.start_pos, meta.end_pos, name.value, None)

    @v_args(meta=True, inline=True)
    def code_field(self, meta: Meta, _lsqb: Token, name: Token, code: Token) -> n.OutputField:
        b = self.b
        span = b.src.span(b.base + (code.start_pos or 0), b.base + (code.end_pos or 0))
        ref = n.TypeRef(span, code.value[1:-1], True)
        return b.field(meta.start_pos, meta.end_pos, name.value, ref)

    @v_args(meta=True, inline=True)
    def typed_field(self, meta: Meta, _lsqb: Token, name: Token, ftype: Token) -> n.OutputField:
        ref = self.b.type_ref(ftype.start_pos or 0, ftype.value)
        return self.b.field(meta.start_pos, meta.end_pos, name.value, ref)


def _nodes(builder: _Builder, tree: Tree) -> list[n.TextPart]:
    try:
        return _TextNodes(builder).transform(tree)
    except VisitError as exc:  # a Kedi error raised while building: shown as it is
        raise exc.orig_exc from None


@lru_cache(maxsize=8192)
def _lark_tree(text: str) -> Tree:
    return text_parser().parse(text)


def parse_text(
    src: Source,
    start: int,
    end: int,
    *,
    fields: bool = False,
    field_message: str = "output fields ([name]) are only allowed in '>>' template rows",
) -> n.Text:
    """Parse ``src.text[start:end]`` (one physical line, comments stripped) as Text.

    Surrounding whitespace is trimmed first; the Text span covers the trimmed text.
    """
    raw = src.text[start:end]
    stripped = raw.strip()
    if stripped != raw:
        start += len(raw) - len(raw.lstrip())
        end = start + len(stripped)
        raw = stripped
    if not raw:
        return n.Text(src.span(start, start), ())
    builder = _Builder(src, start, fields, field_message)
    if _PLAIN.fullmatch(raw) is not None:
        lit = n.Literal(src.span(start, end), _unescape(raw))
        return n.Text(lit.span, (lit,))
    fast = _fast_parts(builder, raw)
    if fast is not None:
        return n.Text(src.span(start, end), tuple(fast))
    try:
        tree = _lark_tree(raw)
    except UnexpectedInput as exc:
        token = getattr(exc, "token", None)
        at_end = isinstance(exc, UnexpectedEOF) or (
            not isinstance(exc, UnexpectedCharacters) and token is not None and token.type == "$END"
        )
        pos = len(raw) if isinstance(exc, UnexpectedEOF) else exc.pos_in_stream or 0
        if at_end:
            pos = len(raw)
        where, message = explain(raw, pos, at_end)
        raise KediSyntaxError(start + min(where, max(len(raw) - 1, 0)), message) from None
    return n.Text(src.span(start, end), tuple(_nodes(builder, tree)))


def _fast_parts(builder: _Builder, raw: str) -> list[n.TextPart] | None:
    """Regex tokenisation of text (calls only with plain arguments); ``None`` defers to the
    grammar."""
    pos = 0
    size = len(raw)
    out: list[n.TextPart] = []
    chunks: list[tuple[int, int, str]] = []
    match = _PIECE.match
    src = builder.src
    base = builder.base
    while pos < size:
        m = match(raw, pos)
        if m is None:
            return None
        end = m.end()
        kind = m.lastgroup
        if kind == "lit":
            chunks.append((pos, end, _unescape(m.group())))
            pos = end
            continue
        if kind == "esc":
            tok = Token("ESC", m.group(), start_pos=pos, end_pos=end)
            chunks.append((pos, end, builder.escape(tok)))
            pos = end
            continue
        if chunks:
            out.append(builder.literal(chunks))
            chunks = []
        if kind == "code":
            code = builder.code(Token("CODE", m.group(), start_pos=pos, end_pos=end))
            out.append(n.InlinePython(code.span, code))
        elif kind == "name":
            out.append(n.Subst(src.span(base + pos, base + end), m.group("name")))
        elif kind == "ecode":
            start = m.start("ecode")
            tok = Token("CODE", m.group("ecode"), start_pos=start, end_pos=m.end("ecode"))
            out.append(n.ExprSubst(src.span(base + pos, base + end), builder.code(tok)))
        elif kind == "args":
            args = _fast_args(builder, raw, m.start("args"), m.end("args"))
            out.append(n.CallSubst(src.span(base + pos, base + end), m.group("call"), args))
        else:
            ref = None
            if kind == "type":
                ref = builder.type_ref(m.start("type"), m.group("type"))
            elif kind == "ctype":
                c_start, c_end = base + m.start("ctype"), base + m.end("ctype")
                ref = n.TypeRef(src.span(c_start, c_end), m.group("ctype")[1:-1], True)
            out.append(builder.field(pos, end, m.group("field"), ref))
        pos = end
    if chunks:
        out.append(builder.literal(chunks))
    return out


def _call_args(builder: _Builder, args: list[n.Arg], ends: list[int]) -> tuple[n.Arg, ...]:
    """Arguments are trimmed (docs/language.md#substitutions): a blank argument list is no
    argument (`<f( )>` is `<f()>`); a blank argument among several is a missing one, shown
    at the ',' or ')' after it (``ends``, offsets in the text)."""
    if len(args) == 1 and not args[0].parts:
        return ()
    for arg, at in zip(args, ends, strict=True):
        if not arg.parts:
            raise KediSyntaxError(builder.base + at, MISSING_ARGUMENT)
    return tuple(args)


def _fast_args(builder: _Builder, raw: str, pos: int, end: int) -> tuple[n.Arg, ...]:
    """The arguments of a call matched by ``_PIECE`` (``raw[pos:end]``, between the parentheses)."""
    if pos == end:
        return ()
    src = builder.src
    base = builder.base
    args: list[n.Arg] = []
    ends: list[int] = []
    pieces: list[_Piece] = []
    arg_start = pos
    match = _ARG_PIECE.match
    while True:
        m = match(raw, pos, end) if pos < end else None
        if m is None or m.lastgroup == "comma":
            parts = builder.merge(pieces, True)
            if parts:
                a_span = src.span(parts[0].span.start_offset, parts[-1].span.end_offset)
            else:
                a_span = src.span(base + arg_start, base + arg_start)
            args.append(n.Arg(a_span, tuple(parts)))
            ends.append(end if m is None else pos)
            if m is None:
                return _call_args(builder, args, ends)
            pos = arg_start = m.end()
            pieces = []
            continue
        kind = m.lastgroup
        stop = m.end()
        if kind == "lit":
            pieces.append((pos, stop, _unescape(m.group())))
        elif kind == "bracket":
            raise KediSyntaxError(builder.base + pos, _BRACKET_IN_ARGUMENT)
        elif kind == "esc":
            tok = Token("ESC", m.group(), start_pos=pos, end_pos=stop)
            pieces.append((pos, stop, builder.escape(tok)))
        elif kind == "code":
            code = builder.code(Token("CODE", m.group(), start_pos=pos, end_pos=stop))
            pieces.append(n.InlinePython(code.span, code))
        elif kind == "name":
            pieces.append(n.Subst(src.span(base + pos, base + stop), m.group("name")))
        else:  # ecode
            start = m.start("ecode")
            tok = Token("CODE", m.group("ecode"), start_pos=start, end_pos=m.end("ecode"))
            pieces.append(n.ExprSubst(src.span(base + pos, base + stop), builder.code(tok)))
        pos = stop


def parse_text_with_grammar(src: Source, start: int, end: int, fields: bool) -> n.Text:
    """The grammar-only path (for tests that compare it with the fast path)."""
    raw = src.text[start:end]
    builder = _Builder(src, start, fields, "output fields are not allowed here")
    tree = _lark_tree(raw)
    return n.Text(src.span(start, end), tuple(_nodes(builder, tree)))
