"""Live Kedi values in running Python units (docs/language.md#python-interop).

A block (or an expression with nested code) runs against its own globals: a copy of the
visible Kedi bindings, so that the names it creates vanish when it ends. While it runs, a
Kedi procedure it calls may rebind one of those bindings (``n += 1`` in the procedure
writes back to the frame that owns ``n``); the block must then read the new value, and
its own later writes must start from it. So every unit running in a thread is listed in
`RUNNING` with its copy, and:

* `sync` (called by `Scope` whenever a binding changes) puts the new value in the copy of
  every running unit that sees that binding (none nearer shadows it), and in the values
  the unit compares with at its end (its write-back baseline), so that the unit does not
  write back a value it did not change;
* `flush` (called when Python calls a Kedi procedure) writes back what the running units
  rebound so far, so that the procedure reads their current values.

Per thread: rows running at once in other threads do not see each other's blocks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime.scope import Scope

__all__ = ["RUNNING", "flush", "sync"]

#: A running unit: its globals (or locals) copy, the scope it was made from, the values
#: of its write-back candidates when it started (None: it writes nothing back) and how to
#: write them back (``write_back(copy, baseline, scope)``; None with no baseline).
Running = tuple[
    dict[str, Any],
    "Scope",
    dict[str, Any] | None,
    "Callable[[dict[str, Any], dict[str, Any], Scope], None] | None",
]


class _Running(threading.local):
    def __init__(self) -> None:
        self.units: list[Running] = []


#: The units running in this thread, innermost last (``RUNNING.units``).
RUNNING = _Running()


def sync(units: list[Running], owner: Scope, name: str, value: Any) -> None:
    """``owner`` rebound ``name`` to ``value``: every running unit that sees that binding
    reads ``value`` from now on."""
    for copy, scope, baseline, _ in units:
        current: Scope | None = scope
        while current is not None:
            if current is owner:
                dict.__setitem__(copy, name, value)
                if baseline is not None and name in baseline:
                    baseline[name] = value
                break
            if name in current.vars:  # a nearer binding shadows it
                break
            current = current.parent


def flush() -> None:
    """Write back what the units running in this thread rebound so far (a Kedi procedure
    is about to run and must read their current values)."""
    for copy, scope, baseline, write_back in RUNNING.units:
        if baseline and write_back is not None:
            write_back(copy, baseline, scope)
