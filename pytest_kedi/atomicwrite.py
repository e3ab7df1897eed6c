"""The one file writer for reports and cassettes: never destroys what a path is.

* a regular file or a missing path: written to a temporary file in the same directory,
  then renamed into place (readers never see a half-written file); the new file keeps
  the existing file's permission bits, or gets ``0666 & ~umask`` like any new file;
* a symbolic link: resolved, and its target replaced as above (the link stays);
* a character device (``/dev/null``, a terminal) or a FIFO: written through directly, never
  replaced (a FIFO without a reader is an error instead of a hang);
* a directory or anything else: an `OSError`, nothing touched.

`AtomicWriter` streams text by these rules (a large report is never held whole in memory);
`write_text_atomic` writes one text. `unsafe_output` says why a report must not be written
to a path at all: a source file, or a file the command reads.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO

__all__ = [
    "AtomicWriter",
    "is_source_file",
    "reason",
    "same_file",
    "unsafe_output",
    "write_text_atomic",
]

#: What a report never overwrites: the project's sources.
_SOURCE_SUFFIXES = (".kedi", ".py")


def is_source_file(path: str | os.PathLike[str]) -> bool:
    """``path`` (or what it links to) is a source file: a ``.kedi`` or ``.py`` file."""
    return (
        Path(path).suffix in _SOURCE_SUFFIXES
        or Path(os.path.realpath(path)).suffix in _SOURCE_SUFFIXES
    )


def same_file(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Both paths name one file (also through ``..``, symbolic links or hard links)."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist yet
        return False


def unsafe_output(
    output: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]] = ()
) -> str | None:
    """Why a report must not be written to ``output`` (None: it may): a source file, or
    one of the files the command reads (``inputs``)."""
    if is_source_file(output):
        return "refusing to overwrite a source file (a .kedi or .py file); choose another path"
    if any(same_file(output, source) for source in inputs):
        return "it is one of the reports read; choose another path"
    return None


def reason(error: OSError) -> str:
    """Why a write failed, in the system's words (``Permission denied``): not the errno
    and the name of the temporary file the writer was filling."""
    return error.strerror or str(error)


#: Smaller texts are gathered into writes of this many bytes; a larger one (a report's
#: batch of rows) is encoded and written in one call, not copied into the buffer first.
#: (A 1 MB buffer copied every batch once more; and on a busy machine, 1 MB writes were
#: measured to cost the kernel up to 8x the system time of ~200 KB ones, per byte.)
_BUFFER = 1 << 16


def _umask() -> int:
    try:  # Linux: read it without changing it (other threads may be creating files)
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _new_file_mode() -> int:
    return 0o666 & ~_umask()


def _open_through(target: Path, *, fifo: bool) -> int:
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    if not fifo:
        return os.open(target, flags)
    try:  # never wait for a reader that may not come
        fd = os.open(target, flags | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "FIFO has no reader", str(target)) from None
        raise
    os.set_blocking(fd, True)
    return fd


def _text_file(fd: int) -> IO[str]:
    """UTF-8 text over ``fd``, newlines untranslated, written in large chunks. A lone
    surrogate (read from a JSON report's ``\\udc80`` escape) is written as that escape's
    text, as pytest-kedi's own reports write it, instead of failing the write."""
    return open(fd, "w", encoding="utf-8", errors="backslashreplace", newline="", buffering=_BUFFER)


#: bytes of the target's name kept in its temporary file's name, which adds 14 more (a
#: dot, a dot and 8 random characters, ``.tmp``): a name close to the system's limit (255
#: bytes) must still be writable
_TEMP_STEM = 200


def _temp_stem(name: str) -> str:
    """``name``, cut to at most `_TEMP_STEM` bytes, for its temporary file's name."""
    while len(os.fsencode(name)) > _TEMP_STEM:
        name = name[: min(len(name) - 1, _TEMP_STEM)]
    return name


class AtomicWriter:
    """Text streamed to ``path`` by the rules of this module: `write` as often as needed,
    then `commit` (the file appears whole, in place) or `abort` (a replaced file is left as
    it was). Opening raises `OSError` for a path that cannot be written."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        target = Path(os.path.realpath(path))
        self._target = target
        self._tmp: str | None = None  # the temporary file, when the target is replaced
        try:
            info = os.stat(target)
        except FileNotFoundError:
            self._start_replace(_new_file_mode())
            return
        kind = info.st_mode
        if stat.S_ISREG(kind):
            self._start_replace(stat.S_IMODE(kind))
        elif stat.S_ISCHR(kind) or stat.S_ISFIFO(kind):
            self._file = _text_file(_open_through(target, fifo=stat.S_ISFIFO(kind)))
        elif stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        else:
            raise OSError(errno.EINVAL, "not a regular file, character device or FIFO", str(path))

    def _start_replace(self, mode: int) -> None:
        target = self._target
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(
            prefix=f".{_temp_stem(target.name)}.", suffix=".tmp", dir=target.parent
        )
        self._mode = mode
        try:
            self._file = _text_file(fd)
        except BaseException:
            os.close(fd)
            self.abort()
            raise

    def write(self, text: str) -> None:
        self._file.write(text)

    def commit(self) -> None:
        """Flush and close; a temporary file then replaces the target."""
        try:
            self._file.close()
            if self._tmp is not None:
                os.chmod(self._tmp, self._mode)
                os.replace(self._tmp, self._target)
                self._tmp = None
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Close without putting anything in place (a temporary file is removed)."""
        file = getattr(self, "_file", None)
        if file is not None:
            try:
                file.close()
            except (OSError, ValueError):
                pass
        if self._tmp is not None:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            self._tmp = None


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` by the rules of this module."""
    writer = AtomicWriter(path)
    try:
        writer.write(text)
    except BaseException:
        writer.abort()
        raise
    writer.commit()
