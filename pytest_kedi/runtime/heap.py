"""Keeping cyclic garbage collection's full passes off objects that are not new."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = [
    "freeze_if_few_young",
    "freeze_new_objects",
    "made_without_collection",
    "older_objects_frozen",
]

_lock = threading.Lock()
_depth = 0  # blocks entered and not left, in every thread
_froze = False  # whether the outermost block froze the heap (nobody else had)


class older_objects_frozen:  # named as the function it replaced: `with older_objects_frozen():`
    """Keep cyclic GC's full passes off the objects that existed before the block.

    GC stays on for everything the block creates (user code runs in it), but a full
    collection no longer rescans the whole process heap (pytest, pydantic, every program
    loaded so far, ...) each time the block's objects trigger one: loading a program or
    scoring a suite's rows otherwise costs more the bigger the process is. Objects frozen
    here return to the oldest generation when the outermost block (in any thread) ends,
    counted towards its next full collection (`_collect_young`), which frees the garbage
    among them. A heap frozen by someone else is left alone.

    Blocks nest (an eval item loads its program and scores its suite inside one): only
    the outermost freezes, and only it asks `gc.get_freeze_count`, which walks every
    frozen object. (A class rather than a generator-based context manager: collection
    enters one for each file and each ``@test:`` suite, and this costs a third as much.)
    """

    __slots__ = ()

    def __enter__(self) -> None:
        global _depth, _froze
        if _depth == 0 and gc.isenabled():  # read without the lock: at worst, one for nothing
            _collect_young()
        with _lock:
            if _depth == 0:
                _froze = gc.get_freeze_count() == 0  # nothing frozen: no walk
                if _froze:
                    gc.freeze()
            _depth += 1

    def __exit__(self, *exc_info: object) -> None:
        global _depth, _froze
        with _lock:
            _depth -= 1
            if _depth == 0 and _froze:
                _froze = False
                gc.unfreeze()


def _collect_young() -> None:
    """Collect the young generations, before a freeze (outside `_lock`: the collection runs
    finalizers, which run any code). Callers skip it when the process turned GC off.

    The collection does two things. Their cyclic garbage is freed: garbage frozen is out
    of every collection's reach until `gc.unfreeze`, and then in the oldest generation
    (pytest's fixture closures leave a dozen objects of it for each item that computes
    one). And their survivors move to the oldest generation as CPython counts them, which
    objects thawed by `gc.unfreeze` are not: the oldest generation's full collection comes
    once it has grown by a quarter of what is counted, so, uncounted, the garbage those
    objects become later (an errored row's exception and its frames) would wait for the
    session's end. The walk costs the young generations' size, which the freeze spares
    every later collection."""
    gc.collect(1)


def freeze_new_objects(*, collect: bool = True) -> None:
    """Freeze, until the outermost `older_objects_frozen` block ends, every object made
    since it began: for objects made in bulk that live on (a suite's row reports, which
    pytest keeps until the session ends). Without it, the young generations' collections
    that follow walk them all once or twice more before they reach the oldest generation,
    where the block's end puts them without a walk. Outside a block that froze the heap
    (none, or one that found it frozen by someone else), nothing is frozen. The young
    generations are collected first (`_collect_young`), unless ``collect`` is false (the
    caller knows its new objects hold no garbage and need not count, or GC is off).
    """
    if collect and _depth and _froze:  # read without the lock, as in `older_objects_frozen`
        _collect_young()
    with _lock:
        if _depth and _froze:
            gc.freeze()


def freeze_if_few_young(limit: int) -> bool:
    """`freeze_new_objects`, when the youngest generation holds at most ``limit`` objects;
    whether it froze. For a loop whose every pass keeps a few objects (a suite's rows keep
    their results), called every so many passes with ``limit`` a little above what those
    passes keep: each young-generation collection would otherwise walk the kept objects,
    and each middle-generation one walk them again, for nothing (they live on): the
    collection before the freeze (`_collect_young`) walks them once. When the passes made
    more, nothing is frozen and the collector runs as usual.
    """
    # The count (allocations less deallocations since the last collection or freeze)
    # first: listing the generation costs its size, which is unbounded when GC is off.
    if gc.get_count()[0] > limit or len(gc.get_objects(0)) > limit:
        return False
    if not (_depth and _froze):  # read without the lock, as in `older_objects_frozen`
        return False
    if gc.isenabled():
        _collect_young()
    with _lock:
        if _depth and _froze:
            gc.freeze()
            return True
    return False


@contextlib.contextmanager
def made_without_collection() -> Iterator[None]:
    """Cyclic GC paused while the block makes objects, which are then frozen with the
    rest of the enclosing `older_objects_frozen` block's objects (`freeze_new_objects`).

    For pytest-kedi's own code that makes many lasting objects and no cyclic garbage, and
    runs no user code: parsing a file into its syntax tree. Each collection the tree's
    objects would trigger walks them (and what the block made before) again, and the
    more there are the more a walk costs: a 10,000-procedure file spent about a fifth of
    its loading in collections. A run that had GC off keeps it off. When the block
    raises, nothing is frozen.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
        freeze_new_objects(collect=False)  # the block's objects hold no garbage
    finally:
        if collecting:
            gc.enable()
