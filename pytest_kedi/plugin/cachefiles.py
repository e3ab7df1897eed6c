"""What the plugin's caches in pytest's cache directory (``.pytest_cache``) share: the
versions their entries are keyed on, and how entry files are read, written and locked.

The parse cache (`pytest_kedi.plugin.parsecache`) and the code cache
(`pytest_kedi.plugin.codecache`) key their entries on hashes of the sources that decide
what an entry holds (`parser_version`, `compiler_version`), so any change to those
sources invalidates every entry. Entries are written atomically (`write_entry`: a
temporary file renamed into place), so pytest-xdist workers filling the same cache never
read a partial entry; processes that read an entry and write it back take turns
(`exclusive_lock`). An entry that cannot be read (`read_entry`) or decoded is ignored
with a one-line debug log record (logger ``pytest_kedi``), and the work is done as if
there were no cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import sys
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from pytest_kedi.fileread import read_bytes

__all__ = [
    "COMPILER_SOURCES",
    "PARSER_SOURCES",
    "compiler_version",
    "exclusive_lock",
    "parser_version",
    "read_entry",
    "sources_hash",
    "write_entry",
]

LOG = logging.getLogger("pytest_kedi")
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
_PACKAGE = Path(__file__).resolve().parents[1]


def sources_hash(root: Path, *parts: str) -> str:
    """A hash of the ``.py`` and ``.lark`` files at ``parts`` (files, or folders searched
    recursively) below ``root``, and of the Python version."""
    digest = hashlib.sha256(f"{sys.version_info[:2]}".encode())
    for part in parts:
        where = root / part
        files = sorted(where.rglob("*")) if where.is_dir() else [where]
        for file in files:
            if file.is_file() and file.suffix in (".py", ".lark"):
                digest.update(file.relative_to(root).as_posix().encode())
                digest.update(b"\0")
                digest.update(file.read_bytes())
    return digest.hexdigest()[:20]


#: The sources of the parser and of the parse cache's format (below the package): a change
#: to any of them invalidates every `ParseCache` entry.
PARSER_SOURCES = ("lang", "plugin/outline.py", "plugin/parsecache.py", "plugin/cachefiles.py")


@cache
def parser_version() -> str:
    """A hash of `PARSER_SOURCES` (computed once per process)."""
    return sources_hash(_PACKAGE, *PARSER_SOURCES)


#: The sources whose code decides what a unit compiles to, and the code cache's format
#: (below the package): a change to any of them invalidates every `CodeCache` entry (and
#: every `ParseCache` entry, which holds compiled code too).
COMPILER_SOURCES = (
    "lang/pycheck.py",
    "lang/pycompile.py",
    "lang/freshstack.py",
    "runtime/pyinterop.py",
    "runtime/pyanalysis.py",
    "runtime/pypositions.py",
    "runtime/casecode.py",
    "plugin/items.py",
    "plugin/codecache.py",
    "plugin/cachefiles.py",
)


@cache
def compiler_version() -> str:
    """A hash of the sources that compile case code, of the Python/pytest versions and of
    Python's ``-O`` level (``python -O`` compiles asserts out, as pytest's ``.pyc`` files
    of ``-O`` runs are kept apart)."""
    hashed = sources_hash(_PACKAGE, *COMPILER_SOURCES)
    return f"{hashed}-{pytest.__version__}-{sys.version}-O{sys.flags.optimize}"


_TEMPORARY = itertools.count()


def write_entry(target: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``target`` so that no reader ever sees a partial file (through a
    temporary file named for this process and thread: cheaper than `tempfile.mkstemp`'s
    random names, and as unique)."""
    name = f".tmp-{os.getpid()}-{threading.get_ident()}-{next(_TEMPORARY)}"
    temporary = os.path.join(os.path.dirname(target), name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY
    try:
        try:
            handle = os.open(temporary, flags, 0o600)
        except FileExistsError:  # left by a process that had this identifier and crashed
            os.unlink(temporary)
            handle = os.open(temporary, flags, 0o600)
        try:
            with open(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:  # a read-only or full cache directory: run without it
        LOG.debug("pytest-kedi: cannot write cache entry %s: %s", target, exc)


def read_entry(target: str | os.PathLike[str]) -> bytes | None:
    """The content of the entry ``target``, or None when it is missing or unreadable."""
    try:
        return read_bytes(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        LOG.debug("pytest-kedi: ignoring unreadable cache entry %s: %s", target, exc)
        return None


@contextlib.contextmanager
def exclusive_lock(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``lock`` (made when missing) for the block,
    shared with every other process (pytest-xdist workers flushing at the same time).
    Where no lock can be taken the block runs anyway: a lost update is a cache miss."""
    try:
        stream = open(lock, "a+b")  # noqa: SIM115 - closed below, after the unlock
    except OSError as exc:
        LOG.debug("pytest-kedi: cannot lock %s: %s", lock, exc)
        yield
        return
    with stream:
        locked = _lock_file(stream.fileno(), exclusive=True)
        try:
            yield
        finally:
            if locked:
                _lock_file(stream.fileno(), exclusive=False)


def _lock_file(descriptor: int, *, exclusive: bool) -> bool:
    """Take (``exclusive``) or release the lock of an open file; False when it failed."""
    try:
        if sys.platform == "win32":  # pragma: no cover - Windows
            import msvcrt

            os.lseek(descriptor, 0, os.SEEK_SET)
            mode = msvcrt.LK_LOCK if exclusive else msvcrt.LK_UNLCK
            msvcrt.locking(descriptor, mode, 1)
        else:
            import fcntl

            fcntl.flock(descriptor, fcntl.LOCK_EX if exclusive else fcntl.LOCK_UN)
    except OSError as exc:
        LOG.debug("pytest-kedi: cache lock unavailable: %s", exc)
        return False
    return True
