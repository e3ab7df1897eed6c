"""Collection and execution of many `.kedi` files vs the same tests as plain pytest modules.

Usage: python benchmarks/collection.py [--files N] [--quick]

Generates N ``.kedi`` files (two procedures, one ``@eval:`` suite, two ``@test:`` cases
each) and N equivalent ``.py`` test modules (the same two functions, one test scoring the
same rows, the same two test functions), then runs pytest on each tree in a fresh
process:

* ``--collect-only`` cold: no ``.pytest_cache`` (our parse cache) and no ``__pycache__``
  (pytest's compiled, assertion-rewritten modules), with plugin autoloading off (below);
* ``--collect-only`` warm: the same command again, both caches filled;
* full execution (``--kedi-eval``), first after collection: pytest's ``.pyc`` files were
  written by collection, as was our compiled code (``.pytest_cache/d/kedi-code``: cold
  collection compiles a file's Python when it parses the file);
* full execution again, warm: every cache filled by the previous run (the steady state
  of a re-run, and what the issue's goal is stated on).

The full runs are compared with two ``.py`` baselines. A `.kedi` suite reports each of its
rows as a passed sub-result (the default, ``--kedi-rows subtests``): a user sees 3 tests
and 5 row sub-results per file. The first baseline scores the rows in a loop inside one
test (3 results per file, no row reported); the second reports each row through pytest's
built-in ``subtests`` fixture, as a `.kedi` suite does (3 tests and 5 sub-results per
file). The goal is compared with the second, which shows a user the same results; the
first stays as a reference (what a suite would cost if its rows were not reported).

A reference for the warm collection: the same ``.kedi`` files collected by a plugin that
makes the nodes pytest-kedi makes, with the same names and marks, and reads nothing
(`FLOOR_PLUGIN`): what pytest itself costs for those node ids, the least any plugin giving
them can pay.

Times are the child processes' CPU time (user + system; the best of several runs: each
full run twice, each warm collection three or five times, per ``--repeat``), so a
loaded machine skews neither side; ratios are ours / plain pytest. Exits non-zero when
a pytest run fails.

Both trees run with every installed plugin (the ``dev`` extra's: hypothesis, pytest-html,
allure, pytest-json-report, teamcity-messages …) but those that reorder, rerun or spread
tests, and again with plugin autoloading off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): pytest
alone against pytest with pytest-kedi (``-p pytest_kedi.plugin``), each side paying for its
own start-up only. The collection goals are stated on the second: what pytest-kedi costs
against what pytest costs. The other plugins add about half a second of start-up to both
sides alike (hypothesis alone imports for 0.2 s at the session's end), which moves any
ratio towards 1; those rows stay as references (the cold collection runs without them
only: a second cold pass would add about ten seconds to ``run.py``). The full-run goal
holds for both.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _results import REFERENCE, Result, add_json_argument, emit  # noqa: E402

KEDI_TEMPLATE = """\
@double_{i}(x: int) -> int:
  = `x * 2`

@label_{i}(x: int) -> str:
  = item <x>

@eval: double_{i}:
  > data: numbers:
    = `[(n, n * 2) for n in range(5)]`
  > metric: exact(numbers):
    = `double_{i}(numbers) == expected`

@test: file_{i}:
  > case: doubles:
    `assert double_{i}(21) == 42`
  > case: labels:
    ```
    text = label_{i}(3)
    assert text == "item 3"
    ```
"""

PY_TEMPLATE = """\
def double_{i}(x: int) -> int:
    return x * 2


def label_{i}(x: int) -> str:
    return f"item {{x}}"


def test_eval_double_{i}():
    numbers = [(n, n * 2) for n in range(5)]
    scores = [double_{i}(value) == expected for value, expected in numbers]
    assert sum(scores) / len(scores) == 1.0


def test_doubles():
    assert double_{i}(21) == 42


def test_labels():
    text = label_{i}(3)
    assert text == "item 3"
"""

#: The same module, its suite reporting each row as a passed sub-result (as `.kedi` does).
PY_SUBTESTS_TEMPLATE = PY_TEMPLATE.replace(
    """def test_eval_double_{i}():
    numbers = [(n, n * 2) for n in range(5)]
    scores = [double_{i}(value) == expected for value, expected in numbers]
""",
    """def test_eval_double_{i}(subtests):
    numbers = [(n, n * 2) for n in range(5)]
    scores = []
    for index, (value, expected) in enumerate(numbers):
        with subtests.test(msg=f"row {{index}}"):
            scores.append(double_{i}(value) == expected)
