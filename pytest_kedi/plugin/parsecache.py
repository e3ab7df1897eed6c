"""Parsed ``.kedi`` files kept across pytest runs in pytest's cache directory
(``.pytest_cache/d/kedi-parse``), and the session's two caches (`caches_for`).

`ParseCache` keeps each ``.kedi`` file's parsed and checked module, keyed by the file's
path and content and by the parser's and the compiler's versions
(`pytest_kedi.plugin.cachefiles`: hashes of their own sources, so any change to either
invalidates every entry). IDEs re-collect on every save, so an unchanged file is then
read from the cache instead of being parsed again; collection reads only the file's
outline (its suites' and cases' names and lines), the full module is read when one of
the file's items first needs it. The entry also keeps the file's Python as collection
compiled it when it parsed the file (`pytest_kedi.runtime.casecode.precompile_module`:
test cases assertion-rewritten, expressions, blocks, the prelude), as pytest compiles a
module it collects: one file per ``.kedi`` file, since creating a file is the dearest
part of filling a cache. The code cache (`pytest_kedi.plugin.codecache`) reads that code
from the entry; when the file's module is loaded first, the entry is read once for both.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import io
import logging
import marshal
import operator
import os
import struct
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_kedi.plugin.cachefiles import compiler_version, parser_version, read_entry, write_entry
from pytest_kedi.plugin.codecache import CodeCache
from pytest_kedi.plugin.outline import FileOutline, LazyModule, outline_of

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes
    from pytest_kedi.lang.pycheck import Parsed
    from pytest_kedi.runtime.casecode import MemoryCodeStore
    from pytest_kedi.runtime.pyinterop import CodeStore

__all__ = ["ParseCache", "Precompile", "caches_for"]

LOG = logging.getLogger("pytest_kedi")


@cache
def _node_reducers() -> dict[type, Callable[[Any], tuple[Any, ...]]]:
    """Pickle each AST node as ``(loader, field values)``, its loader the class of the same
    layout in `pytest_kedi.lang.nodeload` that makes it (about twice as fast to load as
    the default state-restoring pickle of a frozen, slotted dataclass, and that about three
    times as fast as its class called with the values)."""

    def reducer(cls: type, names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
        loader = TWINS[cls]
        if len(names) > 1:  # an attrgetter of several names returns their values' tuple
            values = operator.attrgetter(*names)
            return lambda node: (loader, values(node))
        return lambda node: (loader, tuple(getattr(node, name) for name in names))

    from pytest_kedi.lang import nodes
    from pytest_kedi.lang.nodeload import TWINS

    table: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
    for cls in vars(nodes).values():
        if not (inspect.isclass(cls) and dataclasses.is_dataclass(cls)):
            continue
        fields = dataclasses.fields(cls)
        if cls in TWINS and all(f.init for f in fields):  # (not the base class `Node`)
            table[cls] = reducer(cls, tuple(f.name for f in fields))
    return table


def _unpickle(data: bytes) -> Any:
    """Load the pickle ``data``, an acyclic AST: cyclic GC passes during the load would
    only cost time, and inside an eval item's run its objects are frozen with the item's
    (`made_without_collection`)."""
    from pytest_kedi.runtime.heap import made_without_collection

    with made_without_collection():
        return _unpickler()(io.BytesIO(data)).load()


@cache
def _unpickler() -> type:
    """An unpickler that finds the node loaders (`pytest_kedi.lang.nodeload`) by name in a
    dict: pickle's own lookup of a class by module and name costs as much as making
    several nodes, and a file's pickle names each loader it uses once."""
    import pickle

    from pytest_kedi.lang.nodeload import LOADERS

    loaders = {(cls.__module__, cls.__qualname__): cls for cls in LOADERS}
    find = pickle.Unpickler.find_class

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            found = loaders.get((module, name))
            return find(self, module, name) if found is None else found

    return Unpickler


#: An entry of the parse cache: the lengths of its three parts, then the parts.
_PARTS = struct.Struct("<III")

#: Compiles a module's Python into a code store (`precompile_module`, bound to the file).
Precompile = Callable[["nodes.Module", "CodeStore"], None]


