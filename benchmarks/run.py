"""Run every benchmark and write ``benchmarks/RESULTS.md``.

Usage: python benchmarks/run.py [--quick] [--only NAME ...] [--output PATH]

A ``--quick`` or ``--only`` run prints its table instead (unless ``--output`` is given):
only a full run replaces the results file.

Each ``benchmarks/*.py`` script (except this one and ``_*.py`` helpers) runs as its own
process with ``--json TMP`` (and ``--quick`` when given); the `Result`s it writes there
become one table: benchmark | ours | baseline | ratio | goal | met. The machine (cores,
CPU model, Python, date) is recorded with it, and ``benchmarks/parser_profile.md`` is
included verbatim when present. Exits non-zero when a script fails (its results are then
missing from the table and the failure is listed under it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _results import Result  # noqa: E402

RESULTS = HERE / "RESULTS.md"
PROFILE = HERE / "parser_profile.md"


def scripts(only: list[str] | None) -> list[Path]:
    found = sorted(
        path
        for path in HERE.glob("*.py")
        if path.name != "run.py" and not path.name.startswith("_")
    )
    if not only:
        return found
    wanted = {name.removesuffix(".py") for name in only}
    unknown = wanted - {path.stem for path in found}
    if unknown:
        raise SystemExit(f"no benchmark named {', '.join(sorted(unknown))}")
    return [path for path in found if path.stem in wanted]


@dataclass
class Outcome:
    script: str
    seconds: float
    results: list[Result] = field(default_factory=list)
    error: str | None = None


def run_script(path: Path, quick: bool) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="kedi-bench-run-") as tmp:
        target = Path(tmp) / "results.json"
        command = [sys.executable, str(path), "--json", str(target)]
        if quick:
            command.append("--quick")
        start = time.perf_counter()
        done = subprocess.run(command, cwd=HERE.parent, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
            return Outcome(path.name, seconds, error=f"exit {done.returncode}: {tail[0]}")
        if not target.is_file():
            return Outcome(path.name, seconds, error="wrote no results (no --json support?)")
        try:
            results = [Result(**entry) for entry in json.loads(target.read_text())]
        except (ValueError, TypeError) as exc:
            return Outcome(path.name, seconds, error=f"unreadable results: {exc}")
        return Outcome(path.name, seconds, results)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(outcomes: list[Outcome], quick: bool, seconds: float, notes: str) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmark results",
        "",
        "Written by `python benchmarks/run.py`"
        + (" --quick (smoke sizes: the ratios are not meaningful)" if quick else "")
        + ". Every baseline is measured in the same run as ours; compare ratios, not times.",
        "",
        f"- machine: {os.cpu_count()} cores (`nproc` {len(os.sched_getaffinity(0))}), "
        f"{cpu_model()}",
        f"- Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.release()}",
        f"- date: {now}; whole run {seconds:.0f} s",
    ]
    if notes:
        lines.append(f"- notes: {notes}")
    lines += [
        "",
        "| benchmark | ours | baseline | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for outcome in outcomes:
        for r in outcome.results:
            lines.append(
                f"| {_cell(r.benchmark)} | {_cell(r.ours)} | {_cell(r.baseline)} | "
                f"{r.ratio:.3g} | {_cell(r.goal)} | {'yes' if r.met else '**no**'} |"
            )
    methods = [(o.script, r) for o in outcomes for r in o.results if r.note]
    if methods:
        lines += ["", "## Method", ""]
        lines += [f"- **{_cell(r.benchmark)}** (`{s}`): {_cell(r.note)}" for s, r in methods]
    lines += ["", "## Scripts", "", "| script | seconds | status |", "|---|---|---|"]
    for o in outcomes:
        status = "ok" if o.error is None else f"FAILED: {_cell(o.error)}"
        lines.append(f"| `{o.script}` | {o.seconds:.1f} | {status} |")
    text = "\n".join(lines) + "\n"
    if PROFILE.is_file():
        text += "\n" + PROFILE.read_text(encoding="utf-8").rstrip("\n") + "\n"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke sizes for every script")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="run only these scripts (name without .py)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="where to write the table (default: benchmarks/RESULTS.md for a full run; a "
        "--quick or --only run prints it instead, leaving RESULTS.md as it is)",
    )
    parser.add_argument("--notes", default="", help="a line about the run (e.g. machine load)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    outcomes: list[Outcome] = []
    for path in scripts(args.only):
        print(f"== {path.name}", flush=True)
        outcome = run_script(path, args.quick)
        if outcome.error:
            print(f"   {path.name} FAILED: {outcome.error}", file=sys.stderr)
        outcomes.append(outcome)
    text = render(outcomes, args.quick, time.perf_counter() - start, args.notes)
    output = args.output
    if output is None and (args.quick or args.only):  # a partial table: not the results
        print(text, end="")
    else:
        output = output or RESULTS
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output}")
    return 1 if any(o.error for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
