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
