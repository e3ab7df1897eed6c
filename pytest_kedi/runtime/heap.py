"""Keeping cyclic garbage collection's full passes off objects that are not new."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["older_objects_frozen"]


@contextlib.contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Keep cyclic GC's full passes off the objects that existed before the block.

    GC stays on for everything the block creates (user code runs in it), but a full
    collection no longer rescans the whole process heap (pytest, pydantic, every program
    loaded so far, ...) each time the block's objects trigger one: loading a program or
    scoring a suite's rows otherwise costs more the bigger the process is. Objects frozen
    here return to the oldest generation afterwards, and garbage among them is collected
    then. Blocks do not nest: inside a frozen block (or one frozen by someone else) this
    does nothing.
    """
    if gc.get_freeze_count():  # frozen already: leave that choice alone
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
