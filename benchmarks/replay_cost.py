"""Replay cost benchmark (issue 11, requirement 1): a fully replayed suite vs plain Python.

A suite of N rows (10,000; ``--quick``: 1,000) whose procedure makes one model call is first
recorded into a cassette (the model: an instant pydantic-ai ``FunctionModel``), then run with
``record mode strict`` and a model that fails if it is ever called, so every answer comes from
the cassette. Its time is compared with the same suite whose procedure is a deterministic
Python expression, measured in the same run (goal: within 3x): each suite runs ``ROUNDS``
times, the two alternating, and the best time of each counts (a fresh program and cassette
book every time, so each replay reads its cassette file again). No network, no API key.

Measured twice:

* **under pytest**, as users run a suite: ``pytest --kedi-eval --kedi-record-mode strict``
  in-process, once with rows as sub-results (the default) and once with ``--kedi-rows
  summary``; the time is the suite item's whole run protocol (set-up, call with every row
  and its report, teardown);
* **in the bare runner**: ``run_suite`` on programs loaded with ``pytest_kedi.runtime.load``,
  without pytest's per-row work, which shows the replay path's own cost most sharply.

Run: ``python benchmarks/replay_cost.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

ROOT = Path(__file__).resolve().parents[1]
for entry in (ROOT, ROOT / "benchmarks"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from _results import Result, add_json_argument, emit  # noqa: E402

from pytest_kedi.evals import EvalOptions, SuiteResult, run_suite  # noqa: E402
from pytest_kedi.runtime import load  # noqa: E402
from pytest_kedi.runtime.model.cassettes import CassetteBook  # noqa: E402
from pytest_kedi.runtime.model.policy import ModelPolicy  # noqa: E402

GOAL = 3.0
ROUNDS = 3

MODEL_PROGRAM = """\
@label(text: str) -> str:
  >> Label <text> with one word: [word: str]
  = <word>

@eval: label:
  > data: rows:
    = `[(f"row {{i}}", "yes") for i in range({rows})]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""

PYTHON_PROGRAM = """\
@label(text: str) -> str:
  = `"yes" if text.startswith("row") else "no"`

@eval: label:
  > data: rows:
    = `[(f"row {{i}}", "yes") for i in range({rows})]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""


def answering_model() -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if info.output_tools:
            tool = info.output_tools[0]
            fields = tool.parameters_json_schema.get("properties", {})
            return ModelResponse(parts=[ToolCallPart(tool.name, {name: "yes" for name in fields})])
        return ModelResponse(parts=[TextPart("yes")])

    return FunctionModel(respond)


def refusing_model() -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("a replayed suite called the model")

    return FunctionModel(respond)


def run(path: Path, model: Any, policy: ModelPolicy | None) -> tuple[float, SuiteResult]:
    program = load(str(path), mode="validate", model=model, model_policy=policy)
    (suite,) = program.module.eval_suites
    start = time.perf_counter()
    result = run_suite(program, suite, EvalOptions())
    elapsed = time.perf_counter() - start
    if not result.completed or result.rows_errored or result.score != 1.0:
        raise SystemExit(
            f"benchmark suite did not score cleanly: {result.error or result.feedback}"
        )
    return elapsed, result


