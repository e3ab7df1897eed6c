"""Python globals for embedded units: the visible Kedi environment, with lazy top-level
bindings forced only when read (docs/language.md#python-interop, #lazy-bindings), and a live
module-level view.

A validation-mode module keeps its unforced bindings out of the globals table: every
way Python can read a global (a function's global lookup, a class body or ``exec``
string's name lookup, ``globals()[name]``, ``globals().get``, iteration) finds them
through ``__missing__`` of the globals or of its ``__builtins__`` mapping, which forces
them, so Python code never sees the internal placeholder object.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, KeysView
from types import CodeType
from typing import Any

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.runtime.pyanalysis import INTROSPECTION
from pytest_kedi.runtime.pyerrors import LookupFailure, python_error
from pytest_kedi.runtime.scope import EPOCHS, MISSING, LazyBinding, Scope

__all__ = [
    "LazyDeleted",
    "LazyGlobals",
    "build_globals",
    "global_reads",
    "reading_globals",
    "module_globals",
    "raw_global",
    "same_binding",
    "split_scope",
]

Forcer = Callable[[LazyBinding, str], Any]


def _forced(forcer: Forcer, lazy: LazyBinding, key: str) -> Any:
    """``forcer(lazy, key)``, with a failure that is a ``KeyError`` raised as a
    `LookupFailure`: Python's name lookup takes a ``KeyError`` from a globals or builtins
    mapping for "no such name" and raises ``NameError`` at the reader instead, which would
    hide a binding's own ``KeyError`` (``[cfg] = `d["b"]` `` read as ``cfg``) and its line."""
    try:
        return forcer(lazy, key)
    except KeyError as exc:
        error = exc if isinstance(exc, KediExecutionError) else python_error(exc)
    raise LookupFailure(error).with_traceback(error.__traceback__)


class LazyDeleted(KeyError):
    """``del globals()["n"]`` of a lazy binding not forced yet (`pyrun` reports it as the
    deletion of a Kedi binding it is, without forcing it)."""


class _LazyBuiltins(dict[str, Any]):
    """The builtins of a validation-mode unit: a name not found as a global or builtin
    may be an unforced top-level binding (Python's name lookup in class bodies and
    ``exec`` strings reads the globals table directly, then the builtins mapping)."""

    __slots__ = ("_forcer", "_pending")

    def __init__(self, pending: dict[str, LazyBinding], forcer: Forcer) -> None:
        super().__init__(builtins.__dict__)
        for name in pending:
            dict.pop(self, name, None)
        self._pending = pending
        self._forcer = forcer

    def __missing__(self, key: str) -> Any:
        lazy = self._pending.get(key)
        if lazy is None:
            raise KeyError(key)
        return _forced(self._forcer, lazy, key)


