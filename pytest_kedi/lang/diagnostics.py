"""Located parse diagnostics, rendered the way Kedi renders them."""

from __future__ import annotations

import os
import traceback
import unicodedata
from dataclasses import dataclass

from pytest_kedi.errors import KediError
from pytest_kedi.text import printable

__all__ = [
    "DEBUG_ENV",
    "Diagnostic",
    "ImportSite",
    "KediParseError",
    "debug_from_env",
    "unseen_note",
]

#: Set to a true value (1, true, yes, on) to show the traceback of an internal parser error.
DEBUG_ENV = "KEDI_DEBUG"


def debug_from_env() -> bool:
    """Whether ``KEDI_DEBUG`` asks for internal tracebacks."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _pad(ch: str) -> str:
    """The caret line's padding under ``ch``: what it takes in a terminal."""
    if ch == "\t":
        return "\t"
    if ch.isascii():
        return " "
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return ""
    return "  " if unicodedata.east_asian_width(ch) in ("W", "F") else " "


#: invisible characters that join or order the letters of a script or an emoji (a zero-width
#: joiner, a right-to-left mark): text holds them on purpose
_WRITING = frozenset("\u200c\u200d\u200e\u200f")


def unseen_note(text: str, column: int) -> str:
    """What a message adds when the character at ``column`` (1-based) of ``text`` does not
    show, or shows as a plain space (a zero-width space, a second byte-order mark, a
    no-break space), or when the line holds one that does not show at all elsewhere (after
    a backtick statement, say): the line then looks right where the caret points. ""
    otherwise."""
    ch = text[column - 1] if 1 <= column <= len(text) else " "
    if _unseen(ch):
        name = unicodedata.name(ch, "an unnamed character")
        return f" (the character at the caret is U+{ord(ch):04X}, {name})"
    for index, ch in enumerate(text):
        if unicodedata.category(ch) == "Cf" and ch not in _WRITING:
            name = unicodedata.name(ch, "an unnamed character")
            return f" (the line holds U+{ord(ch):04X}, {name}, at column {index + 1})"
    return ""


def _unseen(ch: str) -> bool:
    return ch != " " and unicodedata.category(ch) in ("Cf", "Zs", "Zl", "Zp")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    message: str
    source_line: str = ""

    def __post_init__(self) -> None:
        # A message may quote the source (`'> profile: x' must end with ':'`): its control
        # characters (a lone CR, an ESC) are shown as escapes, as the quoted line's are, so
        # pytest's collection error and short summary, which print it as it is, cannot
        # garble a terminal or a CI log.
        object.__setattr__(self, "message", printable(self.message))

    def render(self) -> str:
        name = printable(self.path)  # a file named with an ESC cannot restyle the log
        text = self.source_line.rstrip("\r\n") if self.source_line else ""
        # Keep the source line as written but for its control characters, shown as their
        # escapes (`\x1b`: raw, one could restyle or garble a terminal); the caret's
        # padding copies its tabs, so the caret sits under the column whatever width a
        # terminal gives a tab, and takes the cells a terminal gives the rest (two for a
        # wide character, none for a combining one, one per character of an escape).
        prefix = text[: max(self.column, 1) - 1]
        caret_pad = "".join(map(_pad, printable(prefix)))
        caret_pad += " " * (max(self.column, 1) - 1 - len(prefix))
        out = [f'  File "{name}", line {self.line}, column {self.column}']
        out.append(f"  {printable(text)}")
        out.append(f"  {caret_pad}^")
        out.append("")
        out.append("Kedi error: ParseError")
        out.append(f"  {self.message}")
        if "\r" in text:  # a file saved with lone CR line ends is one line (#lines)
            count = text.count("\r")
            out.append(
                f"  (the line holds {count} carriage return{'s' if count > 1 else ''} not "
                "followed by a line feed, which end no line: a Kedi file's lines end with "
                "\\n or \\r\\n)"
            )
        return "\n".join(out)


@dataclass(frozen=True, slots=True)
class ImportSite:
    """An ``> import:`` line that loaded a file failing to parse (docs/language.md#modules)."""

    path: str
    line: int  # 1-based
    source_line: str = ""

    def render(self) -> str:
        text = printable(self.source_line.rstrip("\r\n"))
        return f'  File "{printable(self.path)}", line {self.line}\n  {text}'


class KediParseError(KediError):
    """Raised for malformed Kedi source; carries one or more diagnostics and, for a module
    that failed to parse as it was imported, the import lines that loaded it (innermost
    first)."""

    def __init__(
        self,
        diagnostics: list[Diagnostic] | tuple[Diagnostic, ...],
        *,
        internal: BaseException | None = None,
        imported_from: tuple[ImportSite, ...] = (),
    ) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        #: The parser bug behind an "internal error in the Kedi parser" (also `__cause__`).
        self.internal = internal
        self.imported_from = imported_from
        super().__init__(self.render())

    def imported_at(self, site: ImportSite) -> KediParseError:
        """This error, raised by loading the file that ``site`` imports."""
        error = KediParseError(
            self.diagnostics, internal=self.internal, imported_from=(*self.imported_from, site)
        )
        error.__cause__ = self.__cause__
        error.__suppress_context__ = True
        return error

    @property
    def path(self) -> str:
        return self.diagnostics[0].path

    @property
    def line(self) -> int:
        return self.diagnostics[0].line

    @property
    def column(self) -> int:
        return self.diagnostics[0].column

    @property
    def message(self) -> str:
        return self.diagnostics[0].message

    def render(self, *, debug: bool = False) -> str:
        """The located diagnostics; with ``debug``, an internal error's traceback follows."""
        blocks = ["Kedi parse error:\n\n" + d.render() for d in self.diagnostics]
        if self.imported_from:
            sites = "\n".join(site.render() for site in self.imported_from)
            blocks.append("Imported from:\n" + sites)
        cause = self.internal
        if debug and cause is not None:
            trace = "".join(traceback.format_exception(cause)).rstrip("\n")
            blocks.append("Traceback of the internal error (--kedi-debug):\n" + trace)
        return "\n\n".join(blocks)

    def __str__(self) -> str:
        return self.render()
