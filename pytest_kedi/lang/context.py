"""Line classification (docs/language.md#line-kinds) and the block context a body is built in
(for the placement rules of docs/language.md#directive-inventory)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_kedi.lang.scanner import Item

__all__ = ["BuildContext", "classify", "split_target", "stop_of"]

# Contexts: top, proc, block (if/loop bodies), map, test, eval, case, data, metric,
# profile, optimize, auto, task, send, task_group, process.
EXECUTABLE_CONTEXTS = frozenset({"top", "proc", "block", "map", "data", "metric", "process"})


@dataclass(frozen=True, slots=True)
class BuildContext:
    """The block a body is being parsed in (for placement rules), and procedure facts."""

    kind: str
    in_proc: bool = False
    params: frozenset[str] = frozenset()

    def child(self, kind: str, **changes: object) -> BuildContext:
        return BuildContext(
            kind,
            bool(changes.get("in_proc", self.in_proc)),
            changes.get("params", self.params),  # type: ignore[arg-type]
        )

    @property
    def executable(self) -> bool:
        return self.kind in EXECUTABLE_CONTEXTS


def stop_of(item: Item) -> int:
    """Offset just past the last character of ``item`` and its whole body."""
    while item.children:
        item = item.children[-1]
    return item.stop


_OPERATOR = re.compile(r"[ \t]*(:=|<<|=)")


def split_target(text: str) -> tuple[int, str, int] | None:
    """For ``[target] op rhs``: (index after ``]``, operator, index after operator)."""
    depth = 0
    in_code = False
    quote = ""
    for i, ch in enumerate(text):
        if in_code:
            if ch == "`":
                in_code = False
            continue
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch == "`":
            in_code = True
        elif ch in "\"'" and depth > 0:
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                m = _OPERATOR.match(text, i + 1)
                if m is None:
                    return None
                op = m.group(1)
                after = m.end()
                if op == "=" and text.startswith("=", after):
                    return None
                return i + 1, op, after
        elif ch == "\\" and depth == 0:
            return None
    return None


def classify(item: Item) -> str:
    """docs/language.md#line-kinds line classification (first match wins)."""
    if item.kind == "fence":
        return "fence"
    text = item.text
    first = text[0]
    if first == ">":
        return "template" if text.startswith(">>") else "directive"
    if first == "=":
        return "return"
    if first == "@":
        rest = text[1:].lstrip(" \t")  # as `builder._SUITE` reads it
        if rest.startswith(("test", "eval")):
            after = rest[4:].lstrip(" \t")
            if after.startswith(":") or (rest[4:5] in (" ", "\t") and after[:1] != "("):
                return "suite"  # '@test: name:' (or '@test name:', missing its ':')
        return "procedure"
    if first == "~" and not text.startswith("~~"):
        return "type"
    if first == "[" and split_target(text) is not None:
        return "target"
    if first == "`" and len(text) > 1 and text.endswith("`") and text.count("`") == 2:
        return "python"
    return "row"
