"""Python globals for embedded units: the visible Kedi environment, with lazy top-level
bindings forced only when read (§3.4, §10.4), and a cached module-level view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_kedi.runtime.scope import EPOCH, LazyBinding, Scope

__all__ = ["LazyGlobals", "build_globals", "module_globals", "split_scope"]


class LazyGlobals(dict[str, Any]):
    """Globals whose lazy top-level bindings are forced only when read (§10.4)."""

    __slots__ = ("_forcer",)

    def __init__(self, data: dict[str, Any], forcer: Callable[[LazyBinding, str], Any]) -> None:
        super().__init__(data)
        self._forcer = forcer

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        if type(value) is LazyBinding:
            value = self._forcer(value, key)
            dict.__setitem__(self, key, value)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return self[key]
        return default


def split_scope(scope: Scope) -> tuple[list[Scope], Scope | None]:
    """Scopes below the module level (innermost first), and the module-level scope."""
    inner: list[Scope] = []
    current: Scope | None = scope
    while current is not None and current.kind not in ("module", "prelude"):
        inner.append(current)
        current = current.parent
    return inner, current


def module_globals(scope: Scope) -> dict[str, Any]:
    """Flattened module + prelude bindings, cached until a binding changes.

    The returned dict is shared: callers must not mutate it.
    """
    cached = scope._gcache
    if cached is not None and cached[0] == EPOCH[0] and not scope.volatile:
        return cached[1]
    chain = scope.chain()
    key = EPOCH[0]
    g: dict[str, Any] = {}
    forcer = None
    for s in reversed(chain):
        g.update(s.vars)
        if s.forcer is not None:
            forcer = s.forcer
    if forcer is not None and any(type(v) is LazyBinding for v in g.values()):
        g = LazyGlobals(g, forcer)
    scope._gcache = (key, g)
    return g


def build_globals(scope: Scope) -> dict[str, Any]:
    """Fresh Python globals for a unit: every visible Kedi value, nearest binding wins."""
    inner, outer = split_scope(scope)
    base = module_globals(outer) if outer is not None else {}
    g = LazyGlobals(base, base._forcer) if type(base) is LazyGlobals else dict(base)
    for s in reversed(inner):
        g.update(s.vars)
    return g
