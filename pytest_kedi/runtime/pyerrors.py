"""Mapping Python exceptions from embedded units to `.kedi` lines (docs/language.md#errors,
#diagnostics)."""

from __future__ import annotations

import linecache
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_kedi.catchable import catchable
from pytest_kedi.errors import (
    KediExecutionError,
    KediKeyExecutionError,
    KediNameError,
    KediPythonTrace,
    KediTraceFrame,
    KediTypeExecutionError,
    KediValueExecutionError,
)
from pytest_kedi.lang.nodes import Span
from pytest_kedi.pytraces import is_users
from pytest_kedi.runtime.caches import register
from pytest_kedi.runtime.sourcefile import SourceFile
from pytest_kedi.runtime.usererrors import user_error
from pytest_kedi.text import display_path, exception_text, line_list

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang.nodes import PyCode

__all__ = [
    "PYTHON_UNITS",
    "LookupFailure",
    "PythonUnits",
    "UnitInfo",
    "module_traces",
    "python_error",
    "syntax_error",
]


@dataclass(frozen=True, slots=True)
class UnitInfo:
    code: PyCode
    source_file: SourceFile
    procedure: str | None


class PythonUnits:
    """Where embedded Python came from. Owner: ``pytest_kedi.runtime.pyinterop``, which
    records each compiled unit here; `python_error` reads it.

    * ``codes``: id(code object) -> (code object, origin of its unit): maps traceback
      frames of embedded Python (compiled under the `.kedi` path, with `.kedi` line
      numbers) back to their unit;
    * the `.kedi` sources put in `linecache` (so Python's tracebacks and warnings show
      `.kedi` lines). ``reset`` forgets both and removes those `linecache` entries.
    """

    def __init__(self) -> None:
        self.name = "python units"
        self.owner = "pytest_kedi.runtime.pyinterop"
        self.codes: dict[int, tuple[types.CodeType, UnitInfo]] = {}
        self._shown: dict[str, str] = {}

    def track(self, code: types.CodeType, info: UnitInfo) -> None:
        """Record ``code`` and every code object nested in it as belonging to ``info``."""
        stack = [code]
        while stack:
            current = stack.pop()
            self.codes[id(current)] = (current, info)
            stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))

    def forget(self, source_files: Iterable[object]) -> None:
        """Forget the code compiled from ``source_files`` (the `SourceFile` objects of a
        program taken apart, `Program.release`); their sources stay in `linecache`."""
        gone = {id(source_file) for source_file in source_files}
        for key, (_code, info) in list(self.codes.items()):
            if id(info.source_file) in gone:
                self.codes.pop(key, None)

    def show(self, path: str, source: str) -> None:
        """Make ``source`` what `linecache` answers for ``path``."""
        if self._shown.get(path) is source and path in linecache.cache:
            return
        lines = [line + "\n" for line in line_list(source)]
        # No modification time: `linecache.checkcache` keeps the entry, so tracebacks
        # show the source that ran even if the file changes on disk afterwards.
        linecache.cache[path] = (len(source), None, lines, path)
        self._shown[path] = source

    def reset(self) -> None:
        for path in self._shown:
            entry = linecache.cache.get(path)
            if entry is not None and len(entry) == 4 and entry[1] is None:
                del linecache.cache[path]
        self._shown.clear()
        self.codes.clear()


PYTHON_UNITS = register(PythonUnits())


