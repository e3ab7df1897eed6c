"""Building a model (importing pydantic-ai and the provider's SDK, making its client) is a
one-time cost that ``--kedi-timeout`` does not charge to the row that calls first."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.test import TestModel

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load
from pytest_kedi.runtime.model import adapter

CALLS = """
    @echo(x: str) -> str:
      > model: slow:other
      [a] << Say <x>.
      = <a>

    @eval: calls:
      > data: xs:
        = `["a", "b"]`
      > metric: m(xs):
        = `1.0 if echo(xs) else 0.0`
"""

PLAIN = """
    @eval: plain:
      > data: xs:
        = `[1, 2]`
      > metric: m(xs):
        = `xs > 0`
"""


def _program(tmp_path: Path, source: str, **options: Any) -> Any:
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return load(str(path), mode="validate", **options)


def test_a_slow_first_model_build_is_not_a_row_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []

    def slow_build(name: str, **kwargs: Any) -> TestModel:
        time.sleep(0.6)  # a provider SDK imported on a loaded machine
        built.append(name)
        return TestModel()

    monkeypatch.setattr(adapter, "resolve_model", slow_build)
    program = _program(tmp_path, CALLS, default_model="slow:default")
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite, EvalOptions(timeout=0.4))
    assert [row.error for row in result.rows] == [None, None]
    assert result.score == 1.0
    assert built == ["slow:default", "slow:other"]  # the default, and `> model:`'s


def test_a_suite_making_no_model_call_builds_no_model(tmp_path: Path) -> None:
    program = _program(tmp_path, PLAIN)
    (suite,) = program.module.eval_suites
    assert run_suite(program, suite, EvalOptions(timeout=5)).score == 1.0
    assert program._unit.runtime._boundary is None  # pydantic-ai not even imported for it
