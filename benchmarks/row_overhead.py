"""Per-row overhead of deterministic eval rows: pytest-kedi vs pydantic-evals vs a plain loop.

Usage: python benchmarks/row_overhead.py [--rows N] [--quick]

The same work three ways, N rows (20,000) of a typed ``word_count(text: str) -> int``
scored by exact match against the expected count:

* ours: ``pytest --kedi-eval`` on a ``.kedi`` suite (in-process ``pytest.main``), measured
  twice: with default settings (every row becomes a sub-result: ``--kedi-rows auto``
  picks ``subtests`` here) and with ``--kedi-rows summary`` (rows only in the ``kedi``
  summary, the item's ``kedi rows`` section and the reports). The per-row cost is the
  CPU time of the run with N rows minus that of the same run with one row (so pytest's
  start-up and collection are not counted as row overhead).
* pydantic-evals: ``Dataset.evaluate_sync`` over N ``Case``s with the ``EqualsExpected``
  evaluator, the same function as the task (CPU time of the call; building the dataset
  excluded).
* a plain loop: builds the same N rows, calls a Python function checking its parameter
  and return types with ``isinstance``, compares with the expected value and averages.

A reference, no goal: what reporting a row as a sub-result adds (the default run's cost
per row minus the summary run's) next to pytest's own cost of one passed sub-result (a
``.py`` test running N/10 empty ``with subtests.test(msg=...)`` blocks, minus one block,
per block, same flags): the part of the default mode's cost that any pytest sub-result
pays. And a bound, no goal either: pytest's own cost of a passed sub-result (a ``.py`` test
logging N ``pytest.SubtestReport`` objects to the ``pytest_runtest_logreport`` hook's
implementations, minus one, less the time spent making them) added to the plain loop's row,
against the plain loop: the least the default mode's ratio can be, whatever pytest-kedi does.

Every measurement starts after a full garbage collection (`best`), on every side.

pytest runs at its default verbosity, as ``pytest --kedi-eval`` does: pytest 9.2 prints
nothing for a passed sub-result there, and a ``u`` for each with ``-q``, which a reference
row measures (the default mode with ``-q``).

pytest runs with plugin autoloading off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``), pytest-kedi
passed as a plugin: pytest and pytest-kedi, what installing pytest-kedi gives. The test
plugins of the ``dev`` extra (hypothesis, pytest-html, allure, …) would add their own cost
per report to our side only, the baselines not being pytest runs (hypothesis reads every
report's ``__dict__`` at the terminal summary); a reference row measures the default
mode with every installed plugin loaded.

Goals: >= 30x pydantic-evals' rows/s and <= 8x the plain loop's time per row, for each
of the two row modes. Exits non-zero when a run does not score every row.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _results import Result, add_json_argument, emit  # noqa: E402

PROGRAM = """\
@word_count(text: str) -> int:
  = `len(text.split())`

@eval: word_count:
  > data: samples:
    = `[(" ".join(["w"] * (i % 7 + 1)), i % 7 + 1) for i in range({rows})]`
  > metric: exact(samples):
    = `word_count(samples) == expected`
