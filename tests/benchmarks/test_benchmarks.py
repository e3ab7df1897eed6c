"""Every benchmark script runs at its quick size with exit 0, and exits non-zero when a
measurement fails (run as a user runs them: ``python benchmarks/<name>.py --quick``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
CORPUS = ROOT.parent / "shared" / "corpus" / "kedi" / "MANIFEST.json"


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KEDI_", "PYTEST_")) and k != "TEAMCITY_VERSION"
    }
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _patched(script: str, patch: str, call: str) -> subprocess.CompletedProcess[str]:
    """Import a benchmark script as a module, apply ``patch`` and evaluate ``call``."""
    code = (
        "import runpy, sys\n"
        f"sys.path.insert(0, {str(BENCHMARKS)!r})\n"
        f"import {script} as bench\n"
        f"{patch}\n"
        f"sys.exit({call})\n"
    )
    return _run("-c", code)


def test_eval_throughput_quick_measures_through_pytest_too() -> None:
    result = _run("benchmarks/eval_throughput.py", "--quick")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(a) pytest --kedi-eval --kedi-concurrency 20:" in result.stdout
    assert "summary: (a) " in result.stdout


def test_eval_throughput_fails_when_the_pytest_run_fails(tmp_path: Path) -> None:
    result = _patched(
        "eval_throughput",
        'bench.MODEL_PROGRAM = "@broken(:\\n"',
        f"bench.bench_latency_pytest(__import__('pathlib').Path({str(tmp_path)!r}), 4, 2)",
    )
    assert result.returncode != 0
    assert "benchmark pytest run failed (exit 1)" in result.stderr


def test_eval_throughput_fails_when_rows_do_not_score() -> None:
    result = _patched(
        "eval_throughput",
        "bench.TYPED_PROGRAM = bench.TYPED_PROGRAM.replace('len(text.split())', '1 / 0')",
        "bench.main(['--quick', '--no-pytest'])",
    )
    assert result.returncode != 0
    assert "benchmark suite did not score cleanly" in result.stderr


def test_call_overhead_quick_reports_every_shape(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    result = _run("benchmarks/call_overhead.py", "--quick", "--json", str(target))
    assert result.returncode == 0, result.stdout + result.stderr
    names = [entry["benchmark"] for entry in json.loads(target.read_text())]
    assert names == [
        "procedure call: expression return",
        "procedure call: text return",
        "procedure call: two-statement body",
        "procedure call: nested <call(...)>",
        "procedure call: fenced Python loop",
        "procedure call: fenced Python loop reading a parameter, a builtin and a binding",
    ]


def test_call_overhead_fails_on_a_wrong_result() -> None:
    result = _patched(
        "call_overhead", "bench.SOURCE = bench.SOURCE.replace('a + b', 'a - b')", "bench.main([])"
    )
    assert result.returncode == 1
    assert "add(2, 3) returned -1, not 5: not measured" in result.stderr


def test_run_writes_one_table_from_the_scripts_it_runs(tmp_path: Path) -> None:
    # Each script's own quick run is checked by its own test; this one checks the table.
    output = tmp_path / "RESULTS.md"
    done = _run(
        "benchmarks/run.py", "--quick", "--only", "call_overhead", "loading_scale",
        "--output", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    text = output.read_text()
    assert "| benchmark | ours | baseline | ratio | goal | met |" in text
    assert "`nproc`" in text
    assert "| `call_overhead.py` |" in text
    assert "| `loading_scale.py` |" in text
    assert "| `parse_speed.py` |" not in text
    assert "| procedure call: expression return |" in text


def test_run_names_a_failing_script_and_exits_non_zero(tmp_path: Path) -> None:
    output = tmp_path / "RESULTS.md"
    code = (
        "import sys; sys.path.insert(0, 'benchmarks'); import run, pathlib\n"
        "broken = pathlib.Path(sys.argv[1]) / 'broken.py'\n"
        "broken.write_text('raise SystemExit(\"no measurement\")\\n')\n"
        "run.scripts = lambda only: [broken]\n"
        "sys.exit(run.main(['--quick', '--output', sys.argv[2]]))\n"
    )
    done = _run("-c", code, str(tmp_path), str(output))
    assert done.returncode == 1
    assert "| `broken.py` |" in output.read_text()
    assert "FAILED: exit 1: no measurement" in output.read_text()


def test_run_only_rejects_an_unknown_name() -> None:
    done = _run("benchmarks/run.py", "--only", "no_such_benchmark")
    assert done.returncode != 0
    assert "no benchmark named no_such_benchmark" in done.stderr


@pytest.mark.skipif(not CORPUS.is_file(), reason="Kedi corpus not available (../shared/corpus)")
def test_parse_speed_quick(tmp_path: Path) -> None:
    out = tmp_path / "parse.json"
    profile = tmp_path / "profile.md"
    result = _run(
        "benchmarks/parse_speed.py", "--quick", "--json", str(out), "--profile", str(profile)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads(out.read_text())
    assert "-line program, unique identifiers" in rows[-1]["benchmark"]
    assert rows[-1]["goal"] == ">= 0.05x tree-sitter"
    assert len(result.stdout.splitlines()) == len(rows)
    assert "| line scanner (`scanner.scan`) |" in profile.read_text()


def test_parse_speed_renames_every_identifier_but_keywords_and_directives() -> None:
    result = _patched(
        "parse_speed",
        "print(bench.rename("
        "'@f(a: str) -> str:\\n  > model: m\\n  = r\"<a>\" if a else <a>', '7'))",
        "0",
    )
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout
        == '@f_7(a_7: str_7) -> str_7:\n  > model: m_7\n  = r"<a_7>" if a_7 else <a_7>\n'
    )


def test_parse_speed_fails_without_its_corpus(tmp_path: Path) -> None:
    result = _patched(
        "parse_speed",
        f"bench.CORPUS = __import__('pathlib').Path({str(tmp_path)!r})",
        "bench.main([])",
    )
    assert result.returncode == 2
    assert "corpus not found" in result.stderr


def test_loading_scale_quick() -> None:
    done = _run(str(BENCHMARKS / "loading_scale.py"), "--quick")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for shape in ("bindings", "procedures"):
        for mode in ("validate", "run"):
            assert any(line.split()[:2] == [shape, mode] and "x" in line for line in lines)
    assert "FAILED" not in done.stdout


def test_model_boundary_quick(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("benchmarks/model_boundary.py", "--quick", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert [r["benchmark"] for r in results] == [
        "model call CPU overhead vs Agent.run",
        "model call CPU overhead vs pydantic_ai.direct.model_request",
    ]
    assert all(r["ratio"] > 0 and r["goal"] == "<= 0.3 ms/call" for r in results)


def test_model_boundary_fails_on_a_wrong_answer() -> None:
    done = _patched(
        "model_boundary",
        "bench.SOURCE = bench.SOURCE.replace('`response`', \"`'no'`\")",
        "bench.main(['--quick'])",
    )
    assert done.returncode != 0
    assert "did not answer 'yes': not measured" in done.stderr


def test_latency_overlap_quick(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("benchmarks/latency_overlap.py", "--quick", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert [r["goal"] for r in results] == ["<= 1.15x", "< 1x"]
    assert "pydantic-evals" in results[1]["benchmark"]
    assert "Dataset.evaluate" in results[1]["baseline"]


def test_latency_overlap_fails_when_rows_do_not_score() -> None:
    done = _patched(
        "latency_overlap",
        "bench.PROGRAM = bench.PROGRAM.replace('== expected', \"== 'no'\")",
        "bench.main(['--quick'])",
    )
    assert done.returncode != 0
    assert "the suite did not score cleanly" in done.stderr


def test_xdist_scaling_quick(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run(str(BENCHMARKS / "xdist_scaling.py"), "--quick", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    names = [result["benchmark"] for result in json.loads(out.read_text(encoding="utf-8"))]
    assert names == [
        "xdist wall time, 8 CPU-bound suites",
        "xdist CPU time, 8 CPU-bound suites",
        "xdist start-up overhead per worker",
    ]


def test_xdist_scaling_fails_when_a_suite_does_not_score(tmp_path: Path) -> None:
    patch = (
        "bench.SUITE = bench.SUITE.replace('>= 0', '< 0')\n"
        f"folder = __import__('pathlib').Path({str(tmp_path)!r})\n"
        "bench.write_suites(folder, 2, 10)"
    )
    result = _patched("xdist_scaling", patch, "bench.best(folder, 0, repeat=1)")
    assert result.returncode != 0
    assert "benchmark suites did not all score 1.0 under -n 0" in result.stderr


def _collected_ids(folder: Path, *plugin: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KEDI_", "PYTEST_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *plugin],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_collection_floor_makes_the_nodes_pytest_kedi_makes(tmp_path: Path) -> None:
    """The floor reference of `collection.py` collects the same node ids, and gives its
    items the same marks, as pytest-kedi does on the same files (else it is no floor)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import collection
    finally:
        sys.path.remove(str(BENCHMARKS))
    kedi, _py, _sub, floor = collection.generate(tmp_path, 2)
    ours = _collected_ids(kedi, "-p", "pytest_kedi.plugin")
    assert len(ours) == 6
    assert _collected_ids(floor, "-p", "kedi_floor") == ours
    for marks in ("kedi and kedi_eval", "kedi and kedi_test"):
        selected = _collected_ids(kedi, "-p", "pytest_kedi.plugin", "-m", marks)
        assert selected
        assert _collected_ids(floor, "-p", "kedi_floor", "-m", marks) == selected


@pytest.mark.parametrize(
    ("script", "count"),
    [("collection", 9), ("row_overhead", 8), ("memory", 3), ("replay_cost", 3)],
)
def test_script_quick_writes_its_results(tmp_path: Path, script: str, count: int) -> None:
    target = tmp_path / "results.json"
    done = _run(f"benchmarks/{script}.py", "--quick", "--json", str(target))
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(target.read_text())
    assert len(results) == count
    for entry in results:
        assert set(entry) == {"benchmark", "ours", "baseline", "ratio", "goal", "met", "note"}
        assert entry["ratio"] > 0


def test_a_quick_or_partial_run_prints_its_table_and_keeps_the_results_file() -> None:
    """`run.py --quick` (or `--only`) overwrote the committed benchmarks/RESULTS.md with a
    smoke table; without `--output` it now prints the table instead."""
    results = ROOT / "benchmarks" / "RESULTS.md"
    before = results.read_bytes()
    done = _run("benchmarks/run.py", "--quick", "--only", "call_overhead")
    assert done.returncode == 0, done.stdout + done.stderr
    assert results.read_bytes() == before
    assert "| procedure call: expression return |" in done.stdout
    assert "wrote" not in done.stdout