class ParseCache:
    """Parsed, checked ``.kedi`` modules kept in ``directory`` (see the module doc).

    An entry holds, after the lengths of its parts: ``(path, outline, code key)`` in
    `marshal`'s format (plain tuples, strings and integers: loaded faster than a pickle,
    and a collection that reads every file from the cache imports no `pickle`), all
    that collection reads; a pickle of the full module, read when an item of the file
    first needs it (`LazyModule`); and the file's Python as collection compiled it
    (marshalled `CodeCache` units, under the code key), read when the run first looks
    for one of them (from the bytes read for the module, when it is loaded first). Code
    and parse live in one file: a cache entry is a file created, and creating a file
    costs more than anything else collection does with it.
    """

    def __init__(self, directory: Path, code: CodeCache | None = None) -> None:
        self.directory = directory
        self.code = code  # where the file's Python is compiled at collection, if anywhere
        self.hits = 0
        self._folder = os.fspath(directory)
        self._versions: Any = None  # the digest of the versions, copied for each entry

    def _entry(self, path: str, data: bytes) -> str:
        """The entry's file: named by the versions, the file's path and its content."""
        versions = self._versions
        if versions is None:
            versions = hashlib.sha256(parser_version().encode())
            versions.update(compiler_version().encode())  # the entry holds compiled code too
            self._versions = versions
        digest = versions.copy()
        digest.update(path.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
        digest.update(data)
        return os.path.join(self._folder, digest.hexdigest())

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
        cached = read_entry(entry)
        if cached is not None:
            try:
                head, module_at, units_at, end = _parts(cached)
                found = marshal.loads(cached[head:module_at])
                if not (type(found) is tuple and len(found) == 3 and found[0] == name):
                    raise TypeError(f"not a parsed module of {name}")
                outline = FileOutline.from_tuple(found[1])
            except Exception as exc:  # a corrupt or foreign entry: parse again
                LOG.debug("pytest-kedi: ignoring corrupt parse cache entry %s: %s", entry, exc)
            else:
                self.hits += 1
                code_key = found[2]
                if self.code is not None and end > units_at:
                    self.code.bind(code_key, entry, units_at, end)
                return outline, LazyModule(self._load, (name, data, entry, code_key), None)
        module, outline = self._parse(name, data, entry, trees, precompile)
        # loaded already; read back from the entry just written if released meanwhile
        # (its code is in `code` already)
        return outline, LazyModule(self._load, (name, data, entry), module)

    def _load(self, name: str, data: bytes, entry: str, code_key: object = None) -> nodes.Module:
        """The full module of the entry written for ``data`` (parsed again if the entry
        has gone or is damaged since collection read it). The units of ``code_key`` in
        the entry go to `code` with it: the entry is not read again for them."""
        from pytest_kedi.lang import nodes
        from pytest_kedi.lang.cache import MODULES

        cached = read_entry(entry)
        if cached is not None:
            try:
                _head, module_at, units_at, end = _parts(cached)
                module = _unpickle(cached[module_at:units_at])
                if not isinstance(module, nodes.Module) or module.path != name:
                    raise TypeError(f"not a parsed module of {name}")
            except Exception as exc:
                LOG.debug("pytest-kedi: ignoring corrupt parse cache entry %s: %s", entry, exc)
            else:
                if self.code is not None and code_key is not None and end > units_at:
                    self.code.provide(code_key, entry, cached[units_at:end])
                # The program loaded for the file reuses it.
                return MODULES.get_or_parse(name, module.source, lambda _s, _p: module)
        return self._parse(name, data, entry)[0]

    def _parse(
        self,
        name: str,
        data: bytes,
        entry: str,
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
        import pickle

        outline = outline_of(module)
        head = marshal.dumps((name, outline.to_tuple(), (str(code_key[0]), str(code_key[1]))))
        stream = io.BytesIO()
        pickler = pickle.Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.dispatch_table = _node_reducers()
        pickler.dump(module)
        pickled = stream.getvalue()
        lengths = _PARTS.pack(len(head), len(pickled), len(units))
        write_entry(entry, lengths + head + pickled + units)
        return module, outline


def _parts(entry: bytes) -> tuple[int, int, int, int]:
    """Where the parts of a parse cache entry start, and where the last one ends."""
    head, module, units = _PARTS.unpack_from(entry)
    start = _PARTS.size
    end = start + head + module + units
    if end != len(entry):
        raise ValueError("truncated or oversized entry")
    return start, start + head, start + head + module, end


def caches_for(
    config: pytest.Config,
) -> tuple[ParseCache | None, CodeCache | MemoryCodeStore]:
    """The session's two caches. The parse cache compiles the Python of the files it
    parses into the code cache. When pytest's cache is disabled (``-p no:cacheprovider``)
    or its directory cannot be created, there is no parse cache, and the code is kept in
    memory for the session."""
    store = getattr(config, "cache", None)
    if store is None:
        return None, _memory_store()
    try:
        compiled = CodeCache(store.mkdir("kedi-code"))
        parsed = ParseCache(store.mkdir("kedi-parse"), compiled)
    except OSError as exc:
        LOG.debug("pytest-kedi: cache directory unavailable: %s", exc)
        return None, _memory_store()
    return parsed, compiled


def _memory_store() -> MemoryCodeStore:
    # The runtime (and pydantic with it) is imported only where it is needed: not when
    # pytest loads the plugin, and not by a collection that reads every file from cache.
    from pytest_kedi.runtime.casecode import MemoryCodeStore

    return MemoryCodeStore()