"""


#: How pytest runs here (`pytest_cpu`, `subtests_cpu`), in the results' notes.
ALONE = (
    "plugin autoloading off (PYTEST_DISABLE_PLUGIN_AUTOLOAD): pytest and pytest-kedi only, "
    "without the dev extra's test plugins, whose per-report costs would weigh on our side only"
)


def rows_of(count: int) -> list[tuple[str, int]]:
    return [(" ".join(["w"] * (i % 7 + 1)), i % 7 + 1) for i in range(count)]


def word_count(text: str) -> int:
    return len(text.split())


class _Probe:
    def __init__(self) -> None:
        self.scores: list[float | None] = []

    def pytest_kedi_suite_result(self, item: Any, result: Any) -> None:
        self.scores.append(result.score)


@contextlib.contextmanager
def autoloading(on: bool) -> Iterator[None]:
    """Plugin autoloading on or off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``) for the block."""
    key = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    was = os.environ.pop(key, None)
    if not on:
        os.environ[key] = "1"
    try:
        yield
    finally:
        os.environ.pop(key, None)
        if was is not None:
            os.environ[key] = was


def pytest_cpu(
    folder: Path, rows: int, mode: str | None = None, *, every: bool = False, quiet: bool = False
) -> float:
    """CPU seconds of one in-process ``pytest --kedi-eval`` run over ``rows`` rows
    (``mode``: the ``--kedi-rows`` value; None leaves the default), pytest with pytest-kedi
    only, or with ``every`` installed plugin (but those that reorder or rerun tests), at
    pytest's default verbosity or with ``-q`` (``quiet``: a ``u`` printed per row)."""
    import pytest

    import pytest_kedi.plugin

    project = folder / f"rows_{rows}"
    project.mkdir(exist_ok=True)
    (project / "rows.kedi").write_text(PROGRAM.format(rows=rows), encoding="utf-8")
    probe = _Probe()
    args = [
        *(["-q"] if quiet else []), "-p", "no:cacheprovider", "-p", "no:kedi",
        "-p", "no:randomly", "-p", "no:rerunfailures",
        "--rootdir", str(project), "--kedi-eval", str(project / "rows.kedi"),
    ]  # fmt: skip
    if mode is not None:
        args += ["--kedi-rows", mode]
    output = io.StringIO()
    start = time.process_time()
    with contextlib.redirect_stdout(output), autoloading(every):
        code = pytest.main(args, plugins=[probe, pytest_kedi.plugin])
    elapsed = time.process_time() - start
    if code != 0 or probe.scores != [1.0]:
        print(output.getvalue()[-3000:])
        raise SystemExit(f"benchmark pytest run failed (exit {code}, scores {probe.scores})")
    return elapsed


SUBTESTS_MODULE = """\
def test_rows(subtests):
    for index in range({rows}):
        with subtests.test(msg=f"row {{index}}: 1.0000"):
            pass
"""


class _Reported:
    """Counts the passed sub-results a run reported, from the terminal reporter's statistics
    at the session's end (at the default verbosity pytest's summary line leaves them out;
    a hook per report would add to the time measured)."""

    def __init__(self) -> None:
        self.subtests = 0

    def pytest_sessionfinish(self, session: Any) -> None:
        import pytest

        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        self.subtests = sum(
            isinstance(report, pytest.SubtestReport) and report.passed
            for reports in reporter.stats.values()
            for report in reports
        )


def py_test_cpu(folder: Path, name: str, module_text: str, subtests: int) -> float:
    """CPU seconds of one in-process ``pytest`` run of the ``.py`` test module ``module_text``
    (pytest alone, same flags as ours), written as ``name`` in a project of its own (one
    module name per size: pytest imports each); its one test must pass, reporting
    ``subtests`` passed sub-results."""
    import pytest

    project = folder / name
    project.mkdir(exist_ok=True)
    module = project / f"test_{name}.py"
    module.write_text(module_text, encoding="utf-8")
    args = [
        "-p", "no:cacheprovider", "-p", "no:kedi", "-p", "no:randomly",
        "-p", "no:rerunfailures",
        "--rootdir", str(project), str(module),
    ]  # fmt: skip
    output = io.StringIO()
    reported = _Reported()
    start = time.process_time()
    with contextlib.redirect_stdout(output), autoloading(False):
        code = pytest.main(args, plugins=[reported])
    elapsed = time.process_time() - start
    if code != 0 or reported.subtests != subtests:
        print(output.getvalue()[-3000:])
        raise SystemExit(
            f"benchmark run of {name} failed (exit {code}, {reported.subtests} sub-results)"
        )
    return elapsed


def subtests_cpu(folder: Path, rows: int) -> float:
    """CPU seconds of one in-process ``pytest`` run of a ``.py`` test reporting ``rows``
    passed sub-results through pytest's ``subtests`` fixture (`py_test_cpu`)."""
    module = SUBTESTS_MODULE.format(rows=rows)
    return py_test_cpu(folder, f"subtests_{rows}", module, rows)


