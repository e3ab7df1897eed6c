"""Loading and running a program leaves no cyclic garbage per statement (issue 10 item 12):
each compiled Python unit used to leave a reference cycle behind, so a long program run
triggered cyclic GC passes over its growing heap and grew faster than linearly."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_kedi.evals.executor import IDLE_NAME, IDLE_SECONDS
from pytest_kedi.runtime import load
from pytest_kedi.runtime.procedures import BUILD_AFTER
from pytest_kedi.runtime.pyinterop import PARAMS_AFTER

STATEMENTS = 200


def source(count: int) -> str:
    bindings = [f"[v{i}: int] = `{i} * 2`" for i in range(count)]
    procedures = [f"@p{i}(x: int) -> int:\n  = `x + {i}`\n" for i in range(count)]
    fence = "  ```\n  y = x\n  ```\n"
    blocks = [f"@b{i}(x: int) -> int:\n{fence}  = `x + {i}`\n" for i in range(count)]
    return "\n".join(bindings) + "\n\n" + "\n".join(procedures) + "\n" + "\n".join(blocks)


@pytest.fixture
def no_automatic_gc(tmp_path: Path) -> Iterator[None]:
    # Row worker threads left idle by earlier tests in this process end on their own a few
    # seconds later, and a thread's end leaves garbage of its own: wait for them first.
    for thread in threading.enumerate():
        if thread.name == IDLE_NAME:
            thread.join(IDLE_SECONDS * 2)
    # The first load in a process imports the parser's modules and builds its grammars, which
    # leaves garbage of its own (once per process; again after an in-process pytester run,
    # which drops the modules first imported during it): do that before measuring.
    warm = tmp_path / "warm.kedi"
    warm.write_text(source(1), encoding="utf-8")
    load(warm, mode="validate").procedures["b0"](1)
    # Garbage left by earlier tests can need more than one pass: a finalizer run by one
    # collection (an HTTP client's `__del__`, say) frees its cycle only in the next one.
    for _ in range(10):
        if not gc.collect():
            break
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("mode", ["validate", "run"])
def test_no_cyclic_garbage_per_statement(tmp_path: Path, mode: str, no_automatic_gc: None) -> None:
    path = tmp_path / "big.kedi"
    text = source(STATEMENTS)
    path.write_text(text, encoding="utf-8")
    program = load(path, mode=mode, source=text)  # type: ignore[arg-type]
    if mode == "run":
        program.run()
    assert program.get(f"v{STATEMENTS - 1}") == 2 * (STATEMENTS - 1)
    assert program.procedures[f"b{STATEMENTS - 1}"](1) == STATEMENTS
    # A constant amount (the parser's builder), not one cycle per statement.
    assert gc.collect() < 50


RELEASED = """\
```
def plus(x):
    return x + 40

def get():
    return plus(0)
```

> import: helpers

@answer() -> int:
  = `get() + shout(1)`

@fenced(n: int) -> int:
  = ```
  return sum(range(n)) + len(str(n))
  ```

@eval: answer:
  > data: rows:
    = `[(0, 40)]`
  > metric: exact(rows):
    = `answer() == expected`
"""

HELPERS = """\
> export: shout

@shout(x: int) -> int:
  = `x * 2`
"""


@pytest.mark.parametrize("release", [True, False])
def test_a_released_program_is_freed_without_the_garbage_collector(
    tmp_path: Path, no_automatic_gc: None, release: bool
) -> None:
    # A loaded program is a cycle (its module scope holds its procedures, which hold the
    # scope; the prelude's functions hold their globals); a pytest session releases its
    # programs at its end, so its closing collections and the interpreter's exit do not
    # walk them (issue 9). (A class a program defines is a cycle of Python's own.)
    (tmp_path / "helpers.kedi").write_text(HELPERS, encoding="utf-8")
    path = tmp_path / "main.kedi"
    path.write_text(RELEASED, encoding="utf-8")
    for _ in range(2):  # the first load in a process leaves garbage of its own (imports)
        program = load(path, mode="validate")
        # Called often enough for a generated body and a fence run with its parameters
        # as arguments, each bound to the module's plain globals.
        assert {program.procedures["answer"]() for _ in range(BUILD_AFTER + 1)} == {42}
        assert {program.procedures["fenced"](3) for _ in range(PARAMS_AFTER + 1)} == {4}
        gc.collect()
    if release:
        program.release()
    del program
    freed = gc.collect()
    if release:
        assert freed == 0
    else:  # the cycle this guards against is there
        assert freed > 20


def test_a_file_is_parsed_with_collection_paused_and_its_tree_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading parses the file with cyclic GC paused (the tree's objects would make every
    collection walk the growing tree again), freezes the tree with the load's other
    objects, and leaves GC as it found it."""
    import pytest_kedi.lang.parser as parser

    seen: list[bool] = []
    parse = parser.parse

    def recording(text: str, path: str | None = None) -> object:
        seen.append(gc.isenabled())
        return parse(text, path)

    monkeypatch.setattr(parser, "parse", recording)
    path = tmp_path / "small.kedi"
    text = source(3)
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            program = load(path, mode="validate", source=text)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
        assert program.procedures["p2"](1) == 3
    assert seen == [False, False]
    assert gc.get_freeze_count() == 0  # the load's block ended: nothing stays frozen


class Made:
    """An object the garbage collector tracks."""


def young(obj: object) -> bool:
    """Whether ``obj`` is in the youngest generation."""
    return any(each is obj for each in gc.get_objects(generation=0))


def test_objects_made_without_collection_are_frozen_only_inside_a_freezing_block() -> None:
    from pytest_kedi.runtime.heap import made_without_collection, older_objects_frozen

    enabled = gc.isenabled()
    try:
        for collecting in (True, False):
            (gc.enable if collecting else gc.disable)()
            with made_without_collection():  # outside a block: GC paused, nothing frozen
                assert not gc.isenabled()
                alone = Made()
            assert gc.isenabled() is collecting
            assert gc.get_freeze_count() == 0
            gc.disable()  # no automatic collection moves the objects checked below
            assert young(alone)
            with older_objects_frozen():
                with made_without_collection():
                    made = Made()
                assert not young(made)
                assert gc.get_freeze_count() > 0
                with pytest.raises(ValueError), made_without_collection():
                    failed = Made()
                    raise ValueError("no tree")
                assert young(failed)  # a block that raised froze nothing
                assert gc.isenabled() is False
            assert gc.get_freeze_count() == 0
            assert any(each is made for each in gc.get_objects(generation=2))
    finally:
        (gc.enable if enabled else gc.disable)()


def test_few_young_objects_are_frozen_and_many_are_left_to_the_collector() -> None:
    from pytest_kedi.runtime.heap import freeze_if_few_young, older_objects_frozen

    enabled = gc.isenabled()
    try:
        for collecting in (True, False):
            (gc.enable if collecting else gc.disable)()
            gc.collect()
            alone = Made()
            assert freeze_if_few_young(100) is False  # outside a block: nothing frozen
            assert young(alone)
            with older_objects_frozen():
                gc.disable()  # no automatic collection moves the objects checked below
                kept = [Made() for _ in range(5)]
                assert freeze_if_few_young(50) is True
                assert not any(young(each) for each in kept)
                many = [Made() for _ in range(80)]
                assert freeze_if_few_young(50) is False  # more than the limit: left alone
                assert all(young(each) for each in many)
                (gc.enable if collecting else gc.disable)()
            assert gc.get_freeze_count() == 0
            assert any(each is kept[0] for each in gc.get_objects(generation=2))
    finally:
        (gc.enable if enabled else gc.disable)()
