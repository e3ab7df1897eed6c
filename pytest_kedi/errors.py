"""The Kedi exception hierarchy: every error pytest-kedi raises for a user derives from
`KediError`.

Dependency-free (standard library only): the parser, the runtime, the model layer, the
eval engine, the plugin and the CLI all raise from here, and ``except KediError``
recognises any of them without importing the runtime.

::

    KediError
    ├── KediParseError            malformed `.kedi` source (defined in pytest_kedi.lang)
    ├── KediExecutionError        executing Kedi code failed, located at `.kedi` frames
    │   ├── KediTypeExecutionError    a value violated a Kedi type (also a TypeError)
    │   ├── KediValueExecutionError   an invalid value (also a ValueError)
    │   ├── KediKeyExecutionError     a missing key (also a KeyError)
    │   ├── KediNameError             an unknown Kedi name (also a NameError)
    │   ├── KediUnsupportedError      a construct pytest-kedi does not execute
    │   ├── LoopIterationLimitError   a `> loop` ran past its limit
    │   ├── KediModelError            a model call failed (located)
    │   └── KediImportError           `> import:` failed
    ├── ModelError                a model call, configuration or adapter failure (unlocated)
    │   ├── CassetteMiss              strict replay found no recorded answer (`cassette_miss`)
    │   ├── ModelUnavailable          the model could not be built (package, key, base URL)
    │   ├── InvalidOptimizedPrompts   an unreadable or misshapen `.optimized.json`
    │   └── BudgetExhausted           the run's model request budget is spent (`budget`)
    ├── UnsupportedFeature        an unsupported construct met at the model boundary (unlocated)
    ├── KediSuiteError            an eval suite could not be scored (its data, its setup)
    ├── InvalidScoreError         a metric returned NaN or an infinite score (also a ValueError)
    └── KediUsageError            the command line or configuration was misused
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pytest_kedi.text import display_path, exception_text, line_list, one_line, printable

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang.nodes import Span

__all__ = [
    "FRAME_KINDS",
    "BudgetExhausted",
    "CassetteMiss",
    "InvalidOptimizedPrompts",
    "InvalidScoreError",
    "KediError",
    "KediExecutionError",
    "KediImportError",
    "KediKeyExecutionError",
    "KediModelError",
    "KediNameError",
    "KediPythonTrace",
    "KediSuiteError",
    "KediTraceFrame",
    "KediTypeExecutionError",
    "KediUnsupportedError",
    "KediUsageError",
    "KediValueExecutionError",
    "LoopIterationLimitError",
    "ModelError",
    "ModelUnavailable",
    "UnsupportedFeature",
]


class KediError(Exception):
    """Base class of every error pytest-kedi reports to a user."""


#: What a `KediTraceFrame` stands for; ``module`` is a line of the user's own Python module
#: (a `.py` helper) between `.kedi` frames.
_KINDS = "program procedure template assignment return python prelude type branch loop map show"
FRAME_KINDS = frozenset(f"{_KINDS} claim metric dataset case directive module".split())


@dataclass(frozen=True, slots=True)
class KediTraceFrame:
    """One Kedi-level frame: what was executing (kind/label) and where (span). ``caret``:
    the 0-based index in ``source_snippet`` of what the error names (a directive's value),
    shown with a caret under it."""

    kind: str
    label: str
    span: Span | None
    procedure_name: str | None = None
    source_snippet: str = ""
    caret: int | None = None


@dataclass(frozen=True, slots=True)
class KediPythonTrace:
    """One embedded-Python traceback entry mapped back to its `.kedi` line.

    ``python_line`` is 1-based in the embedded code; ``python_column`` is the 1-based column
    of the failing expression, counted in characters of its `.kedi` line (embedded code is
    compiled at its `.kedi` positions; Python's byte offsets are converted), or None when
    Python records none.

    A line of the user's own Python module that embedded code called (a helper in a `.py`
    file) has ``function`` set, its name: ``virtual_filename`` and ``python_line`` are then
    that file and line, and ``kedi_span``/``kedi_line`` are None (it locates nothing)."""

    code: str
    virtual_filename: str
    python_line: int
    python_column: int | None
    kedi_span: Span | None
    kedi_line: int | None
    snippet: str
    procedure_name: str | None = None
    function: str | None = None


#: Frames rendered at each end of a very deep stack.
_FRAME_LIMIT = 25


class KediExecutionError(KediError):
    """A failure while executing Kedi code, located at `.kedi` frames."""

    def __init__(
        self,
        message: str,
        *,
        frames: Iterable[KediTraceFrame] = (),
        python_traces: Iterable[KediPythonTrace] = (),
        original: BaseException | None = None,
    ) -> None:
        self.message: str = one_line(message)
        self.frames: tuple[KediTraceFrame, ...] = tuple(frames)
        self.python_traces: tuple[KediPythonTrace, ...] = tuple(python_traces)
        self.original: BaseException | None = original
        # Not super(): in a class `catchable` makes, the next `__init__` is the user's.
        Exception.__init__(self, self.message)
        if original is not None:
            self.__cause__ = original

    # -- structure -------------------------------------------------------------------------
    @property
    def kind_name(self) -> str:
        return type(self.original if self.original is not None else self).__name__

    #: a call that never started (wrong arguments): the first outer frame added, the
    #: caller's, puts the call's ``file:line`` before the message (as other type errors)
    at_call = False
    _kedi_call_line: int | None = None  # the line of a `<call()>` that failed (`evaluate`)

    def with_outer_frame(self, *frames: KediTraceFrame) -> KediExecutionError:
        """Prepend outer frames, given (and stored) outermost first. Returns self."""
        if self.at_call and frames:
            self.at_call, span = False, frames[-1].span
            if span is not None:
                self.message = f"{span.path}:{span.start_line}: {self.message}"
                self.args = (self.message,)
        self.frames = (*frames, *self.frames)
        return self

    def with_inner_frame(self, frame: KediTraceFrame) -> KediExecutionError:
        """Append an innermost frame. Returns self."""
        self.frames = (*self.frames, frame)
        return self

    @property
    def span(self) -> Span | None:
        """The innermost located span (the failing line)."""
        spans = chain(
            (trace.kedi_span for trace in reversed(self.python_traces)),
            (frame.span for frame in reversed(self.frames) if frame.kind != "module"),
        )
        return next((span for span in spans if span is not None), None)

    @property
    def line(self) -> int | None:
        lines = (trace.kedi_line for trace in reversed(self.python_traces))
        found = next((line for line in lines if line is not None), None)
        if found is not None:
            return found
        span = self.span
        return span.start_line if span is not None else None

    # -- rendering -------------------------------------------------------------------------
    def render(self, use_color: bool = False) -> str:
        bold, dim, red, reset = (
            ("\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[0m") if use_color else ("",) * 4
        )
        out = [f"{bold}Kedi stack trace:{reset}"]
        user = self._user_exception()
        if user is not None:  # what it was raised from, as Python shows it above it
            from pytest_kedi.pytraces import chain_text

            causes = chain_text(user)
            if causes:
                out.append(causes)
        last: tuple[str, int] | None = None
        frames = self.frames
        omitted = 0
        if len(frames) > 2 * _FRAME_LIMIT:  # deep recursion: keep both ends
            omitted = len(frames) - 2 * _FRAME_LIMIT
            frames = (*frames[:_FRAME_LIMIT], *frames[-_FRAME_LIMIT:])
        owner = "<program>"  # a Python line of no procedure: the Kedi frame running it names it
        for index, frame in enumerate(frames):
            if omitted and index == _FRAME_LIMIT:
                out.append(f"  ... {omitted} more frames ...")
                last = None
            unowned = frame.kind == "python" and frame.procedure_name is None
            owner = owner if unowned or frame.kind == "module" else frame.label
            label = owner if unowned else frame.label
            if frame.span is None:
                out.append(f"  in {frame.label}")
                continue
            key = (frame.span.path, frame.span.start_line)
            if key != last:  # else the same line seen from an inner layer (its Python unit)
                last = key
                out.append(f'  File "{key[0]}", line {key[1]}, in {label}')
                if frame.source_snippet:
                    out.append(f"    {dim}{printable(frame.source_snippet.strip())}{reset}")
            if frame.caret is not None and frame.source_snippet:
                before = printable(frame.source_snippet.strip()[: frame.caret])
                out.append("    " + "".join("\t" if c == "\t" else " " for c in before) + "^")
        for trace in self.python_traces:
            if trace.function is not None:  # the user's own `.py` module
                where, line, name = trace.virtual_filename, trace.python_line, trace.function
                out.append(f'  File "{where}", line {line}, in {name}')
                if trace.snippet:
                    out.append(f"    {printable(trace.snippet.strip())}")
                last = None
                continue
            where = trace.kedi_span.path if trace.kedi_span is not None else "<python>"
            line = trace.kedi_line if trace.kedi_line is not None else trace.python_line
            if (where, line) == last:
                continue
            last = (where, line)
            # a unit of no procedure: the Kedi frame running it names it (`data d`)
            owner = trace.procedure_name or (frames[-1].label if frames else "<program>")
            out.append(f'  File "{where}", line {line}, in {owner} (Python)')
            if trace.snippet:
                out.append(f"    {printable(trace.snippet.strip())}")
        out.append(f"{red}{self.final_text}{reset}")
        return "\n".join(out)

    @property
    def final_text(self) -> str:
        """The rendering's last part: ``<Class>: <message>``, the message as the exception
        gives it (over several lines if it has them, as Python shows it), then its notes and
        an exception group's members."""
        text = f"{self.kind_name}: {self._final_message()}"
        user = self._user_exception()
        if user is None:
            return text
        from pytest_kedi.pytraces import members_text, notes_lines

        parts = [text, *notes_lines(user), members_text(user)]
        return "\n".join(part for part in parts if part)

    def _user_exception(self) -> BaseException | None:
        """The exception user code raised that this error stands for, if any."""
        original = self.original
        while isinstance(original, KediExecutionError):
            original = original.original
        return original

    def _final_message(self) -> str:
        if self.original is not None and not isinstance(self.original, KediExecutionError):
            if isinstance(self.original, SyntaxError) and self.original.msg:
                return self.original.msg
            # one line as written, as Python shows it (empty for e.g. a bare `assert`)
            if "\n" not in (text := exception_text(self.original)) and "\r" not in text:
                return text
            return "\n".join(line.rstrip() for line in text.strip().splitlines())
        return self.message

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[object, ...]:
        made = type(self).__dict__.get("_kedi_class")  # a `catchable` class: made again
        cls = type(self) if made is None else made
        state = (cls, self.message, self.frames, self.python_traces, self.original)
        return (_rebuild, (*state, made is not None))


def _rebuild(
    cls: type[KediExecutionError],
    message: str,
    frames: tuple[KediTraceFrame, ...],
    traces: tuple[KediPythonTrace, ...],
    original: BaseException | None,
    made: bool = False,
) -> KediExecutionError:
    if made and original is not None:
        from pytest_kedi.catchable import catchable

        cls = catchable(cls, type(original))
    err = cls.__new__(cls)
    KediExecutionError.__init__(
        err, message, frames=frames, python_traces=traces, original=original
    )
    return err


class KediTypeExecutionError(KediExecutionError, TypeError):
    """A value violated a Kedi type (parameter, return, typed assignment, model output)."""


class KediValueExecutionError(KediExecutionError, ValueError):
    """A value was invalid for its use."""


class KediKeyExecutionError(KediExecutionError, KeyError):
    """A missing key."""

    def __str__(self) -> str:
        return self.render()


class KediNameError(KediExecutionError, NameError):
    """An unknown Kedi name (e.g. calling a procedure above its declaration in a run)."""


class KediUnsupportedError(KediExecutionError):
    """A construct pytest-kedi parses but does not execute was reached (see
    docs/language.md#unsupported-directives)."""

    def __init__(self, construct: str, line: int | None = None, **kwargs: object) -> None:
        self.construct = construct
        self.construct_line = line
        where = f" (line {line})" if line is not None else ""
        super().__init__(f"`{construct}` is not supported by pytest-kedi{where}", **kwargs)  # type: ignore[arg-type]

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_unsupported,
            (self.construct, self.construct_line, self.frames, self.python_traces),
        )


