"""What collection needs of a ``.kedi`` file, and its full AST loaded on first use.

Collection only names and locates items, so the parse cache (`parsecache.ParseCache`)
gives it a `FileOutline`: each suite's kind, name, header line and position in the
module, and each case's name and line. A file's `LazyModule` loads the full module
(from the cache entry, or by parsing the collected text) when one of its items first
needs a node (when it runs or is reported); all items of the file share it, and the
program loaded for the file reuses it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes

__all__ = ["CaseOutline", "FileOutline", "LazyModule", "SuiteOutline", "outline_of"]


#: `FileOutline.to_tuple`'s shape: the suites ``(kind, name, line, index, cases)``, each
#: case ``(name, line)``, and the ``> auto:`` procedures' names.
_SuiteTuple = tuple[str, str, int, int, tuple[tuple[str, int], ...]]
OutlineTuple = tuple[tuple[_SuiteTuple, ...], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class CaseOutline:
    name: str
    line: int  # 1-based line of the ``> case:`` header


@dataclass(frozen=True, slots=True)
class SuiteOutline:
    kind: Literal["eval", "test"]
    name: str
    line: int  # 1-based line of the suite's header
    index: int  # position of the suite in ``Module.body``
    cases: tuple[CaseOutline, ...] = ()


@dataclass(frozen=True, slots=True)
class FileOutline:
    """The suites of one file in source order, and the names of its ``> auto:``
    procedures (whose generated tests its ``prog.cache.kedi`` may hold)."""

    suites: tuple[SuiteOutline, ...]
    autos: tuple[str, ...] = ()

    def to_tuple(self) -> OutlineTuple:
        """Plain tuples of exact ``str`` and ``int`` values (what the cache stores, with
        `marshal`: the fastest shape to load)."""
        suites = tuple(
            (
                str(s.kind),
                str(s.name),
                int(s.line),
                int(s.index),
                tuple((str(c.name), int(c.line)) for c in s.cases),
            )
            for s in self.suites
        )
        return (suites, tuple(str(a) for a in self.autos))

    @classmethod
    def from_tuple(cls, data: object) -> FileOutline:
        """The inverse of `to_tuple`; raise `TypeError`/`ValueError` on any other shape."""
        if not (type(data) is tuple and len(data) == 2):
            raise TypeError("not a file outline")
        given, autos = data
        suites = []
        for kind, name, line, index, cases in given:
            if (kind != "eval" and kind != "test") or type(name) is not str:
                raise ValueError("not a suite outline")
            if type(line) is not int or type(index) is not int:
                raise ValueError("not a suite outline")
            if cases:
                outlined = tuple([CaseOutline(str(case), int(at)) for case, at in cases])
                suites.append(SuiteOutline(kind, name, line, index, outlined))
            else:
                suites.append(SuiteOutline(kind, name, line, index))
        if type(autos) is not tuple or (autos and not all(type(a) is str for a in autos)):
            raise ValueError("not a file outline")
        return cls(tuple(suites), autos)


def outline_of(module: nodes.Module) -> FileOutline:
    from pytest_kedi.lang import nodes

    suites: list[SuiteOutline] = []
    for index, stmt in enumerate(module.body):
        if isinstance(stmt, nodes.EvalSuite):
            suites.append(SuiteOutline("eval", stmt.name, stmt.span.start_line, index))
        elif isinstance(stmt, nodes.TestSuite):
            cases = tuple(CaseOutline(c.name, c.span.start_line) for c in stmt.cases)
            suites.append(SuiteOutline("test", stmt.name, stmt.span.start_line, index, cases))
    autos = tuple(p.name for p in module.procedures if p.is_auto)
    return FileOutline(tuple(suites), autos)


@functools.cache
def _suite_nodes() -> Mapping[str, type[nodes.EvalSuite] | type[nodes.TestSuite]]:
    """A suite outline's kind -> its node class (`pytest_kedi.lang.nodes`, imported on
    first use; items read their suite often: no import statement each time)."""
    from pytest_kedi.lang import nodes

    return {"eval": nodes.EvalSuite, "test": nodes.TestSuite}


class LazyModule:
    """The full module of one collected file, loaded once, on first use.

    ``load`` returns the module of exactly the collected source (the cache entry of that
    content, or a parse of it); the loaded module is checked against the outline the
    items were made from. Its ``source`` is the text collected: items fail when the file
    has changed since. ``load(*args)`` loads it (a function and its arguments rather
    than a closure: collection makes one per file, and keeps it).
    """

    __slots__ = ("_args", "_load", "_lock", "_module")

    def __init__(
        self,
        load: Callable[..., nodes.Module],
        args: tuple[object, ...],
        module: nodes.Module | None,
    ) -> None:
        self._load = load
        self._args = args
        self._module = module
        self._lock = threading.Lock()

    def loaded(self) -> nodes.Module | None:
        """The module if it is loaded already (collection has just parsed the file)."""
        return self._module

    def module(self) -> nodes.Module:
        with self._lock:
            if self._module is None:
                self._module = self._load(*self._args)
            return self._module

    def release(self) -> None:
        """Forget the loaded module (it loads again if asked for)."""
        with self._lock:
            self._module = None

    def suite(self, outline: SuiteOutline) -> nodes.EvalSuite | nodes.TestSuite:
        """The suite node that ``outline`` describes."""
        node = self.module().body[outline.index]
        expected = _suite_nodes()[outline.kind]
        if not isinstance(node, expected) or node.name != outline.name:
            raise LookupError(f"suite {outline.name!r} is not at its collected position")
        return node
