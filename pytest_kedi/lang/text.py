"""The text sub-grammar (docs/language.md#text-and-escapes, #substitutions): literals, escapes,
substitutions,
calls, inline Python and output fields. Grammar: ``grammar/text.lark``.

Plain text and simple ``<name>``/``[name]``/``[name: T]`` rows take a regex fast
path; everything else goes through the LALR parser (trees cached per string).
"""

from __future__ import annotations

import re
from functools import lru_cache
from keyword import iskeyword

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.grammars import check_type, text_parser
from pytest_kedi.lang.heads import check_name
from pytest_kedi.lang.source import KediSyntaxError, Source
from pytest_kedi.lang.syntax import IDENT

__all__ = ["ESCAPES", "parse_text", "parse_text_with_grammar"]

ESCAPES = {c: c for c in "<>[]()=@#~,`\\"}
ESCAPES.update({"t": "\t", "n": "\n", "s": " "})

_PLAIN = re.compile(r"[^<\[`\\]*")
# The fast path covers everything but calls, parentheses-heavy fields and errors.
_PIECE = re.compile(
    r"(?P<lit>[^<\[`\\]+)"
    r"|(?P<esc>\\[^\r\n])"
    r"|(?P<code>`[^`\r\n]*`)"
    rf"|<(?P<name>{IDENT})>"
    r"|<(?P<ecode>`[^`\r\n]*`)>"
    rf"|\[[ \t]*(?P<field>{IDENT})[ \t]*"
    r"(?::[ \t]*(?:(?P<type>[A-Za-z_][A-Za-z0-9_. |]*(?:\[[A-Za-z0-9_. |,]*\])?)"
    r"|(?P<ctype>`[^`\r\n]*`))[ \t]*)?\]"
)
_ESCAPE_LIST = "< > [ ] ( ) , = @ # ~ ` \\ and \\t \\n \\s"


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

    # ------------------------------------------------------------------ lark trees

    def parts(self, children: list[Tree | Token], trim: bool) -> list[n.TextPart]:
        out: list[n.TextPart] = []
        chunks: list[tuple[int, int, str]] = []
        for child in children:
            if isinstance(child, Token):  # '(' ')' ',' '[' used literally
                chunks.append((child.start_pos or 0, child.end_pos or 0, child.value))
                continue
            data = child.data
            if data in ("lit", "punct", "bracket"):
                tok = child.children[0]
                assert isinstance(tok, Token)
                chunks.append((tok.start_pos or 0, tok.end_pos or 0, _unescape(tok.value)))
                continue
            if data == "esc":
                tok = child.children[0]
                assert isinstance(tok, Token)
                chunks.append((tok.start_pos or 0, tok.end_pos or 0, self.escape(tok)))
                continue
            if data == "paren":
                for part in self.parts(child.children, False):
                    if isinstance(part, n.Literal):
                        s = part.span.start_offset - self.base
                        chunks.append((s, part.span.end_offset - self.base, part.value))
                    else:
                        if chunks:
                            out.append(self.literal(chunks))
                            chunks = []
                        out.append(part)
                continue
            if chunks:
                out.append(self.literal(chunks))
                chunks = []
            out.append(self.node(child))
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

    def node(self, tree: Tree) -> n.TextPart:
        data = tree.data
        meta = tree.meta
        kids = tree.children
        start = self.base + meta.start_pos
        end = self.base + meta.end_pos
        if data == "inline":
            tok = kids[0]
            assert isinstance(tok, Token)
            code = self.code(tok)
            return n.InlinePython(code.span, code)
        if data == "name_subst":
            return n.Subst(self.src.span(start, end), str(kids[0]))
        if data == "expr_subst":
            tok = kids[0]
            assert isinstance(tok, Token)
            return n.ExprSubst(self.src.span(start, end), self.code(tok))
        if data == "call_subst":
            args = []
            for arg in kids[1:]:
                if not isinstance(arg, Tree):
                    continue
                parts = self.parts(arg.children, True)
                if parts:
                    a_span = self.src.span(parts[0].span.start_offset, parts[-1].span.end_offset)
                else:
                    a_span = self.src.span(
                        self.base + arg.meta.start_pos, self.base + arg.meta.start_pos
                    )
                args.append(n.Arg(a_span, tuple(parts)))
            return n.CallSubst(self.src.span(start, end), str(kids[0]), tuple(args))
        name = str(kids[1])
        if data == "plain_field":
            return self.field(meta.start_pos, meta.end_pos, name, None)
        tok = kids[2]
        assert isinstance(tok, Token)
        if data == "code_field":
            ref = n.TypeRef(
                self.src.span(self.base + (tok.start_pos or 0), self.base + (tok.end_pos or 0)),
                tok.value[1:-1],
                True,
            )
        else:
            ref = self.type_ref(tok.start_pos or 0, tok.value)
        return self.field(meta.start_pos, meta.end_pos, name, ref)