LOGGED_MODULE = """\
import time
import pytest
from _pytest.subtests import SubtestContext

def test_rows(request):
    item = request.node
    keywords = dict.fromkeys(item.keywords, 1)
    location = item.location
    now = time.time()
    start = time.process_time()
    reports = [
        pytest.SubtestReport(
            item.nodeid, location, keywords, "passed", None, "call", (), 0.0, now, now, None,
            context=SubtestContext(msg=f"row {{index}}: 1.0000", kwargs={{}}),
        )
        for index in range({rows})
    ]
    made = time.process_time() - start
    with open({made_file!r}, "w") as file:
        file.write(repr(made))
    # the hook's implementations, listed once, called in pluggy's order with the report
    # (or nothing) as pytest-kedi logs a suite's rows; pluggy's executor if one wraps
    caller = item.ihook.pytest_runtest_logreport
    impls = caller.get_hookimpls()
    if any(impl.wrapper or impl.hookwrapper for impl in impls):
        hookexec = caller._hookexec
        for report in reports:
            hookexec("pytest_runtest_logreport", impls, {{"report": report}}, False)
    else:
        calls = [(impl.function, bool(impl.argnames)) for impl in reversed(impls)]
        for report in reports:
            for call, with_report in calls:
                call(report) if with_report else call()
"""


def logged_cpu(folder: Path, rows: int) -> float:
    """CPU seconds of one in-process ``pytest`` run of a ``.py`` test that logs ``rows``
    passed sub-results through pytest's ``pytest_runtest_logreport`` hook (`py_test_cpu`),
    less the time the test took to make their reports: what pytest itself spends on a
    reported row (its hooks, terminal reporter and statistics, and the report kept until
    the session ends), whoever made it."""
    name = f"logged_{rows}"
    made_file = folder / name / "made.txt"
    module = LOGGED_MODULE.format(rows=rows, made_file=str(made_file))
    elapsed = py_test_cpu(folder, name, module, rows)
    return elapsed - float(made_file.read_text(encoding="utf-8"))


def pydantic_evals_cpu(rows: int) -> float:
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    cases = [
        Case(name=f"row {i}", inputs=text, expected_output=count)
        for i, (text, count) in enumerate(rows_of(rows))
    ]
    dataset = Dataset(name="word_count", cases=cases, evaluators=[EqualsExpected()])
    start = time.process_time()
    report = dataset.evaluate_sync(word_count, progress=False)
    elapsed = time.process_time() - start
    if len(report.cases) != rows or report.averages().assertions != 1.0:  # type: ignore[union-attr]
        raise SystemExit("pydantic-evals did not score every row")
    return elapsed