def _rebuild_unsupported(
    construct: str,
    line: int | None,
    frames: tuple[KediTraceFrame, ...],
    traces: tuple[KediPythonTrace, ...],
) -> KediUnsupportedError:
    return KediUnsupportedError(construct, line, frames=frames, python_traces=traces)


class LoopIterationLimitError(KediExecutionError):
    """A `> loop` exceeded its iteration limit."""


class KediModelError(KediExecutionError):
    """The adapter, provider or model output failed (reported at the model-facing statement)."""


class KediImportError(KediExecutionError):
    """`> import:` failed: missing module, cycle, or unsupported source."""


class ModelError(KediError):
    """A model call, model configuration or adapter failure, with a one-line message
    (the interpreter wraps it in Kedi frames as a `KediModelError`).

    ``error_class`` is the row error class of an eval row that fails with it."""

    error_class: ClassVar[str] = "model"

    def __init__(self, message: str) -> None:
        self.message = one_line(message)
        super().__init__(self.message)


class ModelUnavailable(ModelError):
    """The model a call needs could not be built: an unknown provider, a missing package,
    API key or base URL (pydantic-ai's own error, in one line). No request was sent."""


class CassetteMiss(ModelError):
    """``--kedi-record-mode strict``: a model call has no recorded answer (no live call
    is made)."""

    error_class: ClassVar[str] = "cassette_miss"


