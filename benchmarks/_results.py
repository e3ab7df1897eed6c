"""The one result shape every benchmark script reports, and how it reaches `run.py`.

Each script under ``benchmarks/`` measures something of ours against a baseline measured in
the same run and describes each comparison as a `Result`. Run alone, it prints them; given
``--json PATH`` (which `run.py` passes), it also writes them there as a JSON list.

``ratio`` is ``ours / baseline`` for times (lower is better) and states its direction in
``goal`` (e.g. ``"<= 1.15x"`` or ``">= 30x faster"``); ``met`` says whether the goal holds.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

# The pytest runs a benchmark makes are measurements, not CI results: on a GitHub Actions
# runner they must not append their summaries to the job's (GITHUB_STEP_SUMMARY).
os.environ.pop("GITHUB_STEP_SUMMARY", None)

__all__ = ["REFERENCE", "Result", "add_json_argument", "emit"]


@dataclass(frozen=True, slots=True)
class Result:
    benchmark: str  # what is compared, e.g. "model call overhead (FunctionModel)"
    ours: str  # our figure with its unit, e.g. "0.21 ms/call"
    baseline: str  # the baseline's figure and name, e.g. "2.9 ms/call (Agent.run)"
    ratio: float  # the compared ratio the goal is stated on
    goal: str  # e.g. "<= 0.3 ms/call", "<= 1.15x", ">= 30x"
    met: bool
    note: str = ""  # method, sizes, anything a reader needs

    @classmethod
    def reference(cls, benchmark: str, ours: str, baseline: str, ratio: float, note: str) -> Result:
        """A comparison shown for context (a floor, or the same step with other plugins):
        no goal, so always met."""
        return cls(benchmark, ours, baseline, ratio, REFERENCE, True, note)


#: The goal of a `Result.reference`.
REFERENCE = "reference (no goal)"


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", type=Path, default=None, metavar="PATH", help="also write the results as JSON"
    )


def emit(results: list[Result], json_path: Path | None) -> None:
    for result in results:
        verdict = "met" if result.met else "NOT met"
        print(
            f"{result.benchmark}: ours {result.ours} | baseline {result.baseline} | "
            f"ratio {result.ratio:.3g} | goal {result.goal} ({verdict})"
        )
    if json_path is not None:
        json_path.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
