"""xdist scaling: eight CPU-bound eval suites in four files, ``pytest -n 2`` vs ``-n 0``.

Usage: python benchmarks/xdist_scaling.py [--rows N] [--work W] [--quick] [--json PATH]

Generates four ``.kedi`` files with two ``@eval:`` suites each. Every row of a suite is
deterministic CPU work in the suite's own Python (a sum over ``range(W)``), so each suite
scores 1.0 and the run does no I/O. Each configuration runs in a fresh ``python -m
pytest`` subprocess (``--kedi-eval -p no:randomly -p no:cacheprovider``) and is measured
twice (the better run counts):

* wall time (``time.perf_counter`` around the subprocess);
* CPU time: user + system time of the finished child processes (``RUSAGE_CHILDREN``), which
  includes the xdist workers (they are waited for by the pytest process, and it by us).

It reports three comparisons: wall time and CPU time of ``-n 2`` against ``-n 0``, and the
start-up overhead of one xdist worker in CPU seconds: ``-n 2`` on an empty selection
(``-k`` matching nothing: workers start, collect, run nothing) minus ``-n 0`` on the same
selection, halved. On a machine shared with other work the wall-time ratio says little
(the workers compete for the same cores); the CPU ratio is the figure to read there.

A run that fails (non-zero exit, or a suite that did not score 1.0) stops the benchmark
with exit status 1; the figures themselves are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import Result, add_json_argument, emit

ROOT = Path(__file__).resolve().parents[1]
FILES = 4
SUITES_PER_FILE = 2
#: the selection that matches no item (start-up overhead)
NOTHING = "no_such_kedi_item_xyz"

SUITE = """\
@eval: busy_{index}:
  > data: sizes:
    = `[{work} + i for i in range({rows})]`
  > metric: settles(sizes):
    = `sum(i * i % 7 for i in range(sizes)) >= 0`
"""


@dataclass(frozen=True, slots=True)
class Run:
    wall_s: float
    cpu_s: float


def write_suites(folder: Path, rows: int, work: int) -> None:
    """Four files of two CPU-bound suites each."""
    for file in range(FILES):
        suites = [
            SUITE.format(index=file * SUITES_PER_FILE + n, rows=rows, work=work)
            for n in range(SUITES_PER_FILE)
        ]
        (folder / f"busy_{file}.kedi").write_text("\n".join(suites), encoding="utf-8")


def _environment() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KEDI_", "PYTEST_")) and k != "TEAMCITY_VERSION"
    }
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if "PYTHONPATH" in env else "")
    return env


def run_pytest(folder: Path, workers: int, *extra: str, expect: int = 0) -> Run:
    """One ``python -m pytest`` run in ``folder``; stops the benchmark if it fails."""
    report = folder / f"report-{workers}.json"
    report.unlink(missing_ok=True)
    args = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
        "-n", str(workers), "--kedi-eval", "--kedi-report", str(report), *extra,
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        args, cwd=folder, env=_environment(), capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != expect:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n", file=sys.stderr)
        raise SystemExit(
            f"benchmark pytest run failed (-n {workers}: exit {done.returncode}, "
            f"expected {expect}); not measured"
        )
    if expect == 0:
        check_report(report, workers)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu)


def check_report(report: Path, workers: int) -> None:
    suites = json.loads(report.read_text(encoding="utf-8"))["suites"]
    scores = sorted((suite["procedure"], suite["score"]) for suite in suites)
    wanted = sorted((f"busy_{i}", 1.0) for i in range(FILES * SUITES_PER_FILE))
    if scores != wanted:
        raise SystemExit(f"benchmark suites did not all score 1.0 under -n {workers}: {scores}")


def best(folder: Path, workers: int, *extra: str, expect: int = 0, repeat: int = 2) -> Run:
    runs = [run_pytest(folder, workers, *extra, expect=expect) for _ in range(repeat)]
    return Run(min(r.wall_s for r in runs), min(r.cpu_s for r in runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40, help="rows per suite (default 40)")
    parser.add_argument(
        "--work", type=int, default=60_000, help="loop length per row (default 60000)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="runs per configuration")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run each")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.work, args.repeat = 3, 2_000, 1
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with tempfile.TemporaryDirectory(prefix="kedi-xdist-") as tmp:
        folder = Path(tmp)
        write_suites(folder, args.rows, args.work)
        serial = best(folder, 0, repeat=args.repeat)
        parallel = best(folder, 2, repeat=args.repeat)
        empty_serial = best(folder, 0, "-k", NOTHING, expect=5, repeat=args.repeat)
        empty_parallel = best(folder, 2, "-k", NOTHING, expect=5, repeat=args.repeat)
    per_worker = max(0.0, empty_parallel.cpu_s - empty_serial.cpu_s) / 2
    sizes = (
        f"{FILES} files x {SUITES_PER_FILE} suites x {args.rows} rows, loop {args.work}; "
        f"best of {args.repeat}; {cores} cores, load average {load:.1f} at the start "
        "(a shared machine: read the CPU ratio)"
    )
    wall_ratio = parallel.wall_s / serial.wall_s
    cpu_ratio = parallel.cpu_s / serial.cpu_s if serial.cpu_s else float("inf")
    results = [
        Result(
            benchmark="xdist wall time, 8 CPU-bound suites",
            ours=f"{parallel.wall_s:.2f} s (-n 2)",
            baseline=f"{serial.wall_s:.2f} s (-n 0)",
            ratio=wall_ratio,
            goal="<= 0.75x (with 2 free cores)",
            met=wall_ratio <= 0.75,
            note=sizes,
        ),
        Result(
            benchmark="xdist CPU time, 8 CPU-bound suites",
            ours=f"{parallel.cpu_s:.2f} CPU s (-n 2)",
            baseline=f"{serial.cpu_s:.2f} CPU s (-n 0)",
            ratio=cpu_ratio,
            goal="<= 1.3x",
            met=cpu_ratio <= 1.3,
            note=sizes,
        ),
        Result(
            benchmark="xdist start-up overhead per worker",
            ours=f"{per_worker:.2f} CPU s/worker",
            baseline=(
                f"{empty_parallel.cpu_s:.2f} CPU s (-n 2, empty selection) vs "
                f"{empty_serial.cpu_s:.2f} CPU s (-n 0)"
            ),
            ratio=empty_parallel.cpu_s / empty_serial.cpu_s if empty_serial.cpu_s else 0.0,
            goal="<= 1.5 CPU s/worker",
            met=per_worker <= 1.5,
            note="(CPU of -n 2 minus -n 0, both selecting nothing with -k) / 2 workers",
        ),
    ]
    emit(results, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
