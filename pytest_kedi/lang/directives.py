"""Directives (docs/language.md#directives, #tests-and-evals, #newer-syntax): heads, body shapes,
placement, suites and the
dedicated control-flow nodes (if/else, loop/map, show)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.bodies import BodyReader
from pytest_kedi.lang.checks import check_directive
from pytest_kedi.lang.context import BuildContext, stop_of
from pytest_kedi.lang.heads import check_name
from pytest_kedi.lang.scanner import Item
from pytest_kedi.lang.source import KediSyntaxError
from pytest_kedi.lang.syntax import AGENT, DIRECTIVES, IDENT, Place

if TYPE_CHECKING:
    from pytest_kedi.lang.builder import Builder

__all__ = ["DirectiveBuilder"]

_HEAD = re.compile(rf">[ \t]*({IDENT})[ \t]*(?:\[([^\]]*)\])?[ \t]*(:?)")
_SOLE_CODE_COLON = re.compile(r"[ \t]*(`[^`]*`)[ \t]*:[ \t]*")

_SUITE_PLACES = frozenset({Place.TEST_SUITE, Place.EVAL_SUITE})
#: Directives whose header names something (docs/language.md#model-directives,
#: #unsupported-directives, #tasks) -> the header's shape
_NAMED = {
    "optimize": "> optimize: span:",
    "profile": "> profile: name:",
    "task": "> task [handle]: child:",
    "send": "> send: handle:",
    "interrupt": "> interrupt: handle:",
    "package": "> package: name:",
}


def _unknown(m: re.Match[str]) -> str:
    """The error for an unknown directive name, spelled as written (colon or not), and the
    directive it is likely a misspelling of (`> modle:`, `> Model:`, `> setings:`)."""
    from difflib import get_close_matches  # (an error's path: not imported to parse)

    name = m.group(1)
    message = f"unknown directive '> {name}{':' if m.group(3) else ''}'"
    close = get_close_matches(name.lower(), sorted(DIRECTIVES), n=1, cutoff=0.8)
    if close:
        message += f" (did you mean '> {close[0]}:'?)"
    return message


class DirectiveBuilder:
    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self.src = builder.src
        self.reader = BodyReader(builder)

    # ------------------------------------------------------------------ entry

    def check_known(self, item: Item) -> None:
        """Raise when ``item`` is a ``> name:`` line naming no directive
        (docs/language.md#names)."""
        m = _HEAD.match(item.text)
        if m is not None and m.group(1) not in DIRECTIVES:
            raise KediSyntaxError(item.start + m.start(1), _unknown(m))

    def add(self, item: Item, ctx: BuildContext, out: list[n.Stmt]) -> None:
        m = _HEAD.match(item.text)
        if m is None:
            raise KediSyntaxError(item.start, "malformed directive: expected '> name: ...'")
        name = m.group(1)
        if name not in DIRECTIVES:
            raise KediSyntaxError(item.start + m.start(1), _unknown(m))
        if not m.group(3):
            raise KediSyntaxError(
                item.start + m.end(1), f"directive '> {name}' must be followed by ':'"
            )
        binder = m.group(2)
        if binder is not None:
            binder = binder.strip()
            if not DIRECTIVES[name].binder:
                raise KediSyntaxError(item.start + m.start(2) - 1, f"'> {name}:' takes no [binder]")
            if name == "loop" and ("," in binder or ":" in binder):
                raise KediSyntaxError(
                    item.start + m.start(2),
                    "a loop binder is one name: '> loop [name]:' takes no type and no "
                    "tuple unpacking",
                )
            check_name(binder, item.start + m.start(2), "binder name", binds=True)
            lead = len(m.group(2)) - len(m.group(2).lstrip())
            self.b.not_readonly(item, binder, ctx, item.start + m.start(2) + lead)
        rel = m.end()
        self.place(item, ctx, name)
        if name == "else":
            self.pair_else(item, rel, ctx, out)
            return
        if name == "map":
            self.pair_map(item, rel, ctx, out)
            return
        if name == "if":
            out.append(self.if_(item, rel, ctx))
            return
        if name == "loop":
            out.append(self.loop(item, rel, binder, ctx))
            return
        if name == "show":
            self.b.no_body(item, "'> show:'")
            if item.fence is not None:
                raise KediSyntaxError(item.end - 3, "'> show:' takes a one-line value, not a fence")
            out.append(n.Show(self.b.span(item.start, item.end), self.b.rhs(item, rel, "value")))
            return
        out.append(self.directive(item, name, binder, rel, ctx))

    def place(self, item: Item, ctx: BuildContext, name: str) -> None:
        kind = ctx.kind
        spec = DIRECTIVES[name]
        where = spec.place
        msg = None
        if where is Place.TOP and kind != "top":
            msg = f"'> {name}:' is allowed only at top level"
        elif where is Place.TEST_SUITE and kind != "test":
            msg = f"'> {name}:' belongs directly inside an '@test:' suite"
        elif where is Place.EVAL_SUITE and kind != "eval":
            msg = f"'> {name}:' belongs directly inside an '@eval:' suite"
        elif where is Place.PROFILE and kind != "profile":
            msg = f"'> {name}:' is allowed only as a '> profile:' member"
        elif where is Place.PROCEDURE and kind != "proc":
            directly = "" if name == "tool" else "directly "
            msg = f"'> {name}:' is allowed only {directly}in a procedure body"
        elif where is Place.TASK_GROUP and kind != "task_group":
            msg = f"'> {name}:' is allowed only inside '> task_group:', after '> await'"
        elif kind == "profile" and name not in AGENT and where is not Place.PROFILE:
            msg = (
                f"'> {name}:' is not allowed in a profile (members are agent directives, "
                "subagent, max_agents, workflow and output)"
            )
        elif kind in ("test", "eval") and name not in AGENT and where not in _SUITE_PLACES:
            msg = f"'> {name}:' is not allowed directly in a suite"
        elif kind == "case":
            msg = "a '> case:' body holds only Python: backtick lines and ``` fences"
        elif kind in ("optimize", "task", "send"):
            msg = f"'> {name}:' is not allowed here: this body holds exactly one '>>' template"
        elif kind == "auto":
            msg = "a '> auto:' body holds only specification rows"
        elif kind == "task_group" and name not in ("await", "process"):
            msg = (
                "a '> task_group:' body holds only '> await' arms, each optionally "
                "followed by '> process:'"
            )
        elif (
            where is Place.EXECUTABLE
            and not ctx.executable
            and not (kind == "task_group" and name == "await")
        ):
            msg = f"'> {name}:' is not allowed here"
        if msg is not None:
            raise KediSyntaxError(item.start, msg)

    # ------------------------------------------------------------------ control flow

    def condition(self, item: Item, rel: int, what: str) -> tuple[n.Condition, bool]:
        """Returns (condition, is_deterministic)."""
        rest = item.text[rel:]
        m = _SOLE_CODE_COLON.fullmatch(rest)
        if m is not None:
            start = item.start + rel + m.start(1)
            end = item.start + rel + m.end(1)
            line, col = self.src.position(start + 1)
            code = n.PyCode(self.b.span(start, end), m.group(1)[1:-1], "expr", line, col)
            return n.Condition(code.span, code, None), True
        if rest.rstrip().endswith(":"):
            raise KediSyntaxError(
                item.start + rel,
                f"a '> {what}:' header ending in ':' must be exactly one backtick expression; "
                "a model-judged claim has no trailing ':'",
            )
        if not rest.strip():
            raise KediSyntaxError(item.start, f"'> {what}:' needs a condition")
        claim = self.b.text(item, rel, message="output fields are not allowed in a claim")
        return n.Condition(claim.span, None, claim), False

    def require_body(self, item: Item, what: str) -> None:
        if not item.children:
            raise KediSyntaxError(item.start, f"{what} needs an indented body")

    def if_(self, item: Item, rel: int, ctx: BuildContext) -> n.If:
        cond, _ = self.condition(item, rel, "if")
        self.require_body(item, "'> if:'")
        body = self.b.body(item.children, ctx.child("block"))
        return n.If(self.b.span(item.start, stop_of(item)), cond, body, None)

    def pair_else(self, item: Item, rel: int, ctx: BuildContext, out: list[n.Stmt]) -> None:
        if item.text[rel:].strip():
            raise KediSyntaxError(item.start + rel, "'> else:' takes nothing after its ':'")
        prev = out[-1] if out else None
        if not isinstance(prev, n.If) or prev.orelse is not None:
            raise KediSyntaxError(
                item.start,
                "'> else:' must directly follow the body of a '> if:' at the same indentation",
            )
        self.require_body(item, "'> else:'")
        orelse = self.b.body(item.children, ctx.child("block"))
        out[-1] = n.If(
            self.b.span(prev.span.start_offset, stop_of(item)),
            prev.condition,
            prev.body,
            orelse,
            self.b.span(item.start, stop_of(item)),
        )

    def loop(self, item: Item, rel: int, binder: str | None, ctx: BuildContext) -> n.Loop:
        self.require_body(item, "'> loop:'")
        span = self.b.span(item.start, stop_of(item))
        if binder is not None:
            m = _SOLE_CODE_COLON.fullmatch(item.text[rel:])
            if m is None:
                rest = item.text[rel:]
                sole = re.fullmatch(r"[ \t]*`[^`]*`[ \t]*", rest) is not None
                lead = len(rest) - len(rest.lstrip())
                raise KediSyntaxError(
                    item.end if sole else item.start + rel + lead,
                    "an iterable loop is '> loop [name]: `expr`:' (one backtick expression "
                    "and ':')",
                )
            start = item.start + rel + m.start(1)
            line, col = self.src.position(start + 1)
            code = n.PyCode(
                self.b.span(start, start + len(m.group(1))), m.group(1)[1:-1], "expr", line, col
            )
            body = self.b.body(item.children, ctx.child("block"))
            return n.Loop(span, None, binder, code, body)
        cond, _ = self.condition(item, rel, "loop")
        body = self.b.body(item.children, ctx.child("block"))
        return n.Loop(span, cond, None, None, body)

    def pair_map(self, item: Item, rel: int, ctx: BuildContext, out: list[n.Stmt]) -> None:
        if item.text[rel:].strip():
            raise KediSyntaxError(item.start + rel, "'> map:' takes nothing after its ':'")
        prev = out[-1] if out else None
        if not isinstance(prev, n.Loop) or prev.map_body is not None or prev.binder is None:
            raise KediSyntaxError(
                item.start,
                "'> map:' must directly follow the body of an iterable "
                "'> loop [name]:' at the same indentation (one map per loop)",
            )
        self.require_body(item, "'> map:'")
        body = self.b.body(item.children, ctx.child("map"))
        out[-1] = n.Loop(
            self.b.span(prev.span.start_offset, stop_of(item)),
            prev.condition,
            prev.binder,
            prev.iterable,
            prev.body,
            body,
            self.b.span(item.start, stop_of(item)),
        )

    # ------------------------------------------------------------------ generic directives

    def directive(
        self, item: Item, name: str, binder: str | None, rel: int, ctx: BuildContext
    ) -> n.Directive:
        rest = item.text[rel:]
        value = rest.strip()
        arg: str | None = None
        span = self.b.span(item.start, stop_of(item))
        if item.fence is not None:
            raise KediSyntaxError(item.end - 3, f"'> {name}:' does not take a fence")
        if value.endswith(":") and DIRECTIVES[name].arg:
            arg = value[:-1].strip()
            value = ""
            if name not in ("import", "agent"):  # a path; `a2a:`
                at = item.start + rel + len(rest) - len(rest.lstrip())
                check_name(arg, at, f"'> {name}:' name")
        elif not value and name in _NAMED:
            # `> optimize: span:`, `> profile: name:`, `> task [h]: child:`, `> send: h:`
            raise KediSyntaxError(item.start + rel, f"'> {name}:' needs a name: '{_NAMED[name]}'")
        d = self.reader.read(item, name, arg, binder, value, rel, ctx, span)
        check_directive(d, item)
        return d

    def suite(self, item: Item, kind: str, name: str) -> n.Stmt:
        return self.reader.suite(item, kind, name)
