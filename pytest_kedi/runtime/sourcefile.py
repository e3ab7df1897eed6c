"""A `.kedi` source file as the runtime sees it: path, lines and exact line spans."""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from typing import TYPE_CHECKING

from pytest_kedi.text import line_list

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang.nodes import Span

__all__ = ["SourceFile"]


class SourceFile:
    """Lines and offsets of one `.kedi` file, for snippets and synthetic spans."""

    __slots__ = ("_digest", "_starts", "lines", "path", "source")

    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source
        self.lines: tuple[str, ...] = tuple(line_list(source))
        starts = [0]
        find, at = source.find, source.find("\n")
        while at != -1:
            starts.append(at + 1)
            at = find("\n", at + 1)
        self._starts = starts
        self._digest: str | None = None

    @property
    def digest(self) -> str:
        """A hash of the text (computed once): what compiled code kept across runs is
        keyed by, with the path."""
        if self._digest is None:
            data = self.source.encode("utf-8", "surrogatepass")
            self._digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        return self._digest

    def line_text(self, line: int) -> str:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""

    def snippet(self, span: Span | None) -> str:
        return "" if span is None else self.line_text(span.start_line).strip()

    def line_span(self, line: int) -> Span:
        """The span of physical line ``line`` (1-based), without its line ending."""
        from pytest_kedi.lang.nodes import Span

        text = self.line_text(line)
        start = self._starts[line - 1] if 1 <= line <= len(self._starts) else 0
        return Span(self.path, line, 1, line, len(text) + 1, start, start + len(text))

    def line_of_offset(self, offset: int) -> int:
        return bisect_right(self._starts, offset)
