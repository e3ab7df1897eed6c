"""Kedi execution errors: frames, mapped Python traces and the rendered stack trace (§7)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_kedi.lang.nodes import Span

__all__ = [
    "FRAME_KINDS",
    "KediExecutionError",
    "KediImportError",
    "KediKeyExecutionError",
    "KediModelError",
    "KediNameError",
    "KediPythonTrace",
    "KediTraceFrame",
    "KediTypeExecutionError",
    "KediUnsupportedError",
    "KediValueExecutionError",
    "LoopIterationLimitError",
]

FRAME_KINDS = frozenset(
    {
        "program",
        "procedure",
        "template",
        "assignment",
        "return",
        "python",
        "prelude",
        "type",
        "branch",
        "loop",
        "map",
        "show",
        "claim",
        "metric",
        "dataset",
        "case",
        "directive",
    }
)


@dataclass(frozen=True, slots=True)
class KediTraceFrame:
    """One Kedi-level frame: what was executing (kind/label) and where (span)."""

    kind: str
    label: str
    span: Span | None
    procedure_name: str | None = None
    source_snippet: str = ""


@dataclass(frozen=True, slots=True)
class KediPythonTrace:
    """One embedded-Python traceback entry mapped back to its `.kedi` line."""

    code: str
    virtual_filename: str
    python_line: int
    python_column: int | None
    kedi_span: Span | None
    kedi_line: int | None
    snippet: str
    procedure_name: str | None = None


#: Frames rendered at each end of a very deep stack.
_FRAME_LIMIT = 25


def _one_line(text: str) -> str:
    lines = [part.strip() for part in str(text).splitlines() if part.strip()]
    return " ".join(lines)


class KediExecutionError(Exception):
    """A failure while executing Kedi code, located at `.kedi` frames."""

    def __init__(
        self,
        message: str,
        *,
        frames: Iterable[KediTraceFrame] = (),
        python_traces: Iterable[KediPythonTrace] = (),
        original: BaseException | None = None,
    ) -> None:
        self.message: str = _one_line(message)
        self.frames: tuple[KediTraceFrame, ...] = tuple(frames)
        self.python_traces: tuple[KediPythonTrace, ...] = tuple(python_traces)
        self.original: BaseException | None = original
        super().__init__(self.message)
        if original is not None:
            self.__cause__ = original

    # -- structure -------------------------------------------------------------------------
    @property
    def kind_name(self) -> str:
        if self.original is not None:
            return type(self.original).__name__
        return type(self).__name__

    def with_outer_frame(self, frame: KediTraceFrame) -> KediExecutionError:
        """Prepend an outer frame (frames are stored outermost first). Returns self."""
        self.frames = (frame, *self.frames)
        return self

    def with_inner_frame(self, frame: KediTraceFrame) -> KediExecutionError:
        """Append an innermost frame. Returns self."""
        self.frames = (*self.frames, frame)
        return self

    @property
    def span(self) -> Span | None:
        """The innermost located span (the failing line)."""
        for trace in reversed(self.python_traces):
            if trace.kedi_span is not None:
                return trace.kedi_span
        for frame in reversed(self.frames):
            if frame.span is not None:
                return frame.span
        return None

    @property
    def line(self) -> int | None:
        for trace in reversed(self.python_traces):
            if trace.kedi_line is not None:
                return trace.kedi_line
        span = self.span
        return span.start_line if span is not None else None

    # -- rendering -------------------------------------------------------------------------
    def render(self, use_color: bool = False) -> str:
        bold, dim, red, reset = (
            ("\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[0m") if use_color else ("",) * 4
        )
        out = [f"{bold}Kedi stack trace:{reset}"]
        last: tuple[str, int] | None = None
        frames = self.frames
        omitted = 0
        if len(frames) > 2 * _FRAME_LIMIT:  # deep recursion: keep both ends
            omitted = len(frames) - 2 * _FRAME_LIMIT
            frames = (*frames[:_FRAME_LIMIT], *frames[-_FRAME_LIMIT:])
        for index, frame in enumerate(frames):
            if omitted and index == _FRAME_LIMIT:
                out.append(f"  ... {omitted} more frames ...")
                last = None
            if frame.span is None:
                out.append(f"  in {frame.label}")
                continue
            key = (frame.span.path, frame.span.start_line)
            if key == last:
                continue  # the same line seen from an inner layer (e.g. its Python unit)
            last = key
            out.append(f'  File "{key[0]}", line {key[1]}, in {frame.label}')
            if frame.source_snippet:
                out.append(f"    {dim}{frame.source_snippet.strip()}{reset}")
        for trace in self.python_traces:
            where = trace.kedi_span.path if trace.kedi_span is not None else "<python>"
            line = trace.kedi_line if trace.kedi_line is not None else trace.python_line
            if (where, line) == last:
                continue
            last = (where, line)
            owner = trace.procedure_name or "<program>"
            out.append(f'  File "{where}", line {line}, in {owner} (Python)')
            if trace.snippet:
                out.append(f"    {trace.snippet.strip()}")
        final = self._final_message()
        out.append(
            f"{red}{self.kind_name}: {final}{reset}" if final else f"{red}{self.kind_name}{reset}"
        )
        return "\n".join(out)

    def _final_message(self) -> str:
        if self.original is not None and not isinstance(self.original, KediExecutionError):
            if isinstance(self.original, SyntaxError) and self.original.msg:
                return self.original.msg
            text = _one_line(str(self.original))
            if isinstance(self.original, KeyError) and self.original.args:
                text = repr(self.original.args[0])
            return text  # empty for e.g. a bare `assert`: the line is then the class alone
        return self.message

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild,
            (type(self), self.message, self.frames, self.python_traces, self.original),
        )


def _rebuild(
    cls: type[KediExecutionError],
    message: str,
    frames: tuple[KediTraceFrame, ...],
    traces: tuple[KediPythonTrace, ...],
    original: BaseException | None,
) -> KediExecutionError:
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
    """A construct pytest-kedi does not support was reached (§8, §10.2)."""

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
    """A `> loop` exceeded its iteration limit (§9)."""


class KediModelError(KediExecutionError):
    """The adapter, provider or model output failed (reported at the model-facing statement)."""


class KediImportError(KediExecutionError):
    """`> import:` failed: missing module, cycle, or unsupported source."""
