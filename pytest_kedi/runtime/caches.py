"""The process-wide state below the pytest plugin, as explicit objects.

Each object here names its owner (the module that fills and reads it) and has a
``reset()``; `reset_all` resets every one of them (tests use it instead of patching
private globals). The parse cache has the same shape: ``pytest_kedi.lang.parser``
owns a `ModuleCache` with ``clear()``, which `reset_all` clears too.

None of them changes what a program computes: they only save work (or, for the
synthetic-model notice, say something once per process).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar

__all__ = [
    "Epochs",
    "OnceNotice",
    "ProcessCache",
    "Resettable",
    "register",
    "registered",
    "reset_all",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
R = TypeVar("R", bound="Resettable")


class Resettable(Protocol):
    """Process-wide state with a documented owner and a way to reset it."""

    name: str
    owner: str

    def reset(self) -> None: ...


_REGISTERED: list[Resettable] = []


def register(state: R) -> R:
    """Add ``state`` to what `reset_all` resets; returns it."""
    _REGISTERED.append(state)
    return state


def registered() -> tuple[Resettable, ...]:
    """Every registered process-wide object, in registration order."""
    return tuple(_REGISTERED)


def reset_all() -> None:
    """Reset every registered process-wide object and the parse cache."""
    from pytest_kedi.lang.cache import MODULES

    MODULES.clear()
    for state in _REGISTERED:
        state.reset()


class ProcessCache(dict[K, V]):
    """A process-wide map from a key to a value built once (a plain `dict`, so reads on
    hot paths cost what a dict lookup costs)."""

    def __init__(self, name: str, owner: str) -> None:
        super().__init__()
        self.name = name
        self.owner = owner
        self._lock = threading.Lock()
        register(self)

    def get_or_build(self, key: K, build: Callable[[K], V]) -> V:
        """The value for ``key``, built under a lock on the first request."""
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self.get(key)
            if found is None:
                found = self[key] = build(key)
        return found

    def reset(self) -> None:
        self.clear()

    def __repr__(self) -> str:
        return f"<ProcessCache {self.name} ({len(self)} entries, owner {self.owner})>"


class Epochs:
    """Counters bumped whenever a module-level (``module``) or prelude (``prelude``)
    binding changes; values cached under an older count are stale. Owner:
    ``pytest_kedi.runtime.scope`` (bumped on rebinding), read by procedure and
    Python-globals caches. ``reset`` bumps both, which invalidates every cached value
    (counting back to zero could make a stale value look fresh)."""

    __slots__ = ("module", "name", "owner", "prelude")

    def __init__(self, name: str, owner: str) -> None:
        self.name = name
        self.owner = owner
        self.module = 0
        self.prelude = 0
        register(self)

    def bump(self, *, prelude: bool = False) -> None:
        self.module += 1
        if prelude:
            self.prelude += 1

    def reset(self) -> None:
        self.bump(prelude=True)


class OnceNotice:
    """A message printed at most once per process (until ``reset``)."""

    def __init__(self, name: str, owner: str) -> None:
        self.name = name
        self.owner = owner
        self._lock = threading.Lock()
        self.shown = False
        register(self)

    def claim(self) -> bool:
        """True the first time it is called (the caller then prints the notice)."""
        with self._lock:
            if self.shown:
                return False
            self.shown = True
            return True

    def reset(self) -> None:
        with self._lock:
            self.shown = False
