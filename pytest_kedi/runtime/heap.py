"""Cyclic garbage collection around bulk work: `older_objects_frozen`."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["older_objects_frozen"]


@contextlib.contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Keep cyclic GC's passes off the objects that existed before the block started.

    Used around loading a program and around scoring a suite's rows. GC stays on for
    everything created inside (user code runs there: preludes, imported modules, a
    program run, every row), but a collection no longer rescans the whole process heap
    (pytest, pydantic, ...) each time the work grows, which made loading superlinear and
    cost scoring a large share of its time. Objects frozen here return to the oldest
    generation afterwards.
    """
    if gc.get_freeze_count():  # someone else froze the heap: leave their choice alone
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