@lru_cache(maxsize=8192)
def _lark_tree(text: str) -> Tree:
    return text_parser().parse(text)


def _explain(text: str, pos: int, at_end: bool) -> tuple[int, str]:
    """Turn a text-grammar failure at ``pos`` into (offset in text, Kedi message)."""
    stack: list[tuple[str, int]] = []
    i = 0
    in_code = -1
    while i < min(pos, len(text)):
        ch = text[i]
        if in_code >= 0:
            if ch == "`":
                in_code = -1
        elif ch == "\\":
            i += 1
        elif ch == "`":
            in_code = i
        elif ch in "<[" or (ch == "(" and stack and stack[-1][0] in "<("):
            stack.append((ch, i))
        elif stack and (ch, stack[-1][0]) in ((">", "<"), ("]", "["), (")", "(")):
            stack.pop()
        i += 1
    if in_code >= 0 or (pos < len(text) and text[pos] == "`"):
        where = in_code if in_code >= 0 else pos
        return where, "unbalanced backtick: inline Python must be closed with '`' on the same line"
    if pos < len(text) and text[pos] == "\\" and pos == len(text) - 1:
        return pos, (
            "a trailing '\\' continues only rendered '=' returns; "
            "write '\\\\' for a literal backslash"
        )
    if stack:
        kind, where = stack[-1]
        if kind == "(" and text[pos : pos + 1] in (",", ")") and text[:pos].rstrip()[-1:] in "(,":
            return pos, "missing argument in a call: each ',' separates two arguments"
        if kind == "(":
            return where, "unbalanced '(' in a call: the argument list is never closed with ')'"
        if kind == "<":
            if at_end:
                return where, "unbalanced '<': the substitution is never closed with '>'"
            return where, (
                "a substitution must be <name>, <proc(args)> or <`expr`>; "
                "write `<a.b>`-style Python as <`a.b`>, or '\\<' for a literal '<'"
            )
        if at_end:
            return where, "unbalanced '[': the output field is never closed with ']'"
        return where, (
            "an output field must be [name], [name: Type] or [name: `Type`]; "
            "write '\\[' for a literal '['"
        )
    ch = text[pos] if pos < len(text) else "end of line"
    return pos, f"unexpected {ch!r} in text"


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
        where, message = _explain(raw, pos, at_end)
        raise KediSyntaxError(start + min(where, max(len(raw) - 1, 0)), message) from None
    return n.Text(src.span(start, end), tuple(builder.parts(tree.children, False)))


def _fast_parts(builder: _Builder, raw: str) -> list[n.TextPart] | None:
    """Regex tokenisation of text without calls; ``None`` defers to the grammar."""
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


def parse_text_with_grammar(src: Source, start: int, end: int, fields: bool) -> n.Text:
    """The grammar-only path (for tests that compare it with the fast path)."""
    raw = src.text[start:end]
    builder = _Builder(src, start, fields, "output fields are not allowed here")
    tree = _lark_tree(raw)
    return n.Text(src.span(start, end), tuple(builder.parts(tree.children, False)))
