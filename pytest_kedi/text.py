"""Text helpers shared by every layer: one-line messages, clipping and path display.

Dependency-free (standard library only), so the error hierarchy, the runtime, the
eval engine, the plugin and the CLI can all use the same rules.
"""

from __future__ import annotations

import os

__all__ = [
    "clip",
    "counted",
    "display_path",
    "exception_text",
    "is_kedi_program",
    "line_list",
    "message_text",
    "one_line",
    "printable",
    "printable_marks",
    "truncate",
]


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` with ``noun`` in the singular or plural: ``1 row``, ``2 rows``,
    ``1 retry`` / ``2 retries`` (``plural`` given)."""
    if number == 1:
        return f"{number} {noun}"
    return f"{number} {plural if plural is not None else noun + 's'}"


#: What Python itself prints for an exception whose ``__str__`` raises.
STR_FAILED = "<exception str() failed>"


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or Python's ``<exception str() failed>`` when user code's ``__str__``
    raises (the exception itself is still what is reported)."""
    try:
        return str(exc)
    except Exception:
        return STR_FAILED


def line_list(text: str) -> list[str]:
    """``text``'s lines as Kedi counts them (docs/language.md#lines): ended by ``\n`` or
    ``\r\n`` only. `str.splitlines` also ends a line at a form feed, a vertical tab,
    U+0085, U+2028, U+2029 and ``\x1c``-``\x1e``, so a file holding one would show the
    wrong line under a line number."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def message_text(exc: BaseException) -> str:
    """An exception's message as Kedi shows it after ``<ExceptionType>: ``: ``str(exc)`` as
    written, its spaces kept (the reading is ``f"{type(e).__name__}: {e}"``), or on one
    line (`one_line`) when it has several."""
    text = exception_text(exc)
    return one_line(text) if "\n" in text or "\r" in text else text


def one_line(text: object) -> str:
    """``text`` on a single line: each non-blank line stripped, joined by one space
    (provider messages and tracebacks are often multi-line)."""
    value = exception_text(text) if isinstance(text, BaseException) else str(text)
    if "\n" not in value and "\r" not in value:
        return value.strip()
    return " ".join(part.strip() for part in value.splitlines() if part.strip())


def truncate(text: str, limit: int | None, ellipsis: str = "...") -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``ellipsis`` when cut;
    ``None`` means no limit."""
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - len(ellipsis)] + ellipsis


def clip(text: str, limit: int | None, ellipsis: str = "...") -> str:
    """``text`` on one line (its whitespace folded to single spaces), cut to at most
    ``limit`` characters like `truncate`."""
    return truncate(" ".join(text.split()), limit, ellipsis)


def is_kedi_program(path: str | os.PathLike[str]) -> bool:
    """``*.kedi`` files except optimizer caches (``*.cache.kedi``) and ``package.kedi``
    manifests, which are not programs."""
    name = os.path.basename(path)
    return name.endswith(".kedi") and name != "package.kedi" and not name.endswith(".cache.kedi")


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies inside it, else unchanged."""
    if not os.path.isabs(path):
        return path
    try:
        relative = os.path.relpath(path)
    except (ValueError, OSError):  # another drive (Windows); a working directory deleted
        return path
    return path if relative.startswith(os.pardir) else relative


#: Control characters (C0 but tab and newline, DEL, C1) as their ``\xNN`` escapes, and
#: the Unicode line and paragraph separators as ``\u2028``/``\u2029`` (`str.splitlines`
#: and many log viewers break a line there).
_CONTROLS = {
    code: f"\\x{code:02x}"
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
    if code not in (0x09, 0x0A)
} | {0x2028: "\\u2028", 0x2029: "\\u2029"}


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters a metric's feedback or a
    model's answer may hold (an ESC starting a colour or cursor sequence, a NUL), or a
    quoted source line (a lone carriage return), are shown as their escapes, so they cannot
    restyle or garble a CI log. Tabs are kept (a caret line copies them)."""
    if text.isprintable():
        return text
    return text.translate(_CONTROLS)


def printable_marks(line: str, marks: str) -> str:
    """``marks`` (a caret line: one mark or blank under each character of ``line``) moved
    under `printable` ``line``: a mark under an escaped character is repeated under each
    character of its escape."""
    if line.isprintable():
        return marks
    shown = (len(printable(ch)) for ch in line)
    return "".join(mark * next(shown, 1) for mark in marks)