def syntax_error(
    exc: SyntaxError, info: UnitInfo, filename: str, *, relative: bool = False
) -> KediExecutionError:
    """A Kedi error for a syntax error in a unit. ``relative``: the error's position is
    in the unit's own text (from parsing it) rather than in the `.kedi` file (from
    compiling the relocated tree). The exception itself is relocated to the `.kedi`
    file, so its text never names an internal filename."""
    source_file = info.source_file
    if relative:
        from pytest_kedi.lang.pycheck import locate_syntax_error

        kedi_line, column = locate_syntax_error(info.code, exc, source_file.lines)
    else:  # compiling gives the UTF-8 byte offset of the relocated node, plus one
        kedi_line = exc.lineno or info.code.line
        column = char_column(source_file.line_text(kedi_line), (exc.offset or 1) - 1)
    py_line = kedi_line - info.code.line + 1
    exc.filename = source_file.path
    exc.lineno, exc.offset = kedi_line, column
    exc.end_lineno = exc.end_offset = None
    exc.text = source_file.line_text(kedi_line) + "\n"
    trace = KediPythonTrace(
        code=info.code.source,
        virtual_filename=filename,
        python_line=py_line,
        python_column=column,
        kedi_span=source_file.line_span(kedi_line),
        kedi_line=kedi_line,
        snippet=source_file.line_text(kedi_line),
        procedure_name=info.procedure,
    )
    message = f"{exc.msg} (line {kedi_line})"
    return KediExecutionError(message, python_traces=(trace,), original=exc)


# ----------------------------------------------------------------------------- errors

_ERROR_CLASSES: tuple[tuple[type[BaseException], type[KediExecutionError]], ...] = (
    (KeyError, KediKeyExecutionError),
    (NameError, KediNameError),
    (TypeError, KediTypeExecutionError),
    (ValueError, KediValueExecutionError),
)


#: A code object standing for a unit where its frame first appears in a traceback.
Origin = tuple[types.CodeType, UnitInfo]


def _traces(exc: BaseException, origin: Origin | None = None) -> list[KediPythonTrace]:
    traces: list[KediPythonTrace] = []
    tb = exc.__traceback__
    while tb is not None:
        f_code = tb.tb_frame.f_code
        entry = PYTHON_UNITS.codes.get(id(f_code))
        if origin is not None and f_code is origin[0]:
            entry, origin = origin, None
        if entry is not None and entry[0] is f_code:
            info = entry[1]
            kedi_line = tb.tb_lineno
            py_line = kedi_line - info.code.line + 1
            traces.append(
                KediPythonTrace(
                    code=info.code.source,
                    virtual_filename=f_code.co_filename,
                    python_line=py_line,
                    python_column=_column(f_code, tb.tb_lasti, info.source_file),
                    kedi_span=info.source_file.line_span(kedi_line),
                    kedi_line=kedi_line,
                    snippet=info.source_file.line_text(kedi_line),
                    procedure_name=info.procedure,
                )
            )
        elif entry is None and _users_module(f_code.co_filename):
            traces.append(_module_trace(f_code, tb.tb_lineno))
        tb = tb.tb_next
    return traces


def module_traces(exc: BaseException | None) -> tuple[KediPythonTrace, ...]:
    """The lines of the user's own Python modules in ``exc``'s traceback (a model function
    a ``conftest.py`` defines, which raised inside the model boundary), outermost first."""
    traces: list[KediPythonTrace] = []
    tb = exc.__traceback__ if exc is not None else None
    while tb is not None:
        f_code = tb.tb_frame.f_code
        if _users_module(f_code.co_filename):
            traces.append(_module_trace(f_code, tb.tb_lineno))
        tb = tb.tb_next
    return tuple(traces)


def _users_module(filename: str) -> bool:
    """Whether ``filename`` is the user's own Python module (a helper `.py` file embedded
    code imported), not a `.kedi` file, pytest-kedi, an installed package or the standard
    library."""
    return not filename.endswith(".kedi") and is_users(filename)


def _module_trace(code: types.CodeType, line: int) -> KediPythonTrace:
    """A line of the user's own Python module, as Python's traceback shows it."""
    filename = code.co_filename
    return KediPythonTrace(
        code="",
        virtual_filename=display_path(filename),
        python_line=line,
        python_column=None,
        kedi_span=None,
        kedi_line=None,
        snippet=linecache.getline(filename, line).strip(),
        function=code.co_name,
    )


def char_column(line: str, offset: int) -> int:
    """The 1-based character column of the UTF-8 byte ``offset`` (0-based) in ``line``:
    Python's code positions and compile-time syntax errors count bytes, so an ``é``
    before the error point would move the column one place right per such character."""
    if offset <= 0 or line.isascii():
        return max(offset, 0) + 1
    data = line.encode("utf-8", "surrogatepass")[:offset]
    return len(data.decode("utf-8", "ignore")) + 1 + max(offset - len(data), 0)


