"""Caches kept across pytest runs in pytest's cache directory (``.pytest_cache``).

* `ParseCache`: each ``.kedi`` file's parsed and checked module, keyed by the file's path
  and content and by the parser's and the compiler's versions (hashes of their own
  sources, so any change to either invalidates every entry). IDEs re-collect on every
  save, so an unchanged file is then read from the cache instead of being parsed again;
  collection reads only the file's outline (its suites' and cases' names and lines), the
  full module is read when one of the file's items first needs it. The entry also keeps
  the file's Python as collection compiled it when it parsed the file
  (`pytest_kedi.runtime.casecode.precompile_module`: test cases assertion-rewritten,
  expressions, blocks, the prelude), as pytest compiles a module it collects: one file
  per ``.kedi`` file, since creating a file is the dearest part of filling a cache.
* `CodeCache`: compiled Python by source file (its path and text), the way pytest keeps
  rewritten test modules as ``.pyc`` files, keyed also by the Python and pytest versions
  and the compiler's sources (`COMPILER_SOURCES`). A file's units are read from its parse
  cache entry when collection bound them there, and from the code cache's own entry for
  the file, which holds the units compiled while running (and those of files collection
  did not parse, such as imported modules).

Entries are written atomically (a temporary file renamed into place), so pytest-xdist
workers filling the same cache never read a partial entry; workers adding code to one
file's entry take turns (a lock file, ``kedi-code.lock``), so none loses another's code.
An entry that cannot be read or decoded is ignored with a one-line debug log record
(logger ``pytest_kedi``), and the file is parsed or compiled as if there were no cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import inspect
import io
import itertools
import logging
import marshal
import operator
import os
import pickle
import struct
import sys
import threading
import types
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_kedi.lang import nodes
from pytest_kedi.plugin.outline import FileOutline, LazyModule, outline_of

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang.pycheck import Parsed

__all__ = [
    "COMPILER_SOURCES",
    "CodeCache",
    "ParseCache",
    "caches_for",
    "exclusive_lock",
    "parser_version",
    "sources_hash",
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


@cache
def parser_version() -> str:
    """A hash of every source file of the parser and of the cache's own format
    (computed once per process)."""
    return sources_hash(_PACKAGE, "lang", "plugin/outline.py", "plugin/diskcache.py")


#: The sources whose code decides what a unit compiles to (below the package): a change to
#: any of them invalidates every `CodeCache` entry.
COMPILER_SOURCES = (
    "lang/pycheck.py",
    "runtime/pyinterop.py",
    "runtime/pyanalysis.py",
    "runtime/pypositions.py",
    "runtime/casecode.py",
    "plugin/items.py",
    "plugin/diskcache.py",
)


@cache
def compiler_version() -> str:
    """A hash of the sources that compile case code, and of the Python/pytest versions."""
    hashed = sources_hash(_PACKAGE, *COMPILER_SOURCES)
    return f"{hashed}-{pytest.__version__}-{sys.version}"


@cache
def _node_reducers() -> dict[type, Callable[[Any], tuple[Any, ...]]]:
    """Pickle each AST node as ``(class, field values)``: about twice as fast to load as
    the default state-restoring pickle of a frozen, slotted dataclass."""

    def reducer(cls: type, names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
        if len(names) > 1:  # an attrgetter of several names returns their values' tuple
            values = operator.attrgetter(*names)
            return lambda node: (cls, values(node))
        return lambda node: (cls, tuple(getattr(node, name) for name in names))

    table: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
    for cls in vars(nodes).values():
        if not (inspect.isclass(cls) and dataclasses.is_dataclass(cls)):
            continue
        fields = dataclasses.fields(cls)
        if cls.__module__ == nodes.__name__ and all(f.init for f in fields):
            table[cls] = reducer(cls, tuple(f.name for f in fields))
    return table


def _unpickle(data: bytes) -> Any:
    """Load the pickle ``data``, an acyclic AST: cyclic GC passes during the load would
    only cost time."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        if collecting:
            gc.enable()


_TEMPORARY = itertools.count()


