"""Compiled Python kept across pytest runs in pytest's cache directory
(``.pytest_cache/d/kedi-code``).

`CodeCache` keeps compiled units by source file (its path and text), the way pytest keeps
rewritten test modules as ``.pyc`` files, keyed also by the Python and pytest versions
and the compiler's sources (`pytest_kedi.plugin.cachefiles.COMPILER_SOURCES`). A file's
units are read from its parse cache entry when collection bound them there
(`pytest_kedi.plugin.parsecache`: one file per ``.kedi`` file holds its parse and its
Python as collection compiled it, since creating a file is the dearest part of filling a
cache), and from the code cache's own entry for the file, which holds the units compiled
while running (and those of files collection did not parse, such as imported modules).
Workers adding code to one file's entry take turns (a lock file, ``kedi-code.lock``), so
none loses another's code.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import threading
import types
from pathlib import Path
from typing import Any

from pytest_kedi.plugin.cachefiles import compiler_version, exclusive_lock, read_entry, write_entry

__all__ = ["CodeCache"]

LOG = logging.getLogger("pytest_kedi")


class CodeCache:
    """Compiled code kept in ``directory``: one entry per source file (its path and text)
    holding every unit of the file compiled so far, marshalled (a `CodeStore`). A file's
    entry is read once, when its first unit is looked up; the entries of files that gained
    units are written by `flush`, at the end of the session."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.hits = 0
        self._files: dict[object, dict[object, tuple[Any, ...]]] = {}
        self._changed: set[object] = set()
        #: files whose units collection compiled are kept in a parse cache entry: where,
        #: and the units' bytes once the entry has been read for the file's module
        self._bound: dict[object, tuple[str | Path, int, int, bytes | None]] = {}
        self._lock = threading.Lock()  # rows running on threads compile too
        self._folder = os.fspath(directory)
        self._versions: Any = None  # the digest of `compiler_version`, copied for each entry
        #: the entries in ``directory`` when a file's units were first looked up (None: not
        #: listed yet, or not listable): a file without one is not read (see `_units`)
        self._listed: frozenset[str] | None = None

    def bind(self, file: object, entry: str | Path, start: int, end: int) -> None:
        """The units collection compiled for ``file`` are ``entry[start:end]`` (a parse
        cache entry, `ParseCache`): read there when one is first looked up."""
        with self._lock:
            if file not in self._files:
                self._bound[file] = (entry, start, end, None)

    def provide(self, file: object, entry: str | Path, units: bytes) -> None:
        """``units`` are the units of ``file`` in ``entry``, read with the file's module
        (`ParseCache`): the first lookup of one of them decodes these bytes (then drops
        them) instead of reading the entry again."""
        with self._lock:
            bound = self._bound.get(file)
            if bound is not None and bound[0] == entry:
                self._bound[file] = (*bound[:3], units)

    def persisted(self, file: object) -> bytes:
        """The units of ``file`` compiled so far, marshalled, for its parse cache entry,
        which keeps them from now on (`flush` writes the file's own entry only if more are
        compiled)."""
        with self._lock:
            self._changed.discard(file)
            units = self._files.get(file)
            return marshal.dumps(units) if units else b""

    def _entry(self, file: object) -> str:
        versions = self._versions  # the compiler's version hashed once, copied per file
        if versions is None:
            versions = self._versions = hashlib.sha256(compiler_version().encode())
        digest = versions.copy()
        digest.update(repr(file).encode("utf-8", "surrogatepass"))
        return os.path.join(self._folder, digest.hexdigest())

    def _read(self, file: object, *, log: bool = True) -> dict[object, tuple[Any, ...]]:
        entry = self._entry(file)
        return self._decode(entry, read_entry(entry), log=log)

    @staticmethod
    def _decode(
        entry: str | Path, data: bytes | None, *, log: bool
    ) -> dict[object, tuple[Any, ...]]:
        if not data:
            return {}
        try:
            units = marshal.loads(data)
            if not isinstance(units, dict) or not all(
                isinstance(value, tuple) and value and isinstance(value[0], types.CodeType)
                for value in units.values()
            ):
                raise TypeError("not compiled code")
        except Exception as exc:
            if log:
                LOG.debug("pytest-kedi: ignoring corrupt code cache entry %s: %s", entry, exc)
            return {}
        return units

    def _units(self, file: object) -> dict[object, tuple[Any, ...]]:
        units = self._files.get(file)
        if units is None:
            units = self._read(file) if self._may_hold(file) else {}
            bound = self._bound.pop(file, None)
            if bound is not None:  # kept by collection in the file's parse cache entry
                units = {**self._read_bound(*bound), **units}
            self._files[file] = units
        return units

    def _may_hold(self, file: object) -> bool:
        """Whether ``file`` may have an entry of its own: one listing of the directory
        instead of a failed open for each file (collection keeps most files' units in
        their parse cache entry). An entry another process writes after the listing is
        a miss: its units are compiled again, and `flush` merges it."""
        listed = self._listed
        if listed is None:
            try:
                listed = self._listed = frozenset(os.listdir(self._folder))
            except OSError:
                return True
        return os.path.basename(self._entry(file)) in listed

    def _read_bound(
        self, entry: str | Path, start: int, end: int, units: bytes | None
    ) -> dict[object, tuple[Any, ...]]:
        if units is None:  # not read with the file's module: read now
            data = read_entry(entry)
            units = None if data is None else data[start:end]
        return self._decode(entry, units, log=True)

    def get(self, key: tuple[object, ...]) -> tuple[Any, ...] | None:
        file, unit = key
        with self._lock:
            value = self._units(file).get(unit)
            if value is not None:
                self.hits += 1
        return value

    def put(self, key: tuple[object, ...], value: tuple[Any, ...]) -> None:
        file, unit = key
        with self._lock:
            self._units(file)[unit] = value
            self._changed.add(file)

    def flush(self) -> None:
        """Write the entry of every file that gained units, with the units another
        process (an xdist worker) wrote to it meanwhile. Processes flush one at a time
        (a lock file next to the directory): two workers that compiled different units of one
        file would otherwise each write the entry without the other's units."""
        with self._lock:
            changed, self._changed = self._changed, set()
            if not changed:
                return
            with exclusive_lock(self.directory.with_name(self.directory.name + ".lock")):
                for file in changed:
                    units = {**self._read(file, log=False), **self._files[file]}
                    write_entry(self._entry(file), marshal.dumps(units))

    def close(self) -> None:
        """`flush`, then forget every entry read (the session is over; a unit looked up
        later reads its entry again)."""
        self.flush()
        with self._lock:
            self._files.clear()
            self._bound.clear()
            self._listed = None  # (flushed entries are not in it)
