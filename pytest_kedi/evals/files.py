"""The one file writer for reports: never destroys what a path is.

* a regular file or a missing path: written to a temporary file in the same directory,
  then renamed into place (readers never see a half-written file); the new file keeps
  the existing file's permission bits, or gets ``0666 & ~umask`` like any new file;
* a symbolic link: resolved, and its target replaced as above (the link stays);
* a character device (``/dev/null``, a terminal) or a FIFO: written through directly, never
  replaced (a FIFO without a reader is an error instead of a hang);
* a directory or anything else: an `OSError`, nothing touched.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["write_text_atomic"]


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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _write_through(target: Path, data: bytes, *, fifo: bool) -> None:
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    if fifo:
        try:  # never wait for a reader that may not come
            fd = os.open(target, flags | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise OSError(errno.ENXIO, "FIFO has no reader", str(target)) from None
            raise
        os.set_blocking(fd, True)
    else:
        fd = os.open(target, flags)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _replace(target: Path, data: bytes, mode: int) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` by the rules of this module."""
    target = Path(os.path.realpath(path))
    data = text.encode("utf-8")
    try:
        info = os.stat(target)
    except FileNotFoundError:
        _replace(target, data, _new_file_mode())
        return
    kind = info.st_mode
    if stat.S_ISREG(kind):
        _replace(target, data, stat.S_IMODE(kind))
    elif stat.S_ISCHR(kind) or stat.S_ISFIFO(kind):
        _write_through(target, data, fifo=stat.S_ISFIFO(kind))
    elif stat.S_ISDIR(kind):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    else:
        raise OSError(errno.EINVAL, "not a regular file, character device or FIFO", str(path))
