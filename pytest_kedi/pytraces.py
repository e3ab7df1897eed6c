"""Python tracebacks of user code as a Kedi stack trace shows them (docs/language.md#errors):
the user's frames only, their own lines, no internal names.

A Kedi stack trace ends with the exception that failed. Python shows more of a failure than
that, and so does the trace: the exception's notes (``add_note``), the members of an exception
group, and the exceptions it was raised from (``raise ... from e``, or while handling
another), each with the user's frames of its traceback. `chain_text` and `members_text` give
those parts; `KediExecutionError.render` places them as Python does (the causes before the
trace of the exception they caused, the members after it).
"""

from __future__ import annotations

import collections.abc
import os
import re
import sysconfig
import traceback
from collections.abc import Callable
from functools import cache

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.text import exception_text, printable, printable_marks

__all__ = ["chain_text", "is_users", "members_text", "notes_lines"]

#: names Kedi gives the code it compiles and the module of a file's Python (`pymodule`):
#: not the user's (``__kedi_block__.<locals>.f``, ``__kedi_prelude__boom_1a2b3c4d.Boom``)
_INTERNAL_NAMES = re.compile(r"(?:__kedi_\w+__|__kedi_prelude__\w+)\.(?:<locals>\.)?")
#: the ``, in <name>`` of a frame of a block or a module, which names nothing the user wrote
_BLOCK_FRAME = re.compile(r", in (?:__kedi_\w+__|<module>)$", re.MULTILINE)


@cache
def _not_users() -> tuple[str, ...]:
    """Where code that is not the user's lives: the standard library, installed packages
    (pydantic-ai, anyio, pytest) and pytest-kedi itself."""
    paths = sysconfig.get_paths()
    roots = (paths["stdlib"], paths["purelib"], paths["platlib"], os.path.dirname(__file__))
    return tuple({os.path.join(os.path.realpath(path), "") for path in roots})


def is_users(filename: str) -> bool:
    """Whether a traceback frame of ``filename`` is the user's: a `.kedi` file, or Python
    outside the standard library, the installed packages and pytest-kedi."""
    if filename.endswith(".kedi"):
        return True
    if filename.startswith("<"):  # <string>, <frozen ...>
        return False
    return not os.path.realpath(filename).startswith(_not_users())


def _users_only(exception: traceback.TracebackException, seen: set[int]) -> None:
    """Keep the user's frames in ``exception``, its causes and its members."""
    if id(exception) in seen:
        return
    seen.add(id(exception))
    frames = [frame for frame in exception.stack if is_users(frame.filename)]
    exception.stack = traceback.StackSummary.from_list(frames)
    for linked in (exception.__cause__, exception.__context__):
        if linked is not None:
            _users_only(linked, seen)
    for member in getattr(exception, "exceptions", None) or ():
        _users_only(member, seen)


#: the header a Kedi error's own rendering opens with, shown once, by the trace it caused
_HEADER = "Kedi stack trace:\n"
#: a line of Python's carets under the source line above it
_MARKS = re.compile(r" *[~^][ ~^]*")


def _format(lines: list[str]) -> str:
    text = "".join(line for line in lines if line != "Traceback (most recent call last):\n")
    text = _INTERNAL_NAMES.sub("", _BLOCK_FRAME.sub("", text)).rstrip("\n")
    if text.replace("\n", "").replace("\t", "").isprintable():  # no control character
        return text
    # A source line's control characters as their escapes, its carets moved under them.
    shown = text.split("\n")
    for index in range(len(shown) - 1):
        if _MARKS.fullmatch(shown[index + 1]):
            shown[index + 1] = printable_marks(shown[index], shown[index + 1])
    return "\n".join(map(printable, shown))


