"""The CLI's console (`Console`): its own lines on stdout, diagnostics on stderr, both
lenient about encodings; the streams a program may close, replace or leave at ``| head``;
how an error is rendered on one of its lines (`render_error`)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from typing import TextIO

from pytest_kedi.evals.safetext import clean_text
from pytest_kedi.text import message_text, printable

OK, FAILED, USAGE_ERROR = 0, 1, 2


def _lenient(stream: TextIO) -> TextIO:
    """``stream``, writing what its encoding cannot hold (``ü`` on an ASCII or cp1252
    console) as escapes (``\\xfc``), as pytest's terminal writer does, instead of failing."""
    if getattr(stream, "errors", None) == "strict":
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]
    return stream


class Console:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = _lenient(out)
        self.err = _lenient(err)

    # Everything the CLI itself prints passes `clean_text` (surrogates escaped, credential
    # values redacted); what the program prints with `print()` is the program's own output.
    # Its own lines and diagnostics also show control characters as escapes (`printable`),
    # as pytest's summary does; the program's result and `sys.exit("text")` are as they are.

    def print(self, text: str) -> None:
        _write(self.out, printable(clean_text(text)) + "\n")

    def result(self, text: str) -> None:
        _write(self.out, clean_text(text) + "\n")

    def error(self, text: str, *, raw: bool = False) -> None:
        flush(self.out)
        text = clean_text(text.rstrip("\n"))
        try:
            if _write(self.err, (text if raw else printable(text)) + "\n"):
                flush(self.err)
        except OutputError:  # stderr refused it too: nowhere left to say so
            pass


class OutputError(Exception):
    """Standard output refused our write (a full disk, an I/O error): the run fails with a
    one-line diagnostic naming the output, not the file read or a traceback."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.error = error


def _write(stream: TextIO, text: str) -> bool:
    """Write ``text`` to ``stream``; False when the program closed the stream
    (``sys.stdout.close()``) or its descriptor (``os.close(1)``): what follows is dropped, as
    Python drops what a script prints once the stream is gone, never our traceback."""
    try:
        stream.write(text)
    except ValueError:
        if not _gone(stream):
            raise
        return False
    except BrokenPipeError:  # a gone reader ends the run: see `main`
        raise
    except OSError as exc:
        if exc.errno != errno.EBADF:
            raise OutputError(exc) from exc
        _to_devnull(stream)
        return False
    return True


def _gone(stream: object) -> bool:
    """Whether the program closed ``stream`` (``sys.stdout.close()``) or detached its buffer
    (``sys.stdout.detach()``, after which even ``closed`` raises)."""
    try:
        return bool(getattr(stream, "closed", False))
    except ValueError:
        return True


def release_detached() -> None:
    """Forget a standard stream the program detached (``sys.stdout.detach()``): Python's own
    flush at exit would fail on it, print ``Exception ignored ... detached`` and exit 120
    whatever the run's status."""
    for name in ("stdout", "stderr"):
        try:
            getattr(getattr(sys, name), "closed", None)
        except ValueError:
            setattr(sys, name, None)


def finish(stream: TextIO) -> None:
    """Flush our output at the end of a command: a write error it meets (a full disk) is an
    `OutputError`, a gone reader a `BrokenPipeError`; a stream the program closed is done."""
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.errno != errno.EBADF:
            raise OutputError(exc) from exc
        _to_devnull(stream)
    except Exception:  # closed (`ValueError`) or not a stream: as `flush`
        pass


def _to_devnull(stream: object) -> None:
    """Point ``stream``'s closed descriptor at the null device, so that what its buffer
    still holds is dropped there, not reported by Python's own flush at exit."""
    with contextlib.suppress(Exception):
        null = os.open(os.devnull, os.O_WRONLY)
        fd = stream.fileno()  # type: ignore[attr-defined]
        if null != fd:
            os.dup2(null, fd)
            os.close(null)


def flush(stream: object) -> None:
    """Flush ``stream``, which the program may have closed or replaced (even with ``None``),
    as Python leaves such a stream at exit: no traceback of ours."""
    try:
        stream.flush()  # type: ignore[attr-defined]
    except BrokenPipeError:
        drop_stdout()
    except OSError as exc:
        if exc.errno == errno.EBADF:  # its descriptor closed (`os.close(1)`): as `_write`
            _to_devnull(stream)
    except Exception:
        pass


def stdout_reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has gone (``| head`` stopped reading):
    a `BrokenPipeError` the program's own ``print`` met then ends the run quietly."""
    try:
        fd = sys.__stdout__.fileno()  # type: ignore[union-attr]
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        import select

        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poller.poll(0))
    except Exception:  # no poll (Windows), no descriptor: not known to be gone
        return False


def drop_stdout() -> None:
    """Point standard output at the null device once its reader has gone (``| head``), so
    Python's own flush at exit does not fail again."""
    with contextlib.suppress(Exception):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def render_error(exc: BaseException) -> str:
    """A located Kedi rendering when the error has one, else ``Type: message``."""
    if isinstance(exc.__cause__, OSError) and not getattr(exc, "frames", True):
        return str(getattr(exc, "message", exc))  # the file itself: "cannot read F: reason"
    from pytest_kedi.lang.diagnostics import KediParseError, debug_from_env

    if isinstance(exc, KediParseError):  # KEDI_DEBUG=1: an internal error's traceback too
        return exc.render(debug=debug_from_env())
    render = getattr(exc, "render", None)
    if callable(render):
        return str(render())
    return f"{type(exc).__name__}: {message_text(exc)}"