def _column(code: types.CodeType, lasti: int, source_file: SourceFile) -> int | None:
    """The 1-based column, in its `.kedi` line, of the instruction at ``lasti`` (None when
    the code object records no position for it)."""
    if lasti < 0:
        return None
    for index, position in enumerate(code.co_positions()):
        if index == lasti // 2:
            line, column = position[0], position[2]
            if column is None or line is None:
                return None
            return char_column(source_file.line_text(line), column)
    return None


def _as_frame(trace: KediPythonTrace) -> KediTraceFrame:
    """A trace entry as a frame of a Kedi error raised further in (a procedure that
    embedded code, or the user's module it called, called)."""
    if trace.function is not None:  # the user's own module: shown, never a location
        line = trace.python_line
        span = Span(trace.virtual_filename, line, 1, line, 1, 0, 0)
        return KediTraceFrame("module", trace.function, span, None, trace.snippet)
    return KediTraceFrame(
        kind="python",
        label=trace.procedure_name or "<program>",
        span=trace.kedi_span,
        procedure_name=trace.procedure_name,
        source_snippet=trace.snippet.strip(),
    )


def checked(check: Callable[[Any], bool], value: Any) -> bool:
    """``check(value)``, a strict type check; an exception from user code the check runs is
    raised as `check_error` makes it."""
    try:
        return check(value)
    except BaseException as exc:
        error = check_error(exc)
        if error is exc:
            raise
        raise error from None


def check_error(exc: BaseException) -> BaseException:
    """The error to raise for ``exc``, raised by user code that a strict type check ran (a
    metaclass's ``__instancecheck__``, a pydantic validator): located at its Python lines,
    as an error escaping embedded Python is (the caller's Kedi frames are added as it
    propagates); a Kedi error, or anything but a user error, as it is."""
    if isinstance(exc, KediExecutionError) or not user_error(exc):
        return exc
    return python_error(exc)


class LookupFailure(KediExecutionError):
    """A Kedi error that is a ``KeyError``, raised while Python looked a name up: a globals
    or builtins mapping's ``KeyError`` is "no such name" to Python (a ``NameError`` at the
    reader), so it travels as this, not a ``KeyError``, until `python_error` takes it out of
    the reading unit as itself (so ``except KeyError:`` around that unit's caller catches it).
    """

    def __init__(self, error: KediExecutionError) -> None:
        super().__init__(
            error.message,
            frames=error.frames,
            python_traces=error.python_traces,
            original=error.original,
        )
        self.error = error


def python_error(
    exc: BaseException, unit: object = None, *, origin: Origin | None = None
) -> KediExecutionError:
    """Wrap an exception escaping an embedded unit, located at its `.kedi` lines.

    ``origin``: a code object that is not a unit of its own (a generated procedure body)
    standing for the given unit's code where it first appears in the traceback."""
    traces = _traces(exc, origin)
    if isinstance(exc, LookupFailure):  # out of the unit that read the name: a KeyError again
        exc = exc.error
    if isinstance(exc, KediExecutionError):
        exc.with_outer_frame(*map(_as_frame, traces))
        return exc.with_traceback(None)
    cls: type[KediExecutionError] = KediExecutionError
    for base, kedi_cls in _ERROR_CLASSES:
        if isinstance(exc, base):
            cls = kedi_cls
            break
    text = exception_text(exc)  # a KeyError's is its key's repr, as Python shows it
    message = text or type(exc).__name__
    cls = catchable(cls, type(exc))  # `except ZeroDivisionError` around a call catches it
    error = cls(message, python_traces=traces, original=exc)
    kedi_class = cls.__dict__.get("_kedi_class")
    if kedi_class is not None:  # the user's class: its instance's own attributes too
        for name, value in getattr(exc, "__dict__", {}).items():
            if not name.startswith("__") and not hasattr(kedi_class, name):
                vars(error).setdefault(name, value)
    return error