def _atomic_write(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` so that no reader ever sees a partial file (through a
    temporary file named for this process and thread: cheaper than `tempfile.mkstemp`'s
    random names, and as unique)."""
    temporary = target.parent / f".tmp-{os.getpid()}-{threading.get_ident()}-{next(_TEMPORARY)}"
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


def _read(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        LOG.debug("pytest-kedi: ignoring unreadable cache entry %s: %s", target, exc)
        return None


#: An entry of the parse cache: the lengths of its three parts, then the parts.
_PARTS = struct.Struct("<III")

#: Compiles a module's Python into a code store (`precompile_module`, bound to the file).
Precompile = Callable[[nodes.Module, "CodeCache"], None]


class ParseCache:
    """Parsed, checked ``.kedi`` modules kept in ``directory`` (see the module doc).

    An entry holds, after the lengths of its parts: a pickle of ``(path, outline, code
    key)``, all that collection reads; a pickle of the full module, read when an item of
    the file first needs it (`LazyModule`); and the file's Python as collection compiled
    it (marshalled `CodeCache` units, under the code key), read when the run first looks
    for one of them. Code and parse live in one file: a cache entry is a file created,
    and creating a file costs more than anything else collection does with it.
    """

    def __init__(self, directory: Path, code: CodeCache | None = None) -> None:
        self.directory = directory
        self.code = code  # where the file's Python is compiled at collection, if anywhere
        self.hits = 0

    def _entry(self, path: str, data: bytes) -> Path:
        digest = hashlib.sha256(parser_version().encode())
        digest.update(compiler_version().encode())  # the entry holds compiled code too
        digest.update(path.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
        digest.update(data)
        return self.directory / digest.hexdigest()

    def outline(
        self,
        path: Path,
        trees: dict[int, Parsed] | None = None,
        precompile: Precompile | None = None,
    ) -> tuple[FileOutline, LazyModule]:
        """The outline of ``path`` and its lazily loaded module; raise what `parse_file`
        and `check_python` raise. When the file is parsed (not read from the cache):
        ``trees`` is where `check_python` keeps the trees of the module's Python, and
        ``precompile`` compiles that Python into `code`, to be kept in the entry."""
        from pytest_kedi.lang.files import read_source

        name = os.fspath(path)
        data = read_source(name)
        entry = self._entry(name, data)
        cached = _read(entry)
        if cached is not None:
            try:
                head, module_at, units_at, end = _parts(cached)
                found = pickle.loads(cached[head:module_at])
                if not (isinstance(found, tuple) and len(found) == 3 and found[0] == name):
                    raise TypeError(f"not a parsed module of {name}")
                outline = FileOutline.from_tuple(found[1])
            except Exception as exc:  # a corrupt or foreign entry: parse again
                LOG.debug("pytest-kedi: ignoring corrupt parse cache entry %s: %s", entry, exc)
            else:
                self.hits += 1
                if self.code is not None and end > units_at:
                    self.code.bind(found[2], entry, units_at, end)
                return outline, LazyModule(lambda: self._load(name, data, entry), None)
        module, outline = self._parse(name, data, entry, trees, precompile)
        # loaded already; read back from the entry just written if released meanwhile
        return outline, LazyModule(lambda: self._load(name, data, entry), module)

    def _load(self, name: str, data: bytes, entry: Path) -> nodes.Module:
        """The full module of the entry written for ``data`` (parsed again if the entry
        has gone or is damaged since collection read it)."""
        from pytest_kedi.lang.cache import MODULES

        cached = _read(entry)
        if cached is not None:
            try:
                _head, module_at, units_at, _end = _parts(cached)
                module = _unpickle(cached[module_at:units_at])
                if not isinstance(module, nodes.Module) or module.path != name:
                    raise TypeError(f"not a parsed module of {name}")
            except Exception as exc:
                LOG.debug("pytest-kedi: ignoring corrupt parse cache entry %s: %s", entry, exc)
            else:
                # The program loaded for the file reuses it.
                return MODULES.get_or_parse(name, module.source, lambda _s, _p: module)
        return self._parse(name, data, entry)[0]

    def _parse(
        self,
        name: str,
        data: bytes,
        entry: Path,
        trees: dict[int, Parsed] | None = None,
        precompile: Precompile | None = None,
    ) -> tuple[nodes.Module, FileOutline]:
        """Parse and check ``data`` (the content of ``name``), compile its Python into
        `code` (``precompile``), and store both at ``entry``; the module and its outline."""
        from pytest_kedi.lang import check_python
        from pytest_kedi.lang.files import parse_data
        from pytest_kedi.runtime.sourcefile import SourceFile

        module = check_python(parse_data(name, data), trees)
        code_key = (name, SourceFile(name, module.source).digest)  # as the runtime keys it
        units = b""
        if precompile is not None and self.code is not None:
            precompile(module, self.code)
            units = self.code.persisted(code_key)
        stream = io.BytesIO()
        pickler = pickle.Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)
        outline = outline_of(module)
        pickler.dump((name, outline.to_tuple(), code_key))
        head = stream.tell()
        pickler.clear_memo()  # each pickle stands alone
        pickler.dispatch_table = _node_reducers()
        pickler.dump(module)
        pickled = stream.getvalue()
        lengths = _PARTS.pack(head, len(pickled) - head, len(units))
        _atomic_write(entry, lengths + pickled + units)
        return module, outline


def _parts(entry: bytes) -> tuple[int, int, int, int]:
    """Where the parts of a parse cache entry start, and where the last one ends."""
    head, module, units = _PARTS.unpack_from(entry)
    start = _PARTS.size
    end = start + head + module + units
    if end != len(entry):
        raise ValueError("truncated or oversized entry")
    return start, start + head, start + head + module, end


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
        #: files whose units collection compiled are kept in a parse cache entry: where
        self._bound: dict[object, tuple[Path, int, int]] = {}
        self._lock = threading.Lock()  # rows running on threads compile too

    def bind(self, file: object, entry: Path, start: int, end: int) -> None:
        """The units collection compiled for ``file`` are ``entry[start:end]`` (a parse
        cache entry, `ParseCache`): read there when one is first looked up."""
        with self._lock:
            if file not in self._files:
                self._bound[file] = (entry, start, end)

    def persisted(self, file: object) -> bytes:
        """The units of ``file`` compiled so far, marshalled, for its parse cache entry,
        which keeps them from now on (`flush` writes the file's own entry only if more are
        compiled)."""
        with self._lock:
            self._changed.discard(file)
            units = self._files.get(file)
            return marshal.dumps(units) if units else b""

    def _entry(self, file: object) -> Path:
        digest = hashlib.sha256(compiler_version().encode())
        digest.update(repr(file).encode("utf-8", "surrogatepass"))
        return self.directory / digest.hexdigest()

    def _read(self, file: object, *, log: bool = True) -> dict[object, tuple[Any, ...]]:
        entry = self._entry(file)
        return self._decode(entry, _read(entry), log=log)

    @staticmethod
    def _decode(entry: Path, data: bytes | None, *, log: bool) -> dict[object, tuple[Any, ...]]:
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
            units = self._read(file)
            bound = self._bound.pop(file, None)
            if bound is not None:  # kept by collection in the file's parse cache entry
                units = {**self._read_bound(*bound), **units}
            self._files[file] = units
        return units

    def _read_bound(self, entry: Path, start: int, end: int) -> dict[object, tuple[Any, ...]]:
        data = _read(entry)
        return self._decode(entry, None if data is None else data[start:end], log=True)

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
                    _atomic_write(self._entry(file), marshal.dumps(units))

    def close(self) -> None:
        """`flush`, then forget every entry read (the session is over; a unit looked up
        later reads its entry again)."""
        self.flush()
        with self._lock:
            self._files.clear()
            self._bound.clear()


def caches_for(config: pytest.Config) -> tuple[ParseCache | None, CodeCache | None]:
    """The session's two caches, or None each when pytest's cache is disabled
    (``-p no:cacheprovider``) or its directory cannot be created."""
    store = getattr(config, "cache", None)
    if store is None:
        return None, None
    try:
        compiled = CodeCache(store.mkdir("kedi-code"))
        parsed = ParseCache(store.mkdir("kedi-parse"), compiled)
    except OSError as exc:
        LOG.debug("pytest-kedi: cache directory unavailable: %s", exc)
        return None, None
    return parsed, compiled