class LazyGlobals(dict[str, Any]):
    """Globals whose lazy top-level bindings are forced only when read
    (docs/language.md#lazy-bindings).

    The table holds every value already known; ``_pending`` maps the names of unforced
    bindings to their lazy binding (an entry shadowed by the table is stale and unused).
    """

    __slots__ = ("_builtins", "_forcer", "_pending", "_plain")

    def __init__(
        self,
        data: dict[str, Any],
        pending: dict[str, LazyBinding],
        forcer: Forcer,
        builtins_: _LazyBuiltins | None = None,
    ) -> None:
        super().__init__(data)
        self._pending = pending
        self._forcer = forcer
        self._builtins = builtins_ if builtins_ is not None else _LazyBuiltins(pending, forcer)
        # The table again as a plain dict, kept in step, for units that read no unforced
        # binding (`settled`): Python's global and builtin lookups are then its own.
        self._plain: dict[str, Any] = dict(data)
        self._plain["__builtins__"] = builtins.__dict__
        dict.__setitem__(self, "__builtins__", self._builtins)

    @classmethod
    def flatten(cls, layers: list[dict[str, Any]], forcer: Forcer) -> LazyGlobals:
        """Merge ``layers`` (outermost first), keeping lazy bindings out of the table."""
        table: dict[str, Any] = {}
        pending: dict[str, LazyBinding] = {}
        for layer in layers:
            for name, value in layer.items():
                if type(value) is LazyBinding:
                    table.pop(name, None)
                    pending[name] = value
                else:
                    table[name] = value
        return cls(table, pending, forcer)

    def child(self) -> LazyGlobals:
        """A copy for one unit's run, sharing the pending bindings and builtins."""
        copy = dict.__new__(LazyGlobals)
        dict.update(copy, dict.items(self))  # the table alone, in one copy
        copy._pending, copy._forcer, copy._builtins = self._pending, self._forcer, self._builtins
        copy._plain = self._plain
        return copy

    def empty(self) -> None:
        """Forget every binding: the table, its plain twin and the unforced bindings (a
        released program's cycles are broken here)."""
        self._pending.clear()
        self._plain.clear()
        dict.clear(self)

    def settled(self, names: frozenset[str]) -> bool:
        """Whether none of ``names`` is an unforced binding (then `_plain` answers every
        read of them as this table would)."""
        pending = self._pending
        if pending.keys().isdisjoint(names):
            return True
        return all(dict.__contains__(self, name) for name in names if name in pending)

    def assign(self, name: str, value: Any) -> None:
        """Track a rebinding of the module scope this view flattens."""
        if type(value) is LazyBinding:
            dict.pop(self, name, None)
            self._plain.pop(name, None)
            self._pending[name] = value
            dict.pop(self._builtins, name, None)
        else:
            dict.__setitem__(self, name, value)
            self._plain[name] = value

    # -- reads: an unforced binding is forced by the read ---------------------------------
    def __missing__(self, key: str) -> Any:
        lazy = self._pending.get(key)
        if lazy is None:
            # A global lookup falls back to the builtins anyway; answering here spares
            # raising and catching a KeyError for every builtin a unit reads.
            return dict.__getitem__(self._builtins, key)
        value = _forced(self._forcer, lazy, key)
        dict.__setitem__(self, key, value)
        self._plain[key] = value
        return value

    def _unforced(self) -> list[str]:
        return [name for name in self._pending if not dict.__contains__(self, name)]

    def _force_all(self) -> None:
        for name in self._unforced():
            self[name]

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key) or key in self._pending:
            return self[key]
        return default

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self._pending

    def keys(self) -> KeysView[str]:  # type: ignore[override]
        names = dict.fromkeys(dict.keys(self))
        names.update(dict.fromkeys(self._pending))
        return names.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return dict.__len__(self) + len(self._unforced())

    def values(self) -> Any:
        self._force_all()
        return dict.values(self)

    def items(self) -> Any:
        self._force_all()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._force_all()
        return dict(dict.items(self))

    def pop(self, key: str, *default: Any) -> Any:
        if key in self._pending and not dict.__contains__(self, key):
            self[key]
        return dict.pop(self, key, *default)

    def __delitem__(self, key: str) -> None:
        if key in self._pending and not dict.__contains__(self, key):
            raise LazyDeleted(key)
        dict.__delitem__(self, key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key in self:
            return self[key]
        dict.__setitem__(self, key, default)
        return default

    def __repr__(self) -> str:
        self._force_all()
        return dict.__repr__(self)


def raw_global(g: dict[str, Any], name: str) -> Any:
    """The binding of ``name`` in ``g`` without forcing (a lazy binding, or MISSING)."""
    value = dict.get(g, name, MISSING)
    if value is MISSING and type(g) is LazyGlobals:
        return g._pending.get(name, MISSING)
    return value


def same_binding(old: Any, new: Any) -> bool:
    """Whether ``new`` is ``old`` or the value the lazy binding ``old`` produced."""
    if new is old:
        return True
    return (
        type(old) is LazyBinding
        and old.values is not None
        and any(v is new for v in old.values.values())
    )


def reading_globals(base: dict[str, Any], reads: frozenset[str] | None) -> dict[str, Any]:
    """``base`` (a `module_globals` table) for a unit that reads only ``reads`` as globals
    (`global_reads`): its plain-dict twin when none of them is an unforced binding.
    Callers must not mutate it."""
    if type(base) is LazyGlobals and reads is not None and base.settled(reads):
        return base._plain
    return base


def global_reads(code: CodeType, assigned: frozenset[str]) -> frozenset[str] | None:
    """Every name ``code`` (with its nested code) can look up as a global, with its
    top-level ``assigned`` names (a block variant reads them as globals); None when it
    calls an `INTROSPECTION` builtin (it may read any name)."""
    names: set[str] = set(assigned)
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(c for c in current.co_consts if type(c) is CodeType)
    if not INTROSPECTION.isdisjoint(names):
        return None
    return frozenset(names)


def split_scope(scope: Scope) -> tuple[list[Scope], Scope | None]:
    """Scopes below the module level (innermost first), and the module-level scope."""
    inner: list[Scope] = []
    current: Scope | None = scope
    while current is not None and current.kind not in ("module", "prelude"):
        inner.append(current)
        current = current.parent
    return inner, current


def module_globals(scope: Scope) -> dict[str, Any]:
    """Flattened module + prelude bindings.

    The returned dict is shared and kept up to date as the module scope is rebound
    (so building it once per module keeps loading linear): callers must not mutate it.
    """
    cached = scope._gcache
    if cached is not None and cached[0] == EPOCHS.prelude and not scope.volatile:
        return cached[1]
    chain = scope.chain()
    key = EPOCHS.prelude
    forcer = None
    for s in chain:
        if s.forcer is not None:
            forcer = s.forcer
            break
    layers = [s.vars for s in reversed(chain)]
    g: dict[str, Any]
    if forcer is not None:
        g = LazyGlobals.flatten(layers, forcer)
    else:
        g = {}
        for layer in layers:
            g.update(layer)
    scope._gcache = (key, g)
    return g


def build_globals(scope: Scope, reads: frozenset[str] | None = None) -> dict[str, Any]:
    """Fresh Python globals for a unit: every visible Kedi value, nearest binding wins.

    ``reads`` are the global names the unit can read (`global_reads`): when none of them
    is an unforced lazy binding the globals are a plain dict, so Python's own lookups (and
    their specializations) serve the unit's global and builtin reads."""
    inner, outer = split_scope(scope)
    base = module_globals(outer) if outer is not None else {}
    table = reading_globals(base, reads)
    g = table.child() if isinstance(table, LazyGlobals) else dict(table)
    for s in reversed(inner):
        g.update(s.vars)
        if s.hides:
            g = _hidden(g, [name for name, value in s.vars.items() if value is MISSING])
    return g


def _hidden(g: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """``g`` without ``names`` (bound to MISSING by a scope that `hides` them): reading
    one is Python's own `NameError`, whatever an outer scope binds."""
    if type(g) is not LazyGlobals:
        for name in names:
            del g[name]
        return g
    table = {k: v for k, v in dict.items(g) if k not in names and k != "__builtins__"}
    pending = {k: v for k, v in g._pending.items() if k not in names}
    return LazyGlobals(table, pending, g._forcer)
