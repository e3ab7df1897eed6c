"""Source text bookkeeping: offsets -> 1-based lines/columns, spans, located errors."""

from __future__ import annotations

from bisect import bisect_right

from pytest_kedi.lang.nodes import Span

__all__ = ["KediSyntaxError", "Source"]


class KediSyntaxError(Exception):
    """Internal: one located problem; `parser.parse` turns it into `KediParseError`."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


class Source:
    """A source string plus its line table (offsets of line starts)."""

    __slots__ = ("_bounds", "_hint", "line_starts", "lines", "path", "reached", "text")

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        #: offset of the last statement the builder started (locates "nested too deeply")
        self.reached = 0
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.line_starts = starts
        self._bounds = [*starts, len(text) + 1]  # with a sentinel past the end
        self._hint = 0
        split = text.split("\n")
        self.lines = tuple(line.rstrip("\r") for line in split) if "\r" in text else tuple(split)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a 0-based offset."""
        index = bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        bounds = self._bounds
        first = self._hint
        # Spans are requested in roughly source order: try the last line first.
        if not bounds[first] <= start < bounds[first + 1]:
            first = bisect_right(bounds, start) - 1
            self._hint = first
        if end <= bounds[first + 1]:
            return Span(
                self.path,
                first + 1,
                start - bounds[first] + 1,
                first + 1,
                end - bounds[first] + 1,
                start,
                end,
            )
        last = bisect_right(bounds, end - 1) - 1
        return Span(
            self.path,
            first + 1,
            start - bounds[first] + 1,
            last + 1,
            end - bounds[last] + 1,
            start,
            end,
        )

    def line_text(self, line: int) -> str:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""
