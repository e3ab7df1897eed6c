"""AST construction for statement bodies (docs/language.md#statements, #newer-syntax): one `Builder`
per parse."""

from __future__ import annotations

import re
import unicodedata

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.checks import check_body
from pytest_kedi.lang.context import BuildContext, classify, split_target, stop_of
from pytest_kedi.lang.directives import DirectiveBuilder
from pytest_kedi.lang.heads import check_name, parse_signature, parse_target
from pytest_kedi.lang.scanner import Item
from pytest_kedi.lang.source import KediSyntaxError, Source
from pytest_kedi.lang.text import parse_text
from pytest_kedi.lang.typedecls import check_type_decl

__all__ = ["Builder"]

#: How a raw capture's annotation may spell `str`.
_STR_SOURCES = frozenset({"str", '"str"', "'str'"})

_SOLE_CODE = re.compile(r"`[^`]*`")
_SUITE = re.compile(r"@[ \t]*(test|eval)[ \t]*(:?)(.*)", re.S)
_FIELD_IN_RHS = "output fields ([name]) are only allowed in '>>' template rows"
#: `[x]: int = ...`, a Python-style annotation after a binding's brackets
_TYPE_AFTER = re.compile(r"\[[ \t]*([A-Za-z_]\w*)[ \t]*\][ \t]*:[ \t]*([^=<\s][^=<]*?)[ \t]*(=|<<)")
#: '@word: name:' (no parameter list): a misspelled '@test:' or '@eval:' header
_SUITE_LIKE = re.compile(r"@[ \t]*([A-Za-z_]\w*)[ \t]*:[ \t]*[A-Za-z_]\w*[ \t]*:?[ \t]*")
_PROSE = re.compile(r"[@~][^\s(]*\s+[^\s(:][^(]*$")  # '@team, please', '~5 minutes'
_NOT_A_HEADER = {
    "procedure": "a line starting with '@' is a procedure header '@name(params):'; "
    "write '\\@' for a literal '@' at the start of text",
    "type": "a line starting with '~' is a custom type '~Name(fields)'; "
    "write '\\~' or '~~' for a literal '~' at the start of text",
}


def _odd_indent(char: str) -> str:
    name = unicodedata.name(char, "a whitespace character")
    return f"indent with spaces or tabs: this line starts with U+{ord(char):04X} ({name})"


def _readonly(ctx: BuildContext) -> frozenset[str]:
    """Parameters a statement in ``ctx`` may not bind (they are read-only,
    docs/language.md#procedures)."""
    if ctx.in_proc and ctx.kind in ("proc", "block", "map", "optimize", "process"):
        return ctx.params
    return frozenset()


