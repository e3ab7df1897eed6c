"""Exact-span checker shared by the span tests (walks every node of a Module)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.source import Source

STATEMENTS = (
    n.Procedure,
    n.TypeDecl,
    n.Assign,
    n.Reassign,
    n.Template,
    n.RawCapture,
    n.Return,
    n.PythonStmt,
    n.PythonBlock,
    n.If,
    n.Loop,
    n.Show,
    n.Directive,
    n.TestSuite,
    n.EvalSuite,
    n.Case,
    n.Dataset,
    n.Metric,
)
_STARTS: dict[type, tuple[str, ...]] = {
    n.Procedure: ("@",),
    n.TypeDecl: ("~",),
    n.Assign: ("[",),
    n.Reassign: ("[",),
    n.RawCapture: ("[",),
    n.Return: ("=",),
    n.PythonStmt: ("`",),
    n.PythonBlock: ("```",),
    n.If: (">",),
    n.Loop: (">",),
    n.Show: (">",),
    n.Directive: (">",),
    n.TestSuite: ("@",),
    n.EvalSuite: ("@",),
    n.Case: (">",),
    n.Dataset: (">",),
    n.Metric: (">",),
}
_FIELD = re.compile(r"\[[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*(:.*)?\]", re.S)


def walk(node: object) -> Iterator[n.Node]:
    if isinstance(node, n.Node):
        yield node
        for f in dataclasses.fields(node):
            if f.name in ("source", "lines"):
                continue
            yield from walk(getattr(node, f.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from walk(item)


def span_problems(module: n.Module) -> list[str]:
    """Every violated span rule, as readable strings (empty when all spans are exact)."""
    source = module.source
    src = Source(source, module.path)
    problems: list[str] = []
    for node in walk(module):
        span = node.span
        text = source[span.start_offset : span.end_offset]
        where = f"{type(node).__name__}@{span.start_line}:{span.start_col}"
        if (span.start_line, span.start_col) != src.position(span.start_offset):
            problems.append(f"{where}: start line/col disagree with offset")
        if span.end_offset > span.start_offset:
            line, col = src.position(span.end_offset - 1)
            if (span.end_line, span.end_col) != (line, col + 1):
                problems.append(f"{where}: end line/col disagree with offset")
        if isinstance(node, STATEMENTS):
            if text != text.strip():
                problems.append(f"{where}: statement span has surrounding whitespace {text!r}")
            starts = _STARTS.get(type(node), ("",))
            if isinstance(node, n.Template):
                starts = ("",) if node.bare else (">>",)
            if not text.startswith(starts):
                problems.append(f"{where}: statement span starts badly {text[:30]!r}")
            if isinstance(node, n.PythonBlock) and not text.endswith("```"):
                problems.append(f"{where}: fence span does not end at the closing fence")
        elif isinstance(node, n.Subst):
            if text != f"<{node.name}>":
                problems.append(f"{where}: substitution span is {text!r}")
        elif isinstance(node, n.CallSubst | n.ExprSubst):
            if not (text.startswith("<") and text.endswith(">")):
                problems.append(f"{where}: substitution span is {text!r}")
            if isinstance(node, n.CallSubst) and not text.startswith(f"<{node.callee}("):
                problems.append(f"{where}: call span is {text!r}")
        elif isinstance(node, n.OutputField):
            m = _FIELD.fullmatch(text)
            if m is None or m.group(1) != node.name:
                problems.append(f"{where}: output field span is {text!r}")
        elif isinstance(node, n.InlinePython) and not (text.startswith("`") and text.endswith("`")):
            problems.append(f"{where}: inline Python span is {text!r}")
        elif isinstance(node, n.PyCode):
            if node.kind == "block":
                inner = source.split("\n")[node.line - 1 :]
                if not (text.startswith("```") and text.endswith("```")) or not inner:
                    problems.append(f"{where}: fence span is {text!r}")
            elif text != f"`{node.source}`":
                problems.append(f"{where}: code span {text!r} is not `{node.source}`")
            elif (node.line, node.col) != src.position(span.start_offset + 1):
                problems.append(f"{where}: code line/col do not point into the backticks")
        elif isinstance(node, n.TypeRef):
            expected = f"`{node.source}`" if node.backtick else node.source
            if text != expected:
                problems.append(f"{where}: type span {text!r} is not {expected!r}")
        elif isinstance(node, n.Param | n.FieldDecl) and not (
            text.startswith(node.name) and text == text.strip()
        ):
            problems.append(f"{where}: parameter span is {text!r}")
    return problems
