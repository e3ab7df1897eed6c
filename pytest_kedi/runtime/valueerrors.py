"""Errors in a directive's value, located at the value: the message names the `.kedi` line
and column of the key or value at fault, and the trace shows a caret under it
(docs/language.md#directive-shape: backtick values are checked when evaluated)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TypeVar

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import Frame

__all__ = ["header_value", "kv_value", "listed_name", "value_error"]

E = TypeVar("E", bound=KediExecutionError)


def _after_colon(ctx: Frame, span: nodes.Span, value: str | None) -> int:
    """The offset of ``value`` as written after the first ':' in ``span`` (a directive's
    header or a ``key: value`` line), else of the first character after that ':' and its
    blanks."""
    source = ctx.unit.source_file.source
    end = min(span.end_offset, len(source))
    colon = source.find(":", span.start_offset, end)
    if colon < 0:
        return span.start_offset
    if value:
        at = source.find(value, colon + 1, end)
        if at >= 0:
            return at
    at = colon + 1
    while at < end and source[at] in " \t":
        at += 1
    return at


def header_value(stmt: nodes.Directive, ctx: Frame) -> int:
    """The offset of a directive's one-line value (its backtick, or its text)."""
    if stmt.code is not None:
        return stmt.code.span.start_offset
    return _after_colon(ctx, stmt.span, stmt.value)


def kv_value(kv: nodes.KeyValue, ctx: Frame, item: str | None = None) -> int:
    """The offset of a ``key: value`` line's value (its key when the value is an indented
    block), or of ``item``, one name of its value or its indented list."""
    if item:
        return _after_colon(ctx, kv.span, item)
    if kv.code is not None:
        return kv.code.span.start_offset
    if kv.value is None or kv.items or kv.entries:
        return kv.span.start_offset
    return _after_colon(ctx, kv.span, kv.value)


def listed_name(stmt: nodes.Directive, ctx: Frame, name: str) -> int:
    """The offset of ``name`` as a row of a directive's indented list (else of its one-line
    value)."""
    source = ctx.unit.source_file.source
    end = min(stmt.span.end_offset, len(source))
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    body = source.find("\n", stmt.span.start_offset, end)
    if body >= 0:
        found = pattern.search(source, body, end)
        if found is not None:
            return found.start()
    value = header_value(stmt, ctx)  # a one-line list: the name within it
    found = pattern.search(source, value, body if body >= 0 else end)
    return found.start() if found is not None else value


def value_error(cls: type[E], ctx: Frame, offset: int, message: str) -> E:
    """A ``cls`` error for what is written at ``offset`` (a key or value in a directive):
    named by ``path:line:column``, its innermost frame that line with a caret under it."""
    source = ctx.unit.source_file
    line = source.line_of_offset(offset)
    span = source.line_span(line)
    column = offset - span.start_offset + 1
    text = source.line_text(line)
    indent = len(text) - len(text.lstrip())
    frame = replace(ctx.frame("directive", span), caret=max(column - 1 - indent, 0))
    error = cls(f"{span.path}:{line}:{column}: {message}")
    error.with_inner_frame(frame)
    return error