class Builder:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.directives = DirectiveBuilder(self)

    # ------------------------------------------------------------------ helpers

    def span(self, start: int, end: int) -> n.Span:
        return self.src.span(start, end)

    def no_body(self, item: Item, what: str) -> None:
        if item.children:
            child = item.children[0]
            raise KediSyntaxError(
                child.start, f"unexpected indentation: {what} takes no indented body"
            )

    def text(
        self, item: Item, rel: int, *, fields: bool = False, message: str = _FIELD_IN_RHS
    ) -> n.Text:
        return parse_text(
            self.src, item.start + rel, item.end, fields=fields, field_message=message
        )

    def fence_code(self, item: Item) -> n.PyCode:
        fence = item.fence
        assert fence is not None
        return n.PyCode(
            self.span(fence.open_offset, fence.close_end),
            fence.code,
            "block",
            fence.body_line,
            fence.indent + 1,
        )

    def rhs(self, item: Item, rel: int, what: str = "right-hand side") -> n.Rhs:
        """Right-hand side starting at ``item.text[rel:]`` (docs/language.md#assignment,
        #returns)."""
        if item.fence is not None:
            if item.text[rel:].strip() != "```":
                raise KediSyntaxError(
                    item.start + rel, f"a fenced {what} must be '= ```' alone on its line"
                )
            code = self.fence_code(item)
            return n.Rhs(code.span, "fence", code=code)
        rest = item.text[rel:]
        stripped = rest.strip()
        if stripped and stripped[0] == "`" and _SOLE_CODE.fullmatch(stripped):
            start = item.start + rel + (len(rest) - len(rest.lstrip()))
            line, col = self.src.position(start + 1)
            span = self.span(start, start + len(stripped))
            code = n.PyCode(span, stripped[1:-1], "expr", line, col)
            return n.Rhs(span, "expr", code=code)
        if "\n" in rest:
            return self.continued(item, rel)
        text = self.text(item, rel)
        if len(text.parts) == 1 and isinstance(text.parts[0], n.CallSubst):
            return n.Rhs(text.span, "call", text=text, call=text.parts[0])
        return n.Rhs(text.span, "text", text=text)

    def continued(self, item: Item, rel: int) -> n.Rhs:
        """A rendered return continued with a trailing '\\' (docs/language.md#returns)."""
        parts: list[n.TextPart] = []
        offset = item.start + rel
        segments = item.text[rel:].split("\n")
        for index, segment in enumerate(segments):
            last = index == len(segments) - 1
            body = segment.rstrip()
            if not last:
                body = body[:-1]  # drop the continuation backslash
            lead = len(body) - len(body.lstrip())
            start = offset + lead
            stop = offset + len(body)
            if index < len(segments) - 1 and not body.strip():
                offset += len(segment) + 1
                continue
            raw = self.src.text[start:stop]
            kept = raw if not last else raw.rstrip()
            text = parse_text(
                self.src, start, start + len(kept.rstrip()), field_message=_FIELD_IN_RHS
            )
            seg_parts = list(text.parts)
            trailing = kept[len(kept.rstrip()) :]
            if trailing and not last:
                tail_at = start + len(kept.rstrip())
                seg_parts.append(n.Literal(self.span(tail_at, tail_at + len(trailing)), trailing))
            for part in seg_parts:
                prev = parts[-1] if parts else None
                if isinstance(part, n.Literal) and isinstance(prev, n.Literal):
                    parts[-1] = n.Literal(
                        self.span(prev.span.start_offset, part.span.end_offset),
                        prev.value + part.value,
                    )
                else:
                    parts.append(part)
            offset += len(segment) + 1
        if parts:
            span = self.span(parts[0].span.start_offset, parts[-1].span.end_offset)
        else:
            span = self.span(item.start + rel, item.start + rel)
        return n.Rhs(span, "text", text=n.Text(span, tuple(parts)))

    # ------------------------------------------------------------------ bodies

    def body(self, items: list[Item], ctx: BuildContext) -> tuple[n.Stmt, ...]:
        out: list[n.Stmt] = []
        i = 0
        while i < len(items):
            item = items[i]
            self.src.reached = item.start
            kind = classify(item)
            if kind == "template" or (kind == "row" and ctx.kind in ("optimize", "auto")):
                stmt, i = self.template(items, i, kind == "row", _readonly(ctx))
                out.append(stmt)
                continue
            if kind == "row":
                if item.text[0].isspace():  # docs/language.md#indentation
                    raise KediSyntaxError(item.start, _odd_indent(item.text[0]))
                if item.text[0] == "[" and item.text.count("[") > item.text.count("]"):
                    raise KediSyntaxError(item.start, "unbalanced '[': missing ']'")
                message = "template text must start with '>>'"
                typed = _TYPE_AFTER.match(item.text)
                if typed is not None:  # docs/language.md#assignment
                    name, tp, op = typed.groups()
                    message += (
                        f" (a binding's type goes inside its brackets: '[{name}: {tp}] {op} ...')"
                    )
                raise KediSyntaxError(item.start, message)
            if kind == "directive":
                self.directives.add(item, ctx, out)
            else:
                out.append(self.statement(item, kind, ctx))
            i += 1
        check_body(out, ctx)
        return tuple(out)

    def statement(self, item: Item, kind: str, ctx: BuildContext) -> n.Stmt:
        suite = _SUITE_LIKE.fullmatch(item.text) if kind == "procedure" else None
        if suite is not None:  # '@tst: ratio:', '@Test: t:'
            raise KediSyntaxError(
                item.start,
                f"unknown suite kind '@{suite.group(1)}:': a suite header is '@test: name:' or "
                "'@eval: name:' (a procedure header is '@name(params):')",
            )
        if kind in ("procedure", "type") and _PROSE.match(item.text):  # docs/language.md#line-kinds
            raise KediSyntaxError(item.start, _NOT_A_HEADER[kind])
        if kind == "procedure":
            self.place(item, ctx, "a procedure")
            return self.procedure(item, ctx)
        if kind == "type":
            self.place(item, ctx, "a custom type")
            self.no_body(item, "a custom type declaration")
            name, _, fields, _ = parse_signature(
                self.src, item.text, item.start, "type_header", "field"
            )
            self.not_readonly(item, name, ctx)
            decls = tuple(n.FieldDecl(p.span, p.name, p.type, p.default) for p in fields)
            check_type_decl(name, item.start + item.text.index(name, 1), decls)
            return n.TypeDecl(self.span(item.start, item.end), name, decls)
        if kind == "suite":
            return self.suite(item, ctx)
        self.place(item, ctx, "this statement")
        if kind == "return":
            self.no_body(item, "a return")
            if ctx.kind == "map":
                raise KediSyntaxError(item.start, "a '> map:' body cannot contain a '=' return")
            if ctx.kind == "process":
                raise KediSyntaxError(item.start, "a '> process:' body cannot contain a '=' return")
            value = self.rhs(item, 1, "return")
            return n.Return(self.span(item.start, stop_of(item)), value)
        if kind == "target":
            split = split_target(item.text)
            capture = split is not None and split[1] == "<<"
            self.no_body(
                item, "a raw capture (its prompt is one line)" if capture else "an assignment"
            )
            return self.target(item, ctx)
        if kind == "python":
            self.no_body(item, "a Python statement line")
            span = self.span(item.start, item.end)
            line, col = self.src.position(item.start + 1)
            code = n.PyCode(span, item.text[1:-1], "stmt", line, col)
            return n.PythonStmt(span, code)
        # fence
        self.no_body(item, "a fence")
        code = self.fence_code(item)
        return n.PythonBlock(code.span, code)

    def place(self, item: Item, ctx: BuildContext, what: str) -> None:
        if ctx.executable:
            return
        where = {
            "test": "an '@test:' suite holds only '> case:' blocks and directives",
            "eval": "an '@eval:' suite holds only '> data:', '> test_data:', '> metric:' "
            "and directives",
            "case": "a '> case:' body holds only Python: backtick lines and ``` fences",
            "profile": "a '> profile:' body holds only '>' member directives",
            "optimize": "a '> optimize:' body holds exactly one '>>' template",
            "auto": "a '> auto:' body holds only specification rows",
            "task": "a '> task' body holds exactly one '>>' template",
            "send": "this body holds exactly one '>>' template",
            "task_group": "a '> task_group:' body holds only '> await' arms and '> process:'",
        }.get(ctx.kind, f"{what} is not allowed here")
        raise KediSyntaxError(item.start, where)

    def not_readonly(self, item: Item, name: str, ctx: BuildContext, at: int | None = None) -> None:
        """A nested declaration (or a loop's binder, at offset ``at``) binds its name like
        `[x] = ...` does, so it may not replace a parameter either
        (docs/language.md#procedures)."""
        if name in _readonly(ctx):
            raise KediSyntaxError(
                item.start + item.text.index(name, 1) if at is None else at,
                f"parameter {name!r} is read-only and cannot be assigned",
            )

    def procedure(self, item: Item, ctx: BuildContext) -> n.Procedure:
        head = item.text
        name, _, params, ret = parse_signature(
            self.src, head, item.start, "proc_header", "parameter"
        )
        self.not_readonly(item, name, ctx)
        inner = BuildContext("proc", True, frozenset(p.name for p in params))
        body = self.body(item.children, inner)
        doc = item.doc.text if item.doc is not None else None
        end = max(stop_of(item), item.doc.end if item.doc is not None else 0)
        del ctx
        return n.Procedure(
            self.span(item.start, end), name, tuple(params), ret, body, doc, item.line
        )

    def target(self, item: Item, ctx: BuildContext) -> n.Stmt:
        split = split_target(item.text)
        assert split is not None
        close, op, after = split
        name, ref = parse_target(self.src, item.text[:close], item.start)
        self.not_readonly(item, name, ctx)
        span = self.span(item.start, stop_of(item))
        if op == ":=":
            if ref is not None:
                raise KediSyntaxError(
                    ref.span.start_offset,
                    "'[x: T] :=' is not allowed: ':=' keeps the owner's type, drop the annotation",
                )
            return n.Reassign(span, name, self.rhs(item, after, "assignment"))
        if op == "<<":
            # `"str"` is a forward reference to `str` (docs/language.md#types)
            if ref is not None and not ref.backtick and ref.source not in _STR_SOURCES:
                raise KediSyntaxError(
                    ref.span.start_offset,
                    f"a raw capture '<<' binds the whole reply as str; "
                    f"type {ref.source!r} is not allowed",
                )
            if item.fence is not None:
                raise KediSyntaxError(item.end - 3, "a raw capture prompt is a single line of text")
            prompt = self.text(
                item,
                after,
                message="output fields are not allowed in a raw capture '<<' prompt "
                "(it binds the whole reply)",
            )
            return n.RawCapture(span, name, ref, prompt)
        return n.Assign(span, name, ref, self.rhs(item, after, "assignment"))

    def template(
        self, items: list[Item], i: int, bare: bool, readonly: frozenset[str] = frozenset()
    ) -> tuple[n.Template, int]:
        first = items[i]
        rows = [self.row(first, 0 if bare else 2)]
        end = first.end
        j = i + 1
        while j < len(items):
            nxt = items[j]
            if nxt.blank_before or classify(nxt) != "row":
                break
            rows.append(self.row(nxt, 0))
            end = nxt.end
            j += 1
        seen: set[str] = set()
        for row in rows:
            for part in row.parts:
                if isinstance(part, n.OutputField):
                    if part.name in seen:
                        raise KediSyntaxError(
                            part.span.start_offset,
                            f"duplicate output field {part.name!r} in this template block",
                        )
                    if part.name in readonly:
                        raise KediSyntaxError(
                            self.src.text.find(part.name, part.span.start_offset),
                            f"parameter {part.name!r} is read-only and cannot be assigned",
                        )
                    seen.add(part.name)
        return n.Template(self.span(first.start, end), tuple(rows), bare), j

    def row(self, item: Item, rel: int) -> n.Text:
        if item.children:
            raise KediSyntaxError(
                item.children[0].start,
                "unexpected indentation: template rows continue at the same indentation as '>>'",
            )
        if item.fence is not None:
            raise KediSyntaxError(item.end - 3, "a fence cannot open inside template text")
        return self.text(item, rel, fields=True)

    def suite(self, item: Item, ctx: BuildContext) -> n.Stmt:
        m = _SUITE.fullmatch(item.text)
        assert m is not None
        kind = m.group(1)
        if ctx.kind != "top":
            raise KediSyntaxError(item.start, f"'@{kind}:' suites are allowed only at top level")
        if not m.group(2):
            raise KediSyntaxError(
                item.start + m.end(1), f"suite header must be '@{kind}: name:' (missing ':')"
            )
        rest = m.group(3).strip()
        if not rest.endswith(":"):
            raise KediSyntaxError(item.end, "suite header must end with ':'")
        name = rest[:-1].strip()
        name_at = item.start + item.text.index(name, m.start(3)) if name else item.end - 1
        check_name(name, name_at, "suite name")
        return self.directives.suite(item, kind, name)
