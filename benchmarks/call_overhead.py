"""Call overhead of Kedi procedures versus the equivalent Python functions.

Run: ``python benchmarks/call_overhead.py`` (from the repository root; ``--quick`` for a
smoke run). Each common procedure shape is called from Python, interleaved with the same
number of calls to an equivalent Python function; the ratio is ours / Python (best of
several rounds of CPU-bound calls, so machine load affects both sides alike):

* expression return: ``= `a + b```;
* text return: ``= Hello <name>!``;
* two statements: ``[s: int] = `a + b``` then ``= `s * 2```;
* nested call: ``= <add(<a>, <b>)>``;
* fenced Python: a loop in a ``=`` fence vs the same loop in a Python function (the
  per-call overhead is amortised: this measures how fast the fenced code itself runs);
  once on local names only, once reading a parameter, a builtin and a top-level binding
  in the loop (Python reads them as a local, a builtin and a module global).

Exits non-zero when a procedure does not return the expected value.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _results import Result, add_json_argument, emit  # noqa: E402

from pytest_kedi.runtime import load  # noqa: E402

SOURCE = """\
[modulus: int] = `7`

@add(a: int, b: int) -> int:
  = `a + b`

@greet(name: str) -> str:
  = Hello <name>!

@twice(a: int, b: int) -> int:
  [s: int] = `a + b`
  = `s * 2`

@outer(a: int, b: int) -> int:
  = <add(<a>, <b>)>

@loop(n: int) -> int:
  = ```
  total = 0
  for i in range(n):
      total += i * i % 7
  return total
  ```

@loop_reads(n: int) -> int:
  = ```
  total = 0
  for i in range(2_000):
      total += abs(i - n) % modulus
  return total
  ```
"""

CALLS = 50_000
ROUNDS = 5
LOOP_N = 2_000


def add(a: int, b: int) -> int:
    return a + b


def greet(name: str) -> str:
    return f"Hello {name}!"


def twice(a: int, b: int) -> int:
    s = a + b
    return s * 2


def outer(a: int, b: int) -> int:
    return add(a, b)


def loop(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


modulus = 7


def loop_reads(n: int) -> int:
    total = 0
    for i in range(2_000):
        total += abs(i - n) % modulus
    return total


@dataclass(frozen=True)
class Shape:
    name: str
    procedure: str
    python: Callable[..., Any]
    args: tuple[Any, ...]
    goal: float
    per_call: bool = True  # False: the body's own speed (fenced Python)


SHAPES = [
    Shape("expression return", "add", add, (2, 3), 10.0),
    Shape("text return", "greet", greet, ("kedi",), 10.0),
    Shape("two-statement body", "twice", twice, (2, 3), 10.0),
    Shape("nested <call(...)>", "outer", outer, (2, 3), 10.0),
    Shape("fenced Python loop", "loop", loop, (LOOP_N,), 1.1, per_call=False),
    Shape(
        "fenced Python loop reading a parameter, a builtin and a binding",
        "loop_reads",
        loop_reads,
        (LOOP_N // 2,),
        1.1,
        per_call=False,
    ),
]


def _time(func: Callable[..., Any], args: tuple[Any, ...], calls: int) -> float:
    call = func  # local for speed
    start = time.process_time()
    for _ in range(calls):
        call(*args)
    return time.process_time() - start


def measure(shape: Shape, kedi: Callable[..., Any], calls: int, rounds: int) -> Result:
    if not shape.per_call:  # long calls: more, shorter rounds, so the best one is quiet
        calls, rounds = max(calls // 200, 5), rounds * 3
    _time(kedi, shape.args, max(calls // 20, 1))  # warm up
    _time(shape.python, shape.args, max(calls // 20, 1))
    ours = theirs = float("inf")
    for _ in range(rounds):  # interleaved, best of `rounds`: robust to machine noise
        ours = min(ours, _time(kedi, shape.args, calls))
        theirs = min(theirs, _time(shape.python, shape.args, calls))
    ratio = ours / theirs
    unit = "us/call"
    return Result(
        benchmark=f"procedure call: {shape.name}",
        ours=f"{ours / calls * 1e6:.2f} {unit}",
        baseline=f"{theirs / calls * 1e6:.2f} {unit} (Python function)",
        ratio=ratio,
        goal=f"<= {shape.goal:g}x",
        met=ratio <= shape.goal,
        note=(
            f"`@{shape.procedure}` called {calls:,} times from Python vs the equivalent "
            f"Python function, CPU time, best of {rounds} interleaved rounds"
            + ("" if shape.per_call else f"; body loops {LOOP_N:,} times per call")
        ),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke run)")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    calls, rounds = (2_000, 1) if args.quick else (CALLS, ROUNDS)
    program = load("call_overhead.kedi", source=SOURCE, mode="validate")
    results: list[Result] = []
    for shape in SHAPES:
        kedi = program.procedures[shape.procedure]
        got, want = kedi(*shape.args), shape.python(*shape.args)
        if got != want:
            call = f"{shape.procedure}({', '.join(map(repr, shape.args))})"
            print(f"{call} returned {got!r}, not {want!r}: not measured", file=sys.stderr)
            return 1
        results.append(measure(shape, kedi, calls, rounds))
    emit(results, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
