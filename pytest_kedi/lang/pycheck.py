"""Syntax checks of the embedded Python (backtick expressions and statements, fences,
the prelude, backtick types), reported as located Kedi diagnostics.

The parser itself treats embedded Python as opaque text (so parsing stays fast);
`check_python` runs Python's own parser over every snippet, exactly as the runtime
will compile it, and is used where diagnostics are shown: ``python -m pytest_kedi
parse`` and pytest collection.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from typing import Any

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError

__all__ = ["check_python", "locate_syntax_error", "python_diagnostics", "snippets"]


#: Per node class, how `snippets` treats its instances: ``"code"`` (a `PyCode`), ``"type"``
#: (a `TypeRef`), ``"items"`` (a tuple or list), else the names of the fields to search
#: (none for a `Span`, a string or any other leaf).
_WALK: dict[type, str | tuple[str, ...]] = {}


def _walk_kind(cls: type) -> str | tuple[str, ...]:
    kind: str | tuple[str, ...]
    if issubclass(cls, n.PyCode):
        kind = "code"
    elif issubclass(cls, n.TypeRef):
        kind = "type"
    elif issubclass(cls, tuple | list):
        kind = "items"
    elif dataclasses.is_dataclass(cls) and not issubclass(cls, n.Span):
        kind = tuple(reversed([f.name for f in dataclasses.fields(cls)]))
    else:
        kind = ()
    _WALK[cls] = kind
    return kind


def snippets(node: Any) -> Iterator[n.PyCode | n.TypeRef]:
    """Every embedded Python snippet under ``node``, in source order."""
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        current = pop()
        kind = _WALK.get(type(current))
        if kind is None:
            kind = _walk_kind(type(current))
        if kind == "code":
            yield current
        elif kind == "type":
            if current.backtick:
                yield current
        elif kind == "items":
            extend(reversed(current))
        else:
            for name in kind:
                push(getattr(current, name))


def locate_syntax_error(snippet: n.PyCode | n.TypeRef, exc: SyntaxError) -> tuple[int, int]:
    """The `.kedi` (line, column) of a syntax error in ``snippet``."""
    py_line = max(exc.lineno or 1, 1)
    offset = max(exc.offset or 1, 1)
    if isinstance(snippet, n.TypeRef):
        source, kind = snippet.source, "expr"
        line, col = snippet.span.start_line, snippet.span.start_col + 1
    else:
        source, kind, line, col = snippet.source, snippet.kind, snippet.line, snippet.col
    if kind == "expr":
        # The runtime compiles the stripped text: count what the strip removed.
        skipped = source[: len(source) - len(source.lstrip())]
        line += skipped.count("\n")
        if "\n" in skipped:
            col = 1
        col += len(skipped.rsplit("\n", 1)[-1])
    if py_line == 1 or kind == "block":
        # Fence lines are all dedented by the fence's indentation.
        return line + py_line - 1, col + offset - 1
    return line + py_line - 1, offset


def _compile(snippet: n.PyCode | n.TypeRef) -> SyntaxError | None:
    source = snippet.source
    expr = isinstance(snippet, n.TypeRef) or snippet.kind == "expr"
    try:
        if expr:
            ast.parse(source.strip(), mode="eval")
        else:
            ast.parse(source, mode="exec")
    except SyntaxError as exc:
        return exc
    except (ValueError, MemoryError, RecursionError) as exc:  # null bytes, too deep
        return SyntaxError(str(exc) or type(exc).__name__, ("", 1, 1, "", 1, 1))
    return None


def python_diagnostics(module: n.Module) -> list[Diagnostic]:
    """A located diagnostic for each embedded Python snippet that does not parse."""
    found: list[Diagnostic] = []
    lines = module.lines
    for snippet in snippets((module.prelude, module.body)):
        exc = _compile(snippet)
        if exc is None:
            continue
        line, col = locate_syntax_error(snippet, exc)
        text = lines[line - 1] if 1 <= line <= len(lines) else ""
        message = f"Python syntax error: {exc.msg}"
        found.append(Diagnostic(module.path, line, col, message, text))
    return found


def check_python(module: n.Module) -> n.Module:
    """``module`` unchanged; raise `KediParseError` when its embedded Python is invalid."""
    found = python_diagnostics(module)
    if found:
        raise KediParseError(found)
    return module
