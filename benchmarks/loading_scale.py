"""Loading scale: loading a file must cost time and memory linear in its size.

Usage: python benchmarks/loading_scale.py [--small N] [--factor F] [--repeat R] [--quick]

Builds files of N and N*F top-level statements of two shapes, then loads each in
both modes: validation mode (how pytest items and evals load a file: every
declaration processed, top-level bindings left lazy) and a program run (what
``python -m pytest_kedi FILE`` does: load, then run top to bottom). Shapes:

* ``bindings``: typed top-level bindings, each a Python expression over the previous one;
* ``procedures``: typed one-expression procedures.

Every load is of text no earlier load in the process has seen (the names carry the
load's number), as pytest or the CLI loads a file once, so the parser's in-process memo
caches serve neither size. For each shape and mode it prints the CPU time (best of
--repeat) and the peak traced memory (the least of --repeat loads) of the small and large
file, and their ratios; linear loading gives a ratio near F (the goal is at most 1.2 * F).
Exits 1 when a measurement fails (the file does not load or run); the ratios themselves are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _results import Result, add_json_argument, emit  # noqa: E402

from pytest_kedi.runtime import load  # noqa: E402


def bindings_source(count: int, tag: str = "") -> str:
    """``count`` typed bindings, each over the previous one (``tag`` in every name)."""
    lines = [f"[v{tag}0: int] = `0`"]
    lines += [f"[v{tag}{i}: int] = `v{tag}{i - 1} + 1`" for i in range(1, count)]
    return "\n".join(lines) + "\n"


def procedures_source(count: int, tag: str = "") -> str:
    """``count`` typed one-expression procedures (``tag`` in every name)."""
    blocks = [f"@p{tag}0(x: int) -> int:\n  = `x`\n"]
    blocks += [f"@p{tag}{i}(x: int) -> int:\n  = `x + {i}`\n" for i in range(1, count)]
    return "\n".join(blocks)


SHAPES: dict[str, Callable[[int, str], str]] = {
    "bindings": bindings_source,
    "procedures": procedures_source,
}


def load_once(path: Path, source: str, mode: str) -> None:
    """One load from source (the parse cache is bypassed), as pytest or the CLI does."""
    program = load(path, mode="validate" if mode == "validate" else "run", source=source)
    if mode == "run":
        program.run()


def measure(
    paths: list[Path],
    build: Callable[[int, str], str],
    sizes: tuple[int, ...],
    mode: str,
    repeat: int,
) -> list[tuple[float, int]]:
    """(best CPU seconds, least peak traced bytes) of loading a file of each of ``sizes``
    in ``mode``, each of ``repeat`` loads.

    Every load is of text no earlier load in the process has seen (its names carry the
    load's number), as pytest or the CLI loads a file once: the parser's in-process
    memo caches, which hold a few thousand entries, would otherwise serve the small
    file's repeated loads and not the large file's. Timed runs alternate between the
    sizes, so a change in machine load affects both.
    """
    loads = 0

    def fresh(size: int) -> str:
        nonlocal loads
        loads += 1
        return build(size, f"n{loads}_")

    best = [float("inf")] * len(sizes)
    for _ in range(repeat):
        for i, (path, size) in enumerate(zip(paths, sizes, strict=True)):
            source = fresh(size)
            gc.collect()
            start = time.process_time()
            load_once(path, source, mode)
            best[i] = min(best[i], time.process_time() - start)
    # The peak moves with what earlier loads left (the memo caches' entries they evicted,
    # garbage the cyclic collector had not reached yet): 2.8 to 5.5 MB for the same small
    # file, one load after another. The least of `repeat` loads of each size, alternating,
    # as for the time.
    peaks = [sys.maxsize] * len(sizes)
    for _ in range(repeat):
        for i, (path, size) in enumerate(zip(paths, sizes, strict=True)):
            source = fresh(size)
            gc.collect()
            tracemalloc.start()
            try:
                load_once(path, source, mode)
                peaks[i] = min(peaks[i], tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
    return list(zip(best, peaks, strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000, help="statements in the small file")
    parser.add_argument("--factor", type=int, default=10, help="large file = small * factor")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per measurement")
    parser.add_argument("--quick", action="store_true", help="100 vs 1,000 statements, 1 run")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.small, args.repeat = 100, 1
    if args.small < 1 or args.factor < 2 or args.repeat < 1:
        parser.error("--small >= 1, --factor >= 2 and --repeat >= 1 are required")
    sizes = (args.small, args.small * args.factor)
    goal = 1.2 * args.factor
    failures = 0
    worst = 0.0
    results: list[Result] = []
    print(f"loading scale: {sizes[0]:,} vs {sizes[1]:,} statements (goal: ratio <= {goal:g})")
    header = f"{'shape':<11} {'mode':<9} {'time':>17} {'ratio':>6} {'peak memory':>21} {'ratio':>6}"
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for shape, build in SHAPES.items():
            for mode in ("validate", "run"):
                paths = [Path(tmp, f"{shape}_{size}.kedi") for size in sizes]
                try:
                    for path, size in zip(paths, sizes, strict=True):
                        path.write_text(build(size, ""), encoding="utf-8")
                    measured = measure(paths, build, sizes, mode, args.repeat)
                except Exception as exc:  # report and go on with the other measurements
                    failures += 1
                    message = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
                    print(f"{shape:<11} {mode:<9} FAILED: {type(exc).__name__}: {message}")
                    continue
                (t_small, m_small), (t_large, m_large) = measured
                t_ratio = t_large / max(t_small, 1e-6)
                m_ratio = m_large / max(m_small, 1)
                worst = max(worst, t_ratio, m_ratio)
                times = f"{t_small:.3f}s/{t_large:.3f}s"
                mems = f"{m_small / 1e6:.1f}MB/{m_large / 1e6:.1f}MB"
                ratios = f"{t_ratio:>5.1f}x {mems:>21} {m_ratio:>5.1f}x"
                print(f"{shape:<11} {mode:<9} {times:>17} {ratios}")
                results.append(
                    Result(
                        benchmark=f"loading {shape}, {mode} ({sizes[1]:,} vs {sizes[0]:,})",
                        ours=f"{t_large:.3f} s, {m_large / 1e6:.1f} MB peak",
                        baseline=f"{t_small:.3f} s, {m_small / 1e6:.1f} MB peak (small file)",
                        ratio=max(t_ratio, m_ratio),
                        goal=f"<= {goal:g}x (linear)",
                        met=max(t_ratio, m_ratio) <= goal,
                        note=(
                            f"the larger of the CPU-time ratio ({t_ratio:.1f}x, best of "
                            f"{args.repeat}) and the tracemalloc peak ratio ({m_ratio:.1f}x, "
                            f"least of {args.repeat}); "
                            "each load of text no earlier load in the process has seen, so "
                            "the parser's memo caches serve neither size"
                        ),
                    )
                )
    verdict = "within" if worst <= goal else "OVER"
    print(f"worst ratio {worst:.1f}x: {verdict} the goal of {goal:g}x")
    if failures:
        print(f"{failures} measurement(s) failed", file=sys.stderr)
        return 1
    emit(results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
