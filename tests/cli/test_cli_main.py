"""`cli.main` in-process against a stand-in program: report formats and exit codes."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi import cli, evals, runtime
from pytest_kedi.evals import SuiteResult
from pytest_kedi.lang import nodes, parse
from pytest_kedi.runtime.errors import KediExecutionError, KediTraceFrame

SOURCE = textwrap.dedent("""
    @test: alpha:
      > case: one:
        `assert True`
      > case: two:
        `assert False`
      > case: three:
        `assert False`

    @eval: alpha:
      > data: rows:
        = `[1]`
      > metric: m(rows):
        = `1.0`

    @eval: beta:
      > data: rows:
        = `[1]`
      > metric: n(rows):
        = `1.0`
    """).lstrip()


class StandIn:
    """The `Program` surface the CLI uses, with scripted outcomes."""

    loads: list[dict[str, Any]] = []

    def __init__(
        self, path: str, mode: str, default_model: str | None, args: dict[str, Any]
    ) -> None:
        self.module = parse(Path(path).read_text(encoding="utf-8"), path=path)
        self.args = dict(args)
        self.returned = False
        StandIn.loads.append({"path": path, "mode": mode, "default_model": default_model})

    def run(self) -> Any:
        self.returned = True
        return {"args": self.args}

    def generated_test_suites(self) -> tuple[nodes.TestSuite, ...]:
        return ()  # no `> auto:` cache

    def run_case(self, suite: nodes.TestSuite, case: nodes.Case) -> None:
        frame = KediTraceFrame("case", case.name, case.span)
        if case.name == "two":
            raise KediExecutionError("boom", frames=[frame], original=AssertionError("nope"))
        if case.name == "three":
            raise KediExecutionError("", frames=[frame], original=AssertionError())


def _suite_result(suite: str, metric: str, *, feedback: str | None, error: str | None) -> Any:
    return SuiteResult(
        suite=suite,
        metric=metric,
        dataset="rows",
        split="data",
        score=0.75,
        rows=[],
        rows_total=4,
        rows_errored=0,
        errors_by_class={},
        feedback=feedback,
        error=error,
        duration_s=0.0,
    )


@pytest.fixture
def program_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "prog.kedi"
    path.write_text(SOURCE, encoding="utf-8")
    StandIn.loads = []

    def load(
        path: str, *, mode: str = "run", default_model: str | None = None, args: Any = None
    ) -> StandIn:
        return StandIn(path, mode, default_model, args or {})

    # Set the module global directly: `pytest_kedi.runtime.load` is resolved lazily.
    monkeypatch.setitem(vars(runtime), "load", load)
    return str(path)


def test_program_run_prints_result_and_fills_args(program_file, capsys) -> None:
    code = cli.main([program_file, "--model", "groq/x", "--who", "Ada", "--dry-run"])
    out, err = capsys.readouterr()
    assert (out, err, code) == ("{'args': {'who': 'Ada', 'dry_run': True}}\n", "", 0)
    assert StandIn.loads == [{"path": program_file, "mode": "run", "default_model": "groq/x"}]


def test_tests_block(program_file, capsys) -> None:
    code = cli.main([program_file, "--test"])
    out, err = capsys.readouterr()
    assert out == (
        "Tests:\n"
        "- alpha::one: OK\n"
        "- alpha::two: FAIL | AssertionError: nope\n"
        "- alpha::three: FAIL | AssertionError: \n"
    )
    assert (err, code) == ("", 1)
    assert [load["mode"] for load in StandIn.loads] == ["validate"]


def test_evals_block_and_suite_errors(program_file, capsys, monkeypatch) -> None:
    seen: list[tuple[str, Any]] = []

    def run_suite(program: Any, suite: nodes.EvalSuite, options: Any) -> Any:
        seen.append((suite.name, options))
        if suite.name == "alpha":
            return _suite_result("alpha", "m", feedback="a; b", error=None)
        return _suite_result("beta", "n", feedback=None, error="missing dataset 'x'")

    monkeypatch.setattr(evals, "run_suite", run_suite)
    code = cli.main([program_file, "--eval"])
    out, err = capsys.readouterr()
    assert out == "Evals:\n- alpha::m: 0.7500 | a; b\n"
    assert err == "Kedi eval error: beta::n: missing dataset 'x'\n"
    assert code == 1
    assert [name for name, _ in seen] == ["alpha", "beta"]
    # no row limit: `--kedi-max-rows` (and its message) belong to pytest runs
    assert seen[0][1] == evals.EvalOptions(max_rows=None, outcomes=True)


def test_completed_evals_exit_0_and_omit_empty_feedback(program_file, capsys, monkeypatch):
    def run_suite(program: Any, suite: nodes.EvalSuite, options: Any) -> Any:
        return _suite_result(suite.name, suite.metric.name, feedback=None, error=None)

    monkeypatch.setattr(evals, "run_suite", run_suite)
    code = cli.main([program_file, "--eval"])
    out, err = capsys.readouterr()
    assert (out, err, code) == ("Evals:\n- alpha::m: 0.7500\n- beta::n: 0.7500\n", "", 0)


def test_internal_errors_are_one_line(program_file, capsys, monkeypatch) -> None:
    def explode(self: StandIn) -> Any:
        raise RuntimeError("bug\nsecond line")

    monkeypatch.setattr(StandIn, "run", explode)
    assert cli.main([program_file]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", "pytest-kedi internal error: RuntimeError: bug second line\n")


def test_kedi_errors_are_rendered(program_file, capsys, monkeypatch) -> None:
    def fail(self: StandIn) -> Any:
        raise KediExecutionError("x", original=ZeroDivisionError("division by zero"))

    monkeypatch.setattr(StandIn, "run", fail)
    assert cli.main([program_file]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", "Kedi stack trace:\nZeroDivisionError: division by zero\n")