class InvalidOptimizedPrompts(ModelError):
    """An unreadable or misshapen ``prog.kedi.optimized.json``, located at its ``line`` and
    ``column`` (1-based), ``snippet`` being that line."""

    def __init__(
        self,
        path: os.PathLike[str] | str,
        detail: str,
        line: int = 1,
        column: int = 1,
        text: str = "",
    ) -> None:
        # relative like a `.kedi` path: report texts do not depend on the checkout's place
        super().__init__(f"invalid optimized prompts in {display_path(os.fspath(path))}: {detail}")
        self.path = Path(path)
        self.line = line
        self.column = column
        lines = line_list(text)
        self.snippet = lines[line - 1] if 0 < line <= len(lines) else ""


class BudgetExhausted(ModelError):
    """``--kedi-max-requests``: the run's model request budget is spent."""

    error_class: ClassVar[str] = "budget"


class UnsupportedFeature(KediError):
    """A construct pytest-kedi parses but does not execute, met at the model boundary
    (docs/language.md#unsupported-directives): ``construct`` is its source spelling (e.g.
    ``> mcp:``), ``line`` the 1-based `.kedi` line that introduced it, when known."""

    def __init__(self, construct: str, line: int | None = None) -> None:
        self.construct = construct
        self.line = line
        where = f" (line {line})" if line is not None else ""
        self.message = f"`{construct}` is not supported by pytest-kedi{where}"
        super().__init__(self.message)


class KediSuiteError(KediError):
    """A suite-level failure (no score): its message is user-facing and located."""

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause


class InvalidScoreError(KediError, ValueError):
    """A metric returned NaN or an infinite score (the row's error class ``invalid_score``)."""

    def __init__(self, score: float) -> None:
        self.score = score
        super().__init__(f"invalid score: {score!r}")


class KediUsageError(KediError):
    """The command line or the configuration was misused (the CLI exits with status 2)."""
