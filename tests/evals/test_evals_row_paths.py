"""Rows run once and not carried over take `run_suite`'s direct path (no repeat
bookkeeping); it must score, report and order rows exactly like the general path."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.evals import EvalOptions, RowResult, run_suite
from pytest_kedi.evals.usage import NO_USAGE
from pytest_kedi.runtime import load
from pytest_kedi.runtime.rowscope import current

SOURCE = """\
@label(text: str) -> str:
  = `"billing" if "bill" in text else "account"`

@eval: label:
  > data: tickets:
    = `[("delete my account", "account"), ("my bill", "account"), (None, "x"), ("bill", 0.5)]`
  > metric: exact(tickets):
    = `expected if isinstance(expected, float) else label(tickets) == expected`
"""


def _comparable(row: RowResult) -> dict[str, Any]:
    data = row.to_json()
    del data["duration_s"]
    return data


def _run(tmp_path: Path, options: EvalOptions, *, carry: bool) -> tuple[list[Any], list[Any]]:
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(SOURCE), encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    seen: list[RowResult] = []
    result = run_suite(
        program,
        suite,
        options,
        on_row=seen.append,
        # Carrying nothing over still takes the general path (repeat bookkeeping).
        carry=(lambda index, shown, wanted: None) if carry else None,
    )
    assert [row.index for row in seen] == [row.index for row in result.rows]
    return [_comparable(row) for row in result.rows], [_comparable(row) for row in seen]


@pytest.mark.parametrize("concurrency", [1, 3])
@pytest.mark.parametrize("timeout", [None, 30.0])
def test_rows_run_once_score_like_the_general_path(
    tmp_path: Path, concurrency: int, timeout: float | None
) -> None:
    options = EvalOptions(concurrency=concurrency, timeout=timeout)
    direct = _run(tmp_path, options, carry=False)
    general = _run(tmp_path, options, carry=True)
    assert direct == general
    rows, _ = direct
    assert [(row["index"], row["score"], row["error_class"]) for row in rows] == [
        (0, 1.0, None),
        (1, 0.0, None),
        (2, 0.0, "type"),
        (3, 0.5, None),
    ]


def test_a_row_without_model_requests_shares_the_empty_usage(tmp_path: Path) -> None:
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(SOURCE), encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite)
    assert all(row.usage is NO_USAGE and not row.usage for row in result.rows)
    assert current() is None  # every row's scope was left, the failing row's too
