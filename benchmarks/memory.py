"""Memory per row of a large deterministic suite run with the JSON report and the rows JSONL.

Usage: python benchmarks/memory.py [--rows N] [--quick]

Runs ``pytest --kedi-eval --kedi-report R --kedi-rows-jsonl J`` on a suite of N rows
(100,000) and of 1 row, each in a fresh process that reports its own peak resident set
size (``ru_maxrss``). Memory per row = (peak with N rows - peak with 1 row - the
dataset's own size) / N, where the dataset's size is the traced allocation (tracemalloc)
of building its N ``(input, expected)`` rows in Python. Goal: <= 1 KB per row.

The same N-row run without the two report options gives the cost of writing them (CPU
time of the process): goal < 10% of the run. Each run is made ``--repeat`` times (2; 1 with
``--quick``), alternating with and without the reports, and the least CPU time of each is
compared (a loaded machine only ever adds time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _results import Result, add_json_argument, emit  # noqa: E402

ROWS_EXPR = '[(f"sample {{i}}", i % 7) for i in range({rows})]'
PROGRAM = (
    """\
@bucket(text: str) -> int:
  = `int(text.split()[1]) % 7`

@eval: bucket:
  > data: samples:
    = `"""
    + ROWS_EXPR
    + """`
  > metric: exact(samples):
    = `bucket(samples) == expected`
"""
)

# Runs pytest in this process, then prints its peak RSS (KB) and CPU seconds as JSON.
RUNNER = """\
import json, resource, sys, time
import pytest
code = pytest.main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"exit": int(code), "maxrss_kb": usage.ru_maxrss,
                  "cpu": usage.ru_utime + usage.ru_stime}))
"""


def dataset_bytes(rows: int) -> int:
    tracemalloc.start()
    try:
        data = eval(ROWS_EXPR.format(rows=rows))
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(data) == rows
    return size


def run(
    folder: Path, rows: int, reports: bool, attempt: int = 0, cache: bool = False
) -> dict[str, float]:
    project = folder / f"rows_{rows}_{int(reports)}_{attempt}_{int(cache)}"
    project.mkdir()
    (project / "suite.kedi").write_text(PROGRAM.format(rows=rows), encoding="utf-8")
    args = ["-q", "-p", "no:randomly", "-p", "no:rerunfailures", "--kedi-eval"]
    if not cache:
        args[-1:-1] = ["-p", "no:cacheprovider"]
    if reports:
        args += ["--kedi-report", "report.json", "--kedi-rows-jsonl", "rows.jsonl"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KEDI_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *args, "suite.kedi"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    try:
        figures = json.loads(lines[-1])
    except (IndexError, ValueError):
        figures = {"exit": -1}
    if figures["exit"] != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"pytest run of {rows} rows failed; not measured")
    if reports:
        written = sum(1 for _ in (project / "rows.jsonl").open(encoding="utf-8"))
        if written != rows:
            raise SystemExit(f"rows.jsonl has {written} rows, not {rows}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="5,000 rows, one run each")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each kind (best of)")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    rows = 5_000 if args.quick else args.rows
    repeat = 1 if args.quick else max(1, args.repeat)
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="kedi-memory-") as tmp:
        folder = Path(tmp)
        one = run(folder, 1, reports=True)
        for attempt in range(repeat):
            for reports in (True, False):
                runs[reports].append(run(folder, rows, reports=reports, attempt=attempt))
        cached = run(folder, rows, reports=True, cache=True)
    many = {
        "maxrss_kb": min(r["maxrss_kb"] for r in runs[True]),
        "cpu": min(r["cpu"] for r in runs[True]),
    }
    bare = {"cpu": min(r["cpu"] for r in runs[False])}
    data = dataset_bytes(rows)
    per_row = ((many["maxrss_kb"] - one["maxrss_kb"]) * 1024 - data) / rows
    cached_row = ((cached["maxrss_kb"] - one["maxrss_kb"]) * 1024 - data) / rows
    overhead = many["cpu"] / bare["cpu"] - 1
    method = (
        f"{rows:,} deterministic rows; peak RSS (ru_maxrss) of a fresh pytest process with "
        "--kedi-report and --kedi-rows-jsonl, minus the same run with 1 row, minus the "
        f"dataset's own traced size ({data / rows:.0f} B/row), per row"
    )
    results = [
        Result(
            benchmark=f"memory per row, {rows:,}-row suite with both reports",
            ours=f"{per_row / 1024:.2f} KB/row",
            baseline=f"{data / rows / 1024:.2f} KB/row (the dataset itself, not counted)",
            ratio=per_row / 1024,
            goal="<= 1 KB/row",
            met=per_row <= 1024,
            note=method,
        ),
        Result(
            benchmark=f"memory per row, {rows:,}-row suite with both reports, pytest's cache on",
            ours=f"{cached_row / 1024:.2f} KB/row",
            baseline=f"{data / rows / 1024:.2f} KB/row (the dataset itself, not counted)",
            ratio=cached_row / 1024,
            goal="<= 1 KB/row",
            met=cached_row <= 1024,
            note=(
                "as above, with pytest's cache plugin on (pytest's default; the runs above "
                "switch it off): the suite's rows are also stored for --kedi-rerun, one run"
            ),
        ),
        Result(
            benchmark=f"writing the JSON report and rows JSONL ({rows:,} rows)",
            ours=f"{many['cpu']:.2f} s CPU with both reports",
            baseline=f"{bare['cpu']:.2f} s CPU without them",
            ratio=many["cpu"] / bare["cpu"],
            goal="< 1.10x",
            met=overhead < 0.10,
            note=(
                "CPU time (user + system) of the whole pytest process, "
                f"least of {repeat} run(s) each"
            ),
        ),
    ]
    emit(results, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