""",
)
assert PY_SUBTESTS_TEMPLATE != PY_TEMPLATE

#: pytest's own cost of a `.kedi` file's node tree: a plugin that makes the same nodes as
#: pytest-kedi (a file collector holding an eval item and a ``@test:`` collector of two
#: case items, with the same names and marks) and reads nothing. Its ``--collect-only``
#: is what any plugin giving the same node ids pays pytest, whatever its own work costs.
FLOOR_PLUGIN = """\
import pytest


def pytest_configure(config):
    for mark in ("kedi", "kedi_eval", "kedi_test"):
        config.addinivalue_line("markers", mark)


class Item(pytest.Item):
    def runtest(self):
        pass


class Suite(pytest.Collector):
    def collect(self):
        cases = []
        for name in ("doubles", "labels"):
            case = Item.from_parent(self, name=name)
            case.add_marker(pytest.mark.kedi)
            case.add_marker(pytest.mark.kedi_test)
            cases.append(case)
        return cases


class File(pytest.File):
    def collect(self):
        number = self.path.stem.rpartition("_")[2]
        suite = Item.from_parent(self, name=f"eval:double_{number}")
        for mark in (pytest.mark.kedi, pytest.mark.kedi_eval, pytest.mark.skip(reason="off")):
            suite.add_marker(mark)
        return [suite, Suite.from_parent(self, name=f"test:file_{number}")]


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".kedi":
        return File.from_parent(parent, path=file_path)
"""

# Every installed plugin is loaded on both sides but those that reorder, rerun or spread
# the tests.
COMMON = ["-q", "-p", "no:randomly", "-p", "no:xdist", "-p", "no:rerunfailures"]


#: Runs of each warm collection per repeat (best taken, as for every step); more for the
#: collection the goal is stated on, whose runs take about half a second and vary the most.
WARM_ROUNDS = 3
WARM_ALONE_ROUNDS = 5
#: Runs of each full run per repeat: a full run's CPU time varies by a fifth from one run
#: to the next on a shared machine, more than the difference the goal is about.
FULL_ROUNDS = 2

#: What the rows measured with plugin autoloading off show.
ALONE = (
    "plugin autoloading off (PYTEST_DISABLE_PLUGIN_AUTOLOAD): pytest alone against pytest "
    "with pytest-kedi (-p pytest_kedi.plugin), without the dev extra's test plugins, which "
    "add about the same start-up and per-report cost to both sides"
)


def generate(root: Path, files: int) -> tuple[Path, Path, Path, Path]:
    """The `.kedi` tree, the `.py` tree, the `.py` tree whose suites report rows, and the
    `.kedi` tree collected by `FLOOR_PLUGIN` (its module in the tree)."""
    kedi, py, sub, floor = root / "kedi", root / "py", root / "py-subtests", root / "floor"
    plain = "[pytest]\n"
    trees = ((kedi, "[pytest]\nkedi_collect = true\n"), (py, plain), (sub, plain), (floor, plain))
    for folder, ini in trees:
        folder.mkdir(parents=True)
        (folder / "pytest.ini").write_text(ini, encoding="utf-8")
    (floor / "kedi_floor.py").write_text(FLOOR_PLUGIN, encoding="utf-8")
    for i in range(files):
        program = KEDI_TEMPLATE.format(i=i)
        (kedi / f"suite_{i}.kedi").write_text(program, encoding="utf-8")
        (floor / f"suite_{i}.kedi").write_text(program, encoding="utf-8")
        (py / f"test_suite_{i}.py").write_text(PY_TEMPLATE.format(i=i), encoding="utf-8")
        module = PY_SUBTESTS_TEMPLATE.format(i=i)
        (sub / f"test_suite_{i}.py").write_text(module, encoding="utf-8")
    return kedi, py, sub, floor


CACHES = (".pytest_cache", "__pycache__")


def clear_caches(folder: Path) -> None:
    for name in CACHES:
        shutil.rmtree(folder / name, ignore_errors=True)


def snapshot(folder: Path) -> Path:
    """A copy of ``folder``'s caches (beside it), as they are now."""
    saved = folder.with_name(folder.name + "-caches")
    shutil.rmtree(saved, ignore_errors=True)
    saved.mkdir()
    for name in CACHES:
        if (folder / name).is_dir():
            shutil.copytree(folder / name, saved / name)
    return saved


def restore(folder: Path, saved: Path) -> None:
    """``folder``'s caches as `snapshot` saved them."""
    clear_caches(folder)
    for name in CACHES:
        if (saved / name).is_dir():
            shutil.copytree(saved / name, folder / name)