class _PytestBench:
    """A plugin for in-process pytest runs: gives the model (`pytest_kedi_model`) and times
    each item's whole run protocol."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.seconds: list[float] = []

    def pytest_kedi_model(self, config: pytest.Config) -> Any:
        return self.model

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        start = time.perf_counter()
        try:
            return (yield)
        finally:
            self.seconds.append(time.perf_counter() - start)


def run_pytest(path: Path, model: Any, *options: str) -> float:
    """Seconds the suite item of ``path`` took under ``pytest --kedi-eval`` (in-process; the
    plugin module is passed as an object and its entry point blocked, so it loads once)."""
    import pytest_kedi.plugin

    bench = _PytestBench(model)
    args = [
        "-q", "-p", "no:cacheprovider", "-p", "no:kedi", "-p", "no:randomly",
        "-p", "no:rerunfailures",
        "--rootdir", str(path.parent), "--kedi-eval", *options, str(path),
    ]  # fmt: skip
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = pytest.main(args, plugins=[bench, pytest_kedi.plugin])
    if code != 0 or len(bench.seconds) != 1:
        print(output.getvalue()[-3000:])
        raise SystemExit(f"benchmark pytest run failed (exit {code}); not measured")
    return bench.seconds[0]


def best_of(
    rounds: int, replay: Callable[[], float], python: Callable[[], float]
) -> tuple[float, float]:
    """The best of ``rounds`` times of the replayed suite and of the Python suite, the two
    alternating."""
    replays: list[float] = []
    baselines: list[float] = []
    for _ in range(rounds):
        replays.append(replay())
        baselines.append(python())
    return min(replays), min(baselines)


def compared(what: str, rows: int, times: tuple[float, float], note: str) -> Result:
    """The replayed suite's time against the Python suite's, per row, with the goal."""
    replayed, baseline = times
    ratio = replayed / baseline
    return Result(
        benchmark=f"fully replayed suite {what} ({rows} rows)",
        ours=f"{replayed:.2f} s ({replayed / rows * 1e3:.3f} ms/row, strict replay)",
        baseline=f"{baseline:.2f} s ({baseline / rows * 1e3:.3f} ms/row, Python procedure)",
        ratio=ratio,
        goal=f"<= {GOAL:g}x",
        met=ratio <= GOAL,
        note=f"{note}; on a machine shared with other jobs; one model call per row, every "
        "answer read from the cassette (a model that fails if called is injected)",
    )


def pytest_results(model_path: Path, python_path: Path, rows: int, rounds: int) -> list[Result]:
    """The suite under pytest, rows as sub-results and as a summary."""
    run_pytest(model_path, answering_model(), "--kedi-record-mode", "record")
    results = []
    for mode, label in (
        ("auto", "rows as sub-results (default)"),
        ("summary", "--kedi-rows summary"),
    ):
        strict = ("--kedi-record-mode", "strict", "--kedi-rows", mode)
        times = best_of(
            rounds,
            partial(run_pytest, model_path, refusing_model(), *strict),
            partial(run_pytest, python_path, None, "--kedi-rows", mode),
        )
        note = (
            f"pytest --kedi-eval in-process, the suite item's run protocol; best of {rounds} each"
        )
        results.append(compared(f"under pytest, {label}", rows, times, note))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="1,000 rows instead of 10,000")
    add_json_argument(parser)
    args = parser.parse_args()
    rows = 1_000 if args.quick else 10_000
    with tempfile.TemporaryDirectory() as folder:
        model_path = Path(folder, "replay_bench.kedi")
        model_path.write_text(MODEL_PROGRAM.format(rows=rows), encoding="utf-8")
        python_path = Path(folder, "python_bench.kedi")
        python_path.write_text(PYTHON_PROGRAM.format(rows=rows), encoding="utf-8")
        cassette = Path(folder, "replay_bench.kedi.cassette.json")
        results = pytest_results(model_path, python_path, rows, 1 if args.quick else ROUNDS)
        cassette.unlink()

        recorder = CassetteBook("record")
        run(model_path, answering_model(), ModelPolicy(cassettes=recorder, cassette=cassette))
        recorder.save(prune=False)

        times = best_of(
            ROUNDS,
            lambda: run(
                model_path,
                refusing_model(),
                ModelPolicy(cassettes=CassetteBook("strict"), cassette=cassette),
            )[0],
            lambda: run(python_path, None, None)[0],
        )
    note = f"run_suite without pytest; the best of {ROUNDS} wall times each, alternating"
    bare = compared("in the bare runner, run_suite", rows, times, note)
    emit([*results, bare], args.json)


if __name__ == "__main__":
    main()
