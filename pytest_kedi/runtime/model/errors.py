"""Errors raised at the model boundary (the interpreter wraps them in Kedi frames)."""

from __future__ import annotations

__all__ = ["ModelError", "UnsupportedFeature", "one_line"]


def one_line(text: object) -> str:
    """Collapse ``text`` to a single line (provider messages are often multi-line)."""
    parts = [part.strip() for part in str(text).splitlines() if part.strip()]
    return " ".join(parts)


class ModelError(Exception):
    """A model call, model configuration or adapter failure, with a one-line message."""

    def __init__(self, message: str) -> None:
        self.message = one_line(message)
        super().__init__(self.message)


class UnsupportedFeature(Exception):
    """A construct pytest-kedi parses but does not execute (`KEDI.md` §4.5, §9.10, §9.11).

    ``construct`` is the construct's source spelling (e.g. ``> mcp:``); ``line`` is the
    1-based `.kedi` line that introduced it, when known.
    """

    def __init__(self, construct: str, line: int | None = None) -> None:
        self.construct = construct
        self.line = line
        message = f"`{construct}` is not supported by pytest-kedi"
        if line is not None:
            message += f" (line {line})"
        self.message = message
        super().__init__(message)