def cpu_of(folder: Path, args: list[str], expect: str, *, alone: bool = False) -> float:
    """CPU seconds (user + system) of one pytest process run in ``folder`` (``expect``:
    what its summary line must contain). ``alone``: pytest without autoloaded plugins
    (pytest-kedi loaded in the ``.kedi`` tree); else every installed plugin but `COMMON`'s."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KEDI_", "PYTEST_"))}
    env["PYTHONDONTWRITEBYTECODE"] = ""
    if folder.name == "floor":  # pytest alone with the floor plugin (the tree's module)
        alone, args = True, [arg for arg in args if not arg.startswith("--kedi")]
    if alone:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        if folder.name == "floor":
            plugins = ["-q", "-p", "kedi_floor"]
        elif folder.name == "kedi":
            plugins = ["-q", "-p", "pytest_kedi.plugin"]
        else:  # plain pytest does not know pytest-kedi's options
            plugins, args = ["-q"], [arg for arg in args if not arg.startswith("--kedi")]
    else:
        plugins = COMMON
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = done.stdout.strip().splitlines()[-1:] or [""]
    if done.returncode != 0 or expect not in summary[0]:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"pytest {' '.join(args)} in {folder.name} failed: {summary[0]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000, help="files per tree")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best)")
    parser.add_argument("--quick", action="store_true", help="50 files, one run")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.repeat = 50, 1
    files = args.files
    tests = files * 3
    collected, passed = str(tests), f"{tests} passed"
    with_rows = f"{passed}, {files * 5} subtests passed"  # the rows, reported
    best: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="kedi-collect-") as tmp:
        # Unmeasured first: one file of each tree collected and run, so the modules every
        # pytest run imports are byte-compiled (and pytest's rewritten plugin modules
        # cached) as on a machine that ran pytest before; otherwise whichever process
        # first imports a module pays for compiling it (after an editable install, or a
        # change to a module).
        for folder in generate(Path(tmp) / "warm-up", 1):
            cpu_of(folder, ["--collect-only"], "3", alone=True)
            if folder.name != "floor":
                cpu_of(folder, ["--collect-only"], "3")
                cpu_of(folder, ["--kedi-eval"], "3 passed")
        kedi, py, sub, floor = generate(Path(tmp), files)
        trees = (
            ("kedi", kedi, with_rows),
            ("py", py, passed),
            ("sub", sub, with_rows),
            ("floor", floor, ""),
        )
        # Interleaved by step: each tree goes through cold collection, warm collection,
        # the first run and a warm run, in that order, and the trees take each step one
        # after the other, so the runs compared with each other are seconds apart (the
        # speed of a shared machine drifts over a minute).
        steps = (
            ("cold-alone", ["--collect-only"], False, True),  # plugin autoloading off
            ("warm", ["--collect-only"], False, False),
            ("warm-alone", ["--collect-only"], False, True),  # plugin autoloading off
            ("first", ["--kedi-eval"], True, False),
            ("run", ["--kedi-eval"], True, False),
            ("run-alone", ["--kedi-eval"], True, True),
        )
        for _ in range(args.repeat):
            for _name, folder, _summary in trees:
                clear_caches(folder)
            for key, command, runs, alone in steps:
                # A warm collection takes a second or two: it is taken WARM_ROUNDS times
                # (the trees alternating), as the shortest runs vary the most; a full run
                # FULL_ROUNDS times, the first after collection each time from the caches
                # collection left (`snapshot`, `restore`).
                if key.startswith("cold"):
                    rounds = 1
                elif runs:
                    rounds = FULL_ROUNDS
                else:
                    rounds = WARM_ALONE_ROUNDS if key == "warm-alone" else WARM_ROUNDS
                if key == "first":
                    saved = {n: snapshot(f) for n, f, _summary in trees if n in ("kedi", "sub")}
                for _round in range(rounds):
                    for name, folder, summary in trees:
                        if key == "first" and _round > 0 and name in saved:
                            restore(folder, saved[name])
                        if not runs and name == "sub" and (key != "warm" or _round > 0):
                            continue  # the same collection as "py" (once, for its caches)
                        if runs and name == "py" and _round > 0:
                            continue  # a reference (rows not reported): one run
                        if name == "floor" and (key != "warm-alone" or _round >= WARM_ROUNDS):
                            continue  # a reference for the warm collection's goal
                        if key == "run-alone" and name == "py":
                            continue  # compared with the tree whose rows are reported
                        expect = summary if runs else collected
                        value = cpu_of(folder, command, expect, alone=alone)
                        best.setdefault(f"{name}-{key}", []).append(value)
    figures = {key: min(values) for key, values in best.items()}
    method = (
        f"{files:,} generated .kedi files (2 procedures, 1 @eval: suite of 5 rows, "
        "2 @test: cases each) vs as many .py modules with the same functions and "
        "3 tests; CPU time of a fresh pytest process, best of "
        f"{args.repeat} for the cold collection, {args.repeat * FULL_ROUNDS} for each full "
        f"run (the first after collection each time from the caches collection left; the "
        f"reference .py tree whose rows are not reported: {args.repeat}), "
        f"{args.repeat * WARM_ROUNDS} for the warm collections "
        f"({args.repeat * WARM_ALONE_ROUNDS} with plugin autoloading off); every "
        "installed plugin loaded on both sides but randomly, xdist and rerunfailures, "
        "unless the row says plugin autoloading off; "
        "cold = no .pytest_cache and no __pycache__ (the cold collection runs with "
        "plugin autoloading off); cold collection "
        "compiles each file's Python (cases assertion-rewritten) into .pytest_cache as "
        "pytest writes .pyc files, and both full runs read it from there; the trees take "
        "each step one after the other (runs compared are seconds apart), after an "
        "unmeasured run of one file of each tree (modules byte-compiled)"
    )
    loop = "a .py suite test scores its rows in a loop: 3 results per file, no row reported"
    reported = (
        "a .py suite test reports each row through pytest's subtests fixture, as a .kedi "
        "suite reports its rows (3 tests and 5 sub-results per file on both sides): the "
        "full-run goal is stated on this baseline, which shows a user the same results"
    )
    results: list[Result] = []
    every = (
        "with every installed plugin loaded on both sides (the dev extra's hypothesis, "
        "pytest-html, allure ...: about half a second of start-up, much of it at the "
        "session's end, for both trees alike), a reference; the goal is stated on the same "
        "step with pytest and pytest-kedi only, as pytest-kedi's own cost"
    )
    rows: tuple[tuple[str, str, str, str, float | None, str], ...] = (
        (
            "cold-alone",
            "--collect-only, cold caches, plugin autoloading off",
            "py",
            "equivalent .py test modules, pytest alone",
            1.0,
            ALONE,
        ),
        (
            "warm-alone",
            "--collect-only, warm caches, plugin autoloading off",
            "py",
            "equivalent .py test modules, pytest alone",
            0.5,
            ALONE,
        ),
        (
            "warm",
            "--collect-only, warm caches, every plugin",
            "py",
            "equivalent .py test modules",
            None,
            every,
        ),
        (
            "first",
            "full run (--kedi-eval), first after collection",
            "py",
            ".py modules, rows scored in a loop",
            None,
            loop,
        ),
        (
            "run",
            "full run (--kedi-eval), warm caches",
            "py",
            ".py modules, rows scored in a loop",
            None,
            loop,
        ),
        (
            "first",
            "full run (--kedi-eval), first after collection, rows reported on both sides",
            "sub",
            ".py modules, rows as subtests",
            1.0,
            reported,
        ),
        (
            "run",
            "full run (--kedi-eval), warm caches, rows reported on both sides",
            "sub",
            ".py modules, rows as subtests",
            1.0,
            reported,
        ),
        (
            "run-alone",
            "full run (--kedi-eval), warm caches, rows reported on both sides, plugin "
            "autoloading off",
            "sub",
            ".py modules, rows as subtests, pytest alone",
            1.0,
            f"{reported}; {ALONE}",
        ),
    )
    for key, label, base, name, goal, why in rows:
        ours, theirs = figures[f"kedi-{key}"], figures[f"{base}-{key}"]
        ratio = ours / theirs
        results.append(
            Result(
                benchmark=f"{files:,} files: {label}",
                ours=f"{ours:.2f} s CPU",
                baseline=f"{theirs:.2f} s CPU ({name})",
                ratio=ratio,
                goal=REFERENCE if goal is None else f"<= {goal:g}x",
                met=goal is None or ratio <= goal,
                note=f"{method}; {why}" if why else method,
            )
        )
    ours, floor_cpu, theirs = (figures[f"{n}-warm-alone"] for n in ("kedi", "floor", "py"))
    results.insert(
        2,
        Result.reference(
            benchmark=f"{files:,} files: --collect-only, warm caches, plugin autoloading off: "
            "pytest's floor for the same node tree",
            ours=f"{floor_cpu:.2f} s CPU (a plugin making the same nodes, reading nothing)",
            baseline=f"{theirs:.2f} s CPU (equivalent .py test modules, pytest alone)",
            ratio=floor_cpu / theirs,
            note=(
                f"{method}; the same .kedi files collected by a plugin that makes the nodes "
                "pytest-kedi makes (per file: a file collector, an eval item, a @test: "
                "collector and two case items, with the same names and marks) and reads "
                "no file: pytest's own cost of the node ids pytest-kedi gives, the least "
                f"any plugin giving them pays (best of {args.repeat * WARM_ROUNDS}); "
                "pytest-kedi's own figure is "
                f"{ours / floor_cpu:.2f}x this floor; {ALONE}"
            ),
        ),
    )
    emit(results, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
