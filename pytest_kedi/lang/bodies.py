"""Directive body shapes (docs/language.md#directive-shape): settings, text rows, name lists,
profile
members, statement bodies, and the `@test:`/`@eval:` suites (docs/language.md#tests-and-evals)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.checks import check_scope
from pytest_kedi.lang.context import BuildContext, classify, stop_of
from pytest_kedi.lang.heads import check_name, parse_metric_head
from pytest_kedi.lang.scanner import Item, is_quoted, quoted_value
from pytest_kedi.lang.source import KediSyntaxError
from pytest_kedi.lang.syntax import DIRECTIVES, IDENT, IDENT_CHAR, IDENT_START, Body, names
from pytest_kedi.lang.text import ESCAPES

if TYPE_CHECKING:
    from pytest_kedi.lang.builder import Builder

__all__ = ["BodyReader"]

# A setting key is a name that may also hold '-' after its first character.
_KEY = re.compile(rf"({IDENT_START}(?:{IDENT_CHAR}|-)*)[ \t]*:(?![=:])")
_SOLE_CODE = re.compile(r"`[^`]*`")
#: Name lists whose rows may be backtick Python (`> use:` looks the value up); an
#: `> import: m:` or `> export:` row names a declaration (docs/language.md#modules)
_CODE_ROWS = frozenset({"use", "requires"})
_ESCAPE = re.compile(r"\\(.)|~~")
_TICK = re.compile(r"\\.|`")
_UNBALANCED_TICK = "unbalanced backtick: inline Python must be closed with '`' on the same line"
_HEAD = re.compile(rf">[ \t]*({IDENT})[ \t]*(:?)")

_SETTINGS_BODY = names(lambda d: d.body is Body.SETTINGS)
_TEXT_BODY = names(lambda d: d.body is Body.TEXT)
_NAMES_BODY = names(lambda d: d.body is Body.NAMES)
# Profile members that hold one value: a second one is a duplicate.
_PROFILE_SINGLETONS = names(lambda d: d.singleton)
_NEEDS_BODY = names(lambda d: d.needs_body)
#: Statement-bodied directives -> the block context their body is built in.
_STATEMENTS = {d.name: d.context for d in DIRECTIVES.values() if d.context is not None}


def _plain(value: str, offset: int) -> str:
    """Resolve escapes in an inline directive value. An unescaped backtick left open (a
    backtick value missing its closing '`') is the error it is in text
    (docs/language.md#text-and-escapes), not a value with a backtick in it; a quoted value is
    a Python string, its backticks its own."""
    if "`" in value and value[:1] not in ("'", '"'):
        ticks = [m.start() for m in _TICK.finditer(value) if m.group() == "`"]
        if len(ticks) % 2:
            raise KediSyntaxError(offset + ticks[-1], _UNBALANCED_TICK)
    if "\\" not in value and "~~" not in value:
        return value

    def sub(m: re.Match[str]) -> str:
        ch = m.group(1)
        if ch is None:
            return "~"
        if ch not in ESCAPES:
            raise KediSyntaxError(offset + m.start(), f"unsupported escape '\\{ch}'")
        return ESCAPES[ch]

    return _ESCAPE.sub(sub, value)


def _setting(value: str, offset: int) -> str:
    """A `> settings:` value or list row. One quoted string is Python's and kept as written:
    its escapes are Python's, resolved when the directive runs (docs/language.md
    #model-directives), so an escape Python refuses or warns about is a parse error here. Any
    other value is `_plain`."""
    if not is_quoted(value):
        return _plain(value, offset)
    import ast
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            ast.literal_eval(value)
        except (SyntaxError, ValueError, Warning) as exc:
            reason = exc.msg if isinstance(exc, SyntaxError) else str(exc)
            if reason.startswith("(unicode error)"):  # "... codec can't decode ...: why"
                reason = reason.rpartition(": ")[2]
            raise KediSyntaxError(offset, f"{reason} in a quoted value (a Python string)") from None
    return value


def _label(name: str) -> str:
    """How a diagnostic names the directive ``name``: ``> system:`` as the ``> instructions:``
    it is, its legacy spelling named too (docs/language.md#model-directives)."""
    if name == "system":
        return "'> instructions:' (written '> system:', its legacy spelling)"
    return f"'> {name}:'"


def _check_instruction_text(name: str, text: n.Text) -> None:
    """`> instructions:` (`> system:`) text takes literals, `<name>` and Python, and no
    procedure call (docs/language.md#model-directives)."""
    if name not in ("instructions", "system"):
        return
    for part in text.parts:
        if isinstance(part, n.CallSubst):
            raise KediSyntaxError(
                part.span.start_offset,
                f"{_label(name)} text takes literals, <name> and Python, not a procedure call: "
                f"bind its result first ([x] = <{part.callee}(...)>) and write <x>",
            )


class BodyReader:
    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self.src = builder.src

    def code(self, start: int, text: str) -> n.PyCode:
        line, col = self.src.position(start + 1)
        return n.PyCode(self.b.span(start, start + len(text)), text[1:-1], "expr", line, col)

    # ------------------------------------------------------------------ dispatch

    def read(
        self,
        item: Item,
        name: str,
        arg: str | None,
        binder: str | None,
        value: str,
        rel: int,
        ctx: BuildContext,
        span: n.Span,
    ) -> n.Directive:
        kids = item.children
        text: n.Text | None = None
        code: n.PyCode | None = None
        if value and name in _NEEDS_BODY:
            raise KediSyntaxError(
                item.end, f"'> {name}: {value}' must end with ':' and take an indented body"
            )
        if value:
            lead = len(item.text[rel:]) - len(item.text[rel:].lstrip())
            at = item.start + rel + lead
            if _SOLE_CODE.fullmatch(value):
                code = self.code(at, value)
            elif name == "settings":  # nothing to merge: a plain value names no setting
                raise KediSyntaxError(
                    at,
                    "'> settings:' takes 'key: value' lines in an indented body, or one "
                    'backtick Python mapping (> settings: `{"temperature": 0.2}`)',
                )
            elif name in _TEXT_BODY:
                text = self.b.text(
                    item, rel, message=f"output fields are not allowed in {_label(name)}"
                )
                _check_instruction_text(name, text)
            if kids:
                raise KediSyntaxError(
                    kids[0].start,
                    f"unexpected indentation: '> {name}: {value}' takes no indented body",
                )
            plain = _plain(value, at) if code is None else value
            if name == "export" and code is None and plain != "*":
                _check_export_names(plain, at)
            return n.Directive(span, name, arg, binder, plain, text, code)
        if not kids:
            if name in ("export", "use", "requires", "import", "profile", "task_group", "budget"):
                raise KediSyntaxError(item.start, f"'> {name}:' needs a value or an indented body")
            if name in _TEXT_BODY or name in _STATEMENTS:
                raise KediSyntaxError(item.start, f"{_label(name)} needs an indented body")
            if name in ("case", "data", "test_data"):
                raise KediSyntaxError(item.start, f"'> {name}:' needs an indented body")
            if name not in _SETTINGS_BODY:
                raise KediSyntaxError(item.start, f"'> {name}:' needs a value")
            if name == "tool":  # every key is optional (docs/language.md#newer-directives)
                return n.Directive(span, name, arg, binder, None, body_kind="settings")
            # `> settings:`, `> history:`, `> agent: a2a:` ... with neither (docs/language.md
            # #directive-shape): a body not indented under its header, or a value left out
            if arg is not None:
                raise KediSyntaxError(item.start, f"'> {name}: {arg}:' needs an indented body")
            raise KediSyntaxError(item.start, f"'> {name}:' needs a value or an indented body")
        if name in _SETTINGS_BODY:
            entries = tuple(self.setting(k) for k in kids)
            return n.Directive(span, name, arg, binder, body_kind="settings", settings=entries)
        if name == "auto" and classify(kids[0]) == "template":
            body = self.b.body(kids, ctx.child("optimize"))
            return n.Directive(span, name, arg, binder, body_kind="statements", body=body)
        if name in _TEXT_BODY:
            rows = tuple(self.text_row(k, name) for k in kids)
            return n.Directive(span, name, arg, binder, body_kind="text", rows=rows)
        if name in _NAMES_BODY:
            names = tuple(self.name_row(k, name) for k in kids)
            return n.Directive(span, name, arg, binder, body_kind="names", names=names)
        if name == "profile":
            return self.profile(item, arg, span)
        if name in _STATEMENTS:
            inner = ctx.child(_STATEMENTS[name])
            body = self.b.body(kids, inner)
            self.check_single_template(item, name, body)
            return n.Directive(span, name, arg, binder, body_kind="statements", body=body)
        raise KediSyntaxError(kids[0].start, f"unexpected indentation: '> {name}:' takes no body")

    def check_single_template(self, item: Item, name: str, body: tuple[n.Stmt, ...]) -> None:
        if name in ("optimize", "task", "send", "interrupt"):
            if len(body) != 1 or not isinstance(body[0], n.Template):
                extra = body[1] if len(body) > 1 else item
                raise KediSyntaxError(
                    extra.span.start_offset if isinstance(extra, n.Node) else item.start,
                    f"a '> {name}:' body must be exactly one '>>' template block",
                )
            if name in ("send", "interrupt") and body[0].outputs:
                raise KediSyntaxError(
                    body[0].outputs[0].span.start_offset,
                    f"output fields are not allowed in a '> {name}:' message",
                )
        if name == "task_group":
            previous = None
            for stmt in body:
                after_await = isinstance(previous, n.Directive) and previous.name == "await"
                if isinstance(stmt, n.Directive) and stmt.name == "process" and not after_await:
                    raise KediSyntaxError(
                        stmt.span.start_offset,
                        "'> process:' must directly follow a '> await' arm",
                    )
                previous = stmt

    # ------------------------------------------------------------------ body rows

    def setting(self, item: Item) -> n.KeyValue:
        m = _KEY.match(item.text)
        if m is None:
            self.b.directives.check_known(item)
            raise KediSyntaxError(item.start, "malformed setting: expected 'key: value'")
        key = m.group(1)
        raw = item.text[m.end() :]
        value = raw.strip()
        span = self.b.span(item.start, stop_of(item))
        at = item.start + m.end() + len(raw) - len(raw.lstrip())
        if item.fence is not None:
            raise KediSyntaxError(item.end - 3, "a setting value cannot be a fence")
        if value and item.children:
            raise KediSyntaxError(
                item.children[0].start, f"unexpected indentation under setting {key!r}"
            )
        if item.children:
            kids = item.children
            if all(_KEY.match(k.text) and classify(k) != "python" for k in kids):
                entries = tuple(self.setting(k) for k in kids)
                return n.KeyValue(span, key, None, entries=entries)
            listed = [self.list_item(k, key) for k in kids]
            names = tuple(text for text, _ in listed)
            codes = tuple(code for _, code in listed)
            return n.KeyValue(span, key, None, items=names, item_codes=codes)
        if _SOLE_CODE.fullmatch(value):
            return n.KeyValue(span, key, value, self.code(at, value))
        if value[:1] in ("'", '"'):  # the scanner cut the row at a '#' the string may hold
            text = self.b.src.text
            end = text.find("\n", at)
            value = quoted_value(text[at : len(text) if end < 0 else end].rstrip("\r"))
        return n.KeyValue(span, key, _setting(value, at))

    def list_item(self, item: Item, key: str) -> tuple[str, n.PyCode | None]:
        """One row of a key's indented list, read like a one-line value: a backtick item is
        Python, a plain one has its escapes resolved, and a quoted one keeps a ``#`` it holds
        (docs/language.md#comments, #text-and-escapes)."""
        text = self.name_row(item, key, check=False)
        if not text:
            return text, None
        at = self.b.src.text.find(text, item.start)
        at = item.start if at < 0 else at
        if _SOLE_CODE.fullmatch(text):
            return text, self.code(at, text)
        if text[:1] in ("'", '"'):  # the scanner cut the row at a '#' the string may hold
            source = self.b.src.text
            end = source.find("\n", at)
            text = quoted_value(source[at : len(source) if end < 0 else end].rstrip("\r"))
        return _setting(text, at), None

    def text_row(self, item: Item, name: str) -> n.Text:
        if classify(item) not in ("row", "python"):
            self.b.directives.check_known(item)
            raise KediSyntaxError(
                item.start,
                f"a {_label(name)} body holds only text rows; escape a leading "
                f"{item.text[0]!r} as '\\{item.text[0]}' to use it as text",
            )
        if item.children:
            raise KediSyntaxError(
                item.children[0].start, f"unexpected indentation in {_label(name)} text"
            )
        text = self.b.text(item, 0, message=f"output fields are not allowed in {_label(name)}")
        _check_instruction_text(name, text)
        return text

    def name_row(self, item: Item, what: str, check: bool = True) -> str:
        if item.children:
            raise KediSyntaxError(
                item.children[0].start, f"unexpected indentation in {what!r} list"
            )
        text = item.text.strip()
        if text.startswith("- "):
            text = text[2:].strip()
        if not check or (what in _CODE_ROWS and _SOLE_CODE.fullmatch(text)):
            return text
        for part in text.split("/") if what == "import" else [text]:
            check_name(part, item.start, f"name in the {what!r} list")
        return text

    def profile(self, item: Item, arg: str | None, span: n.Span) -> n.Directive:
        members: list[n.Directive] = []
        ctx = BuildContext("profile")
        seen: set[str] = set()
        out: list[n.Stmt] = []
        for kid in item.children:
            if classify(kid) != "directive":
                raise KediSyntaxError(
                    kid.start, "a '> profile:' body holds only '>' member directives"
                )
            self.b.directives.add(kid, ctx, out)
            member = out[-1]
            assert isinstance(member, n.Directive)
            if member.name in _PROFILE_SINGLETONS and member.name in seen:
                raise KediSyntaxError(kid.start, f"duplicate '> {member.name}:' in a profile")
            seen.add(member.name)
            members.append(member)
        check_scope(members)
        doc = item.doc.text if item.doc is not None else None
        return n.Directive(
            span, "profile", arg, None, body_kind="members", members=tuple(members), docstring=doc
        )

    # ------------------------------------------------------------------ suites

    def suite(self, item: Item, kind: str, name: str) -> n.Stmt:
        span = self.b.span(item.start, stop_of(item))
        ctx = BuildContext(kind)
        directives: list[n.Directive] = []
        cases: list[n.Case] = []
        datasets: list[n.Dataset] = []
        metric: n.Metric | None = None
        for kid in item.children:
            if classify(kid) != "directive":
                self.b.place(kid, ctx, "this statement")
            m = _HEAD.match(kid.text)
            sub = m.group(1) if m else ""
            if sub == "case" and kind == "test":
                case = self.case(kid)
                if any(c.name == case.name for c in cases):
                    raise KediSyntaxError(
                        self._named(kid, "case")[1], f"duplicate case name {case.name!r} in suite"
                    )
                cases.append(case)
            elif sub in ("data", "test_data") and kind == "eval":
                ds = self.dataset(kid, sub)
                if any(d.kind == ds.kind and d.name == ds.name for d in datasets):
                    raise KediSyntaxError(
                        self._named(kid, sub)[1], f"duplicate '> {sub}: {ds.name}:' in suite"
                    )
                datasets.append(ds)
            elif sub == "metric" and kind == "eval":
                if metric is not None:
                    raise KediSyntaxError(
                        kid.start,
                        "an '@eval:' suite has exactly one '> metric:'; this is a second one",
                    )
                metric = self.metric(kid)
            else:
                out: list[n.Stmt] = []
                self.b.directives.add(kid, ctx, out)
                directive = out[-1]
                assert isinstance(directive, n.Directive)
                directives.append(directive)
        if kind == "test":
            return n.TestSuite(span, name, tuple(cases), tuple(directives))
        return n.EvalSuite(span, name, tuple(datasets), metric, tuple(directives))

    def _named(self, kid: Item, what: str) -> tuple[str, int]:
        m = re.match(r">[ \t]*" + what + r"[ \t]*:(.*)", kid.text, re.S)
        if m is None:
            raise KediSyntaxError(kid.start, f"directive '> {what}' must be followed by ':'")
        rest = m.group(1).strip()
        if not rest.endswith(":"):
            raise KediSyntaxError(
                kid.end, f"'> {what}:' header must end with ':' ('> {what}: name:')"
            )
        name = rest[:-1].strip()
        at = kid.start + kid.text.index(name, m.start(1)) if name else kid.end - 1
        return name, at

    def case(self, kid: Item) -> n.Case:
        name, at = self._named(kid, "case")
        check_name(name, at, "case name")
        if not kid.children:
            raise KediSyntaxError(kid.start, "'> case:' needs an indented body")
        body: list[n.PythonStmt | n.PythonBlock] = []
        for k in kid.children:
            kind = classify(k)
            if kind not in ("python", "fence"):
                self.b.directives.check_known(k)
                raise KediSyntaxError(
                    k.start, "a '> case:' body holds only Python: backtick lines and ``` fences"
                )
            stmt = self.b.statement(k, kind, BuildContext("block"))
            assert isinstance(stmt, n.PythonStmt | n.PythonBlock)
            body.append(stmt)
        return n.Case(self.b.span(kid.start, stop_of(kid)), name, tuple(body))

    def dataset(self, kid: Item, kind: str) -> n.Dataset:
        name, at = self._named(kid, kind)
        check_name(name, at, "dataset name", binds=True)
        if name == "expected":  # docs/language.md#scoring: a row binds `expected` itself
            raise KediSyntaxError(
                at,
                "invalid dataset name 'expected': each row binds `expected` to its expected "
                "value, which would replace the row's input; choose another name",
            )
        if not kid.children:
            raise KediSyntaxError(kid.start, f"'> {kind}:' needs an indented body")
        body = self.b.body(kid.children, BuildContext("data"))
        return n.Dataset(self.b.span(kid.start, stop_of(kid)), kind, name, body)  # type: ignore[arg-type]

    def metric(self, kid: Item) -> n.Metric:
        m = re.match(r">[ \t]*metric[ \t]*:(.*)", kid.text, re.S)
        if m is None:
            raise KediSyntaxError(kid.start, "directive '> metric' must be followed by ':'")
        rest = m.group(1).rstrip()
        if not rest.endswith(":"):
            raise KediSyntaxError(
                kid.end, "'> metric:' header must end with ':' ('> metric: name(dataset):')"
            )
        head = rest[:-1]
        base = kid.start + m.start(1)
        name, dataset = parse_metric_head(head, base)
        if not kid.children:
            raise KediSyntaxError(kid.start, "'> metric:' needs an indented body")
        body = self.b.body(kid.children, BuildContext("metric"))
        return n.Metric(self.b.span(kid.start, stop_of(kid)), name, dataset, body)


def _check_export_names(value: str, at: int) -> None:
    """``> export: a, b``: each comma-separated part is a name (reported at its column)."""
    offset = 0
    for part in value.split(","):
        lead = len(part) - len(part.lstrip())
        check_name(part.strip(), at + offset + lead, "name in the 'export' list")
        offset += len(part) + 1