def plain_cpu(rows: int) -> float:
    def typed(text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("text must be str")
        value = len(text.split())
        if not isinstance(value, int):
            raise TypeError("return value must be int")
        return value

    start = time.process_time()
    data = rows_of(rows)
    scores = [1.0 if typed(text) == expected else 0.0 for text, expected in data]
    mean = sum(scores) / len(scores)
    elapsed = time.process_time() - start
    if mean != 1.0:
        raise SystemExit("the plain loop did not score every row")
    return elapsed


def best(measure: Callable[[], float], rounds: int) -> float:
    """The least of ``rounds`` measurements, each started after a full garbage collection:
    whether the collector's occasional full pass over the heap lands inside a measurement
    otherwise depends on what earlier ones left (the plain loop varied 2x with it)."""
    times = []
    for _ in range(rounds):
        gc.collect()
        times.append(measure())
    return min(times)


def interleaved(
    first: Callable[[], float], second: Callable[[], float], rounds: int
) -> tuple[float, float]:
    """`best` of each, their rounds alternating: a slower stretch of a shared machine then
    weighs on both sides of a difference, not on one."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for measure, kept in zip((first, second), times, strict=True):
            gc.collect()
            kept.append(measure())
    return min(times[0]), min(times[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5, help="best of this many runs")
    parser.add_argument("--quick", action="store_true", help="1,000 rows, one round")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.rounds = 1_000, 1
    rows = args.rows
    with tempfile.TemporaryDirectory(prefix="kedi-rows-") as tmp:
        folder = Path(tmp)
        per_row = {}
        for mode in (None, "summary"):  # the default (sub-results), then summary only
            pytest_cpu(folder, 1, mode)  # warm-up: imports, caches
            # The summary mode's rows add about 0.07 s to a run whose own time varies by
            # as much from one run to the next on a shared machine: twice the rounds (a
            # run takes about 0.2 s).
            one, many = interleaved(
                partial(pytest_cpu, folder, 1, mode),
                partial(pytest_cpu, folder, rows, mode),
                args.rounds * (2 if mode == "summary" else 1),
            )
            per_row[mode] = max(many - one, 1e-9) / rows
        # A reference: the default mode with -q, which prints a `u` per passed sub-result
        # (pytest 9.2; nothing at the default verbosity), fewer rounds for run.py's time.
        one, many = interleaved(
            partial(pytest_cpu, folder, 1, quiet=True),
            partial(pytest_cpu, folder, rows, quiet=True),
            max(1, args.rounds - 2),
        )
        quiet_row = max(many - one, 1e-9) / rows
        pytest_cpu(folder, 1, every=True)  # warm-up: the other plugins' imports
        one, many = interleaved(  # a reference: fewer rounds, to keep run.py's time
            lambda: pytest_cpu(folder, 1, every=True),
            lambda: pytest_cpu(folder, rows, every=True),
            max(1, args.rounds - 2),
        )
        every_plugin = max(many - one, 1e-9) / rows
        # pytest's own sub-result costs the same per block at any count (about 0.3 ms):
        # a tenth of the rows measures it, in a tenth of the time (7 s a run otherwise).
        sub_rows = max(rows // 10, 1)
        subtests_cpu(folder, 1)  # warm-up
        sub_one = best(lambda: subtests_cpu(folder, 1), args.rounds)
        sub_many = best(lambda: subtests_cpu(folder, sub_rows), args.rounds)
        pytest_subresult = max(sub_many - sub_one, 1e-9) / sub_rows
        logged_cpu(folder, 1)  # warm-up
        log_one, log_many = interleaved(
            partial(logged_cpu, folder, 1),
            partial(logged_cpu, folder, rows),
            max(1, args.rounds - 2),  # a reference: fewer rounds, to keep run.py's time
        )
        pytest_floor = max(log_many - log_one, 1e-9) / rows
    # About ten seconds a run at 20,000 rows: three runs (run.py stays under five minutes).
    evals_rounds = max(1, args.rounds - 2)
    theirs = best(lambda: pydantic_evals_cpu(rows), evals_rounds) / rows
    plain = best(lambda: plain_cpu(rows), args.rounds) / rows
    baselines = (
        "pydantic-evals = Dataset.evaluate_sync with EqualsExpected; plain loop = build the "
        f"rows, typed call checked with isinstance, compare, average; best of {args.rounds} "
        f"(pydantic-evals: {evals_rounds})"
    )
    methods = {
        None: (
            f"{rows:,} rows; ours = CPU time of `pytest --kedi-eval` with {rows:,} rows minus "
            f"with 1 row (rows reported as sub-results, the default; pytest's default "
            f"verbosity, which prints nothing for a passed sub-result); {ALONE}; {baselines}"
        ),
        "summary": (
            f"{rows:,} rows; ours = CPU time of `pytest --kedi-eval --kedi-rows summary` with "
            f"{rows:,} rows minus with 1 row (rows only in the kedi summary, the item's "
            f"kedi rows section and the reports: no sub-results), best of {args.rounds * 2} "
            f"each, alternating; {ALONE}; {baselines}"
        ),
    }
    results = []
    for mode, name in ((None, "under pytest"), ("summary", "under pytest --kedi-rows summary")):
        ours = per_row[mode]
        results += [
            Result(
                benchmark=f"deterministic rows {name} vs pydantic-evals ({rows:,})",
                ours=f"{1 / ours:,.0f} rows/s",
                baseline=f"{1 / theirs:,.0f} rows/s (pydantic-evals)",
                ratio=theirs / ours,
                goal=">= 30x faster",
                met=theirs / ours >= 30,
                note=methods[mode],
            ),
            Result(
                benchmark=f"deterministic rows {name} vs a plain loop ({rows:,})",
                ours=f"{ours * 1e6:.1f} us/row",
                baseline=f"{plain * 1e6:.2f} us/row (plain loop)",
                ratio=ours / plain,
                goal="<= 8x",
                met=ours / plain <= 8,
                note=methods[mode],
            ),
        ]
    results.append(
        Result.reference(
            benchmark=f"deterministic rows under pytest -q vs pydantic-evals ({rows:,})",
            ours=f"{1 / quiet_row:,.0f} rows/s",
            baseline=f"{1 / theirs:,.0f} rows/s (pydantic-evals)",
            ratio=theirs / quiet_row,
            note=(
                "as the default-mode row, with -q: pytest prints a `u` for each passed "
                f"sub-result (nothing at the default verbosity), best of "
                f"{max(1, args.rounds - 2)}, {quiet_row * 1e6:.1f} us/row, "
                f"{quiet_row / plain:.1f}x the plain loop"
            ),
        )
    )
    results.append(
        Result.reference(
            benchmark=f"deterministic rows under pytest vs pydantic-evals ({rows:,}), every "
            "installed plugin loaded",
            ours=f"{1 / every_plugin:,.0f} rows/s",
            baseline=f"{1 / theirs:,.0f} rows/s (pydantic-evals)",
            ratio=theirs / every_plugin,
            note=(
                f"as the default-mode row, with plugin autoloading on: every plugin installed "
                "here (the dev extra's hypothesis, pytest-html, allure, pytest-json-report, "
                "teamcity-messages, xdist ...) but randomly and rerunfailures, "
                f"best of {max(1, args.rounds - 2)}, {every_plugin * 1e6:.1f} us/row"
            ),
        )
    )
    # What reporting rows as sub-results adds to a row, next to pytest's own cost of one
    # passed sub-result: the part of the default mode's cost that is pytest's.
    added = max(per_row[None] - per_row["summary"], 1e-9)
    results.append(
        Result.reference(
            benchmark=f"a row's sub-result vs pytest's own subtests ({rows:,})",
            ours=f"{added * 1e6:.1f} us/row (default minus --kedi-rows summary)",
            baseline=f"{pytest_subresult * 1e6:.1f} us (one subtests.test() block, .py test)",
            ratio=added / pytest_subresult,
            note=(
                f"{rows:,} sub-results; ours = the CPU time per row of the default run minus "
                "that of the --kedi-rows summary run (the row label, the report and pytest's "
                "hooks for it); pytest's = CPU time of a .py test running "
                f"{sub_rows:,} empty `with subtests.test(msg=...)` blocks minus one block, "
                "same flags (default verbosity), per block: what a sub-result costs through "
                "pytest's own fixture"
            ),
        )
    )
    # The least a row reported as a sub-result can cost under pytest: a plain loop's row
    # plus pytest's own handling of its report. The default mode's ratio to the plain loop
    # cannot go below this one, whatever pytest-kedi does.
    floor = plain + pytest_floor
    results.append(
        Result.reference(
            benchmark=f"pytest's floor for a row reported as a sub-result vs a plain loop "
            f"({rows:,})",
            ours=f"{floor * 1e6:.1f} us/row (plain loop + pytest's own cost of a sub-result)",
            baseline=f"{plain * 1e6:.2f} us/row (plain loop)",
            ratio=floor / plain,
            note=(
                f"pytest's own cost of a passed sub-result, {pytest_floor * 1e6:.1f} us: CPU "
                f"time of a .py test logging {rows:,} pytest.SubtestReport objects to the "
                "pytest_runtest_logreport hook's implementations (listed once and called in "
                "pluggy's order, as pytest-kedi logs a suite's rows) minus "
                "one, less the time spent making them (pytest's hooks, terminal reporter and "
                "statistics, and the report kept until the session ends), same flags (default "
                "verbosity), best of "
                f"{max(1, args.rounds - 2)} alternating; added to the plain loop's row: the "
                "least the default mode's row can cost against the plain loop, a bound on its "
                "ratio"
            ),
        )
    )
    emit(results, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