def chain_text(exc: BaseException) -> str:
    """The exceptions ``exc`` was raised from, as Python shows them above it (each with the
    user's frames), ending with the line that links them to ``exc``; "" when none shows."""
    cause = exc.__cause__
    if cause is None and not exc.__suppress_context__:
        cause = exc.__context__
    if cause is None or (exc.__cause__ is None and not _shows(cause)):
        return ""
    link = (
        "The above exception was the direct cause of the following exception:"
        if exc.__cause__ is not None
        else "During handling of the above exception, another exception occurred:"
    )
    if isinstance(cause, KediExecutionError):  # its own stack trace, under this one's header
        # after the user's lines that called what raised it (Python shows the frame that
        # handled it first), which its own frames, from the call on, do not hold
        own = cause.render().removeprefix(_HEADER)
        calls = _format(list(_calling_lines(cause).format()))
        if calls:  # after what the cause itself was raised from, which its rendering opens
            user: BaseException = cause
            while isinstance(user, KediExecutionError) and user.original is not None:
                user = user.original
            before = chain_text(user) if user is not cause else ""
            if before and own.startswith(f"{before}\n"):
                own = f"{before}\n{calls}\n{own[len(before) + 1 :]}"
            else:
                own = f"{calls}\n{own}"
        return f"{own}\n\n{link}\n"
    shown = _traceback(cause)
    if shown is None:  # its class fails Python's own formatting: its line alone
        return f"{type(cause).__name__}: {exception_text(cause)}\n\n{link}\n"
    _users_only(shown, set())
    return f"{_format(list(shown.format()))}\n\n{link}\n"


def _traceback(exc: BaseException) -> traceback.TracebackException | None:
    """Python's formatting of ``exc`` (its causes and members too), or None when the user's
    exception class fails the reads it makes (a ``__getattr__`` raising for ``__notes__``)."""
    try:
        return traceback.TracebackException.from_exception(exc)
    except Exception:
        return None


def _calling_lines(exc: BaseException) -> traceback.StackSummary:
    """The user's frames a Kedi error passed through before user code handled it: the
    first frames of its traceback, up to the first that is not the user's (pytest-kedi
    running the procedure that raised it, which the error's own frames stand for)."""
    frames = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if not is_users(frame.filename):
            break
        frames.append(frame)
    return traceback.StackSummary.from_list(frames)


def _shows(exc: BaseException) -> bool:
    """Whether an exception user code was handling is the user's to see: raised in a frame
    of the user's, not in pytest-kedi along its own way (a `RecursionError` the interpreter
    met while unwinding another)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    if isinstance(exc, KediExecutionError):
        # a Kedi error (a procedure's failure, raised by pytest-kedi running it): the
        # user's when user code handled it, its traceback starting at the user's frame
        # that caught it (`try: p() except KeyError: ...`)
        return is_users(tb.tb_frame.f_code.co_filename)
    while tb.tb_next is not None:
        tb = tb.tb_next
    return is_users(tb.tb_frame.f_code.co_filename)


def members_text(exc: BaseException) -> str:
    """An exception group's members as Python shows them below the group's line, each with
    the user's frames; "" for any other exception."""
    if not isinstance(exc, BaseExceptionGroup):
        return ""
    shown = _traceback(exc)
    if shown is None:
        return ""
    _users_only(shown, set())
    shown.stack = traceback.StackSummary.from_list([])
    shown.__cause__ = shown.__context__ = None
    lines = _format(list(shown.format())).splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("+-")), None)
    return "" if start is None else "\n".join(lines[start:])


def notes_lines(exc: BaseException) -> list[str]:
    """The notes ``add_note`` gave ``exc``, as Python prints them under its message: each
    note's ``str()`` (``<note str() failed>`` when that raises), a ``__notes__`` that is not
    a sequence as its ``repr()``; user code's failures here never replace the error."""
    try:
        notes = getattr(exc, "__notes__", None)
    except Exception:
        return []
    if notes is None:
        return []
    if not isinstance(notes, collections.abc.Sequence) or isinstance(notes, (str, bytes)):
        return _safe_text(notes, "__notes__", repr).splitlines() or [""]
    lines: list[str] = []
    for note in notes:
        lines += _safe_text(note, "note", str).splitlines() or [""]
    return lines


def _safe_text(value: object, what: str, func: Callable[[object], str]) -> str:
    """``func(value)``, or Python's ``<note str() failed>`` form when user code raises."""
    try:
        return func(value)
    except Exception:
        return f"<{what} {func.__name__}() failed>"
