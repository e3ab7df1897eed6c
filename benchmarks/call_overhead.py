"""Call overhead of a typed Kedi procedure versus the equivalent Python function.

Run: ``python benchmarks/call_overhead.py`` (from the repository root; ``--quick`` for a
smoke run). A two-argument ``int`` procedure with a native return is called 100,000 times
from Python, then the same number of calls to ``def add(a: int, b: int) -> int``. Exits
non-zero when the procedure does not return the right value.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_kedi.runtime import load

SOURCE = """\
@add(a: int, b: int) -> int:
  = `a + b`
"""

CALLS = 100_000
ROUNDS = 7


def add(a: int, b: int) -> int:
    return a + b


def _time(func: object, calls: int) -> float:
    call = func  # local for speed
    start = time.perf_counter()
    for i in range(calls):
        call(i, 1)  # type: ignore[operator]
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke run)")
    args = parser.parse_args(argv)
    calls, rounds = (5_000, 2) if args.quick else (CALLS, ROUNDS)
    program = load("call_overhead.kedi", source=SOURCE, mode="validate")
    kedi_add = program.procedures["add"]
    if kedi_add(2, 3) != 5:
        print(f"add(2, 3) returned {kedi_add(2, 3)!r}, not 5: not measured", file=sys.stderr)
        return 1
    _time(kedi_add, 1_000)  # warm up
    _time(add, 1_000)
    kedi_runs: list[float] = []
    python_runs: list[float] = []
    for _ in range(rounds):  # interleaved, best of `rounds`: robust to machine noise
        kedi_runs.append(_time(kedi_add, calls))
        python_runs.append(_time(add, calls))
    kedi_seconds = min(kedi_runs)
    python_seconds = min(python_runs)
    ratio = kedi_seconds / python_seconds
    print(
        f"kedi procedure : {kedi_seconds:.4f} s for {calls:,} calls "
        f"({kedi_seconds / calls * 1e9:.0f} ns/call)"
    )
    print(
        f"python function: {python_seconds:.4f} s for {calls:,} calls "
        f"({python_seconds / calls * 1e9:.0f} ns/call)"
    )
    print(f"ratio          : {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
