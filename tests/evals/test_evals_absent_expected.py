"""A row without ``expected`` reads no ``expected`` at all (docs/language.md#scoring): a
top-level binding, a prelude global or an imported value named ``expected`` stays hidden
from the metric, on every path a metric runs (one expression with a dictionary of
bindings, as a function of the row's values for many rows, the interpreter for other
bodies, the dataset-free metric)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_kedi.evals import run_suite
from pytest_kedi.runtime import load

MISSING_TEXT = "error: NameError: name 'expected' is not defined"

OUTER = {
    "prelude": "```\nexpected = 5\n```\n",
    "binding": "[expected: int] = `5`\n",
    "import": "> import: lib\n",
    "none": "",
}

METRICS = {
    "expression": "    = `(1.0, str(expected))`\n",
    "fence": "    = ```\n    return (1.0, str(expected))\n    ```\n",
    "statements": "    [one: int] = `1`\n    = `(1.0, str([expected for _ in 'a']))`\n",
    "block": "    ```\n    seen = expected\n    ```\n    = `(1.0, 'ok')`\n",
}


def _suite(tmp_path: Path, outer: str, metric: str, rows: str) -> list[tuple[float, str | None]]:
    (tmp_path / "lib.kedi").write_text("[expected: int] = `5`\n> export: *\n", encoding="utf-8")
    source = OUTER[outer] + (
        "\n@eval: s:\n  > data: rows:\n    = `" + rows + "`\n  > metric: m(rows):\n"
    )
    path = tmp_path / "suite.kedi"
    path.write_text(source + METRICS[metric], encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    return [(row.score, row.feedback) for row in run_suite(program, suite).rows]


@pytest.mark.parametrize("metric", sorted(METRICS))
@pytest.mark.parametrize("outer", sorted(OUTER))
def test_a_row_without_expected_does_not_read_an_outer_one(
    tmp_path: Path, outer: str, metric: str
) -> None:
    rows = _suite(tmp_path, outer, metric, '[("a",), ("b", 3), "c"]')
    scored = "ok" if metric == "block" else "[3]" if metric == "statements" else "3"
    assert rows == [(0.0, MISSING_TEXT), (1.0, scored), (0.0, MISSING_TEXT)]


@pytest.mark.parametrize("first", ["without", "with"])
@pytest.mark.parametrize("outer", ["prelude", "binding"])
def test_many_rows_without_expected_do_not_read_an_outer_one(
    tmp_path: Path, outer: str, first: str
) -> None:
    # Hundreds of rows: the metric runs as a function of the row's values.
    odd = "(i,)" if first == "with" else "(i, 1)"
    even = "(i, 1)" if first == "with" else "(i,)"
    rows = _suite(
        tmp_path, outer, "expression", f"[{odd} if i % 2 else {even} for i in range(300)]"
    )
    want = [(0.0, MISSING_TEXT), (1.0, "1")]
    assert rows == [want[(i + (first == "with")) % 2] for i in range(300)]


def test_a_procedure_the_metric_calls_still_reads_the_top_level_expected(
    tmp_path: Path,
) -> None:
    source = """\
        [expected: int] = `5`

        @peek() -> int:
          = `expected`

        @eval: s:
          > data: rows:
            = `[("a",)]`
          > metric: m(rows):
            = `(1.0, str(peek()))`
        """
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    assert [row.feedback for row in run_suite(program, suite).rows] == ["5"]


def test_the_dataset_free_metric_has_no_expected(tmp_path: Path) -> None:
    source = "```\nexpected = 5\n```\n\n@eval: s:\n  > metric: m:\n    = `(1.0, str(expected))`\n"
    path = tmp_path / "suite.kedi"
    path.write_text(source, encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite)
    assert (result.score, result.feedback) == (0.0, MISSING_TEXT)


def test_a_hidden_expected_cannot_be_updated(tmp_path: Path) -> None:
    # `:=` needs a binding: the row has none, whatever the top level binds.
    source = (
        '[expected: int] = `5`\n\n@eval: s:\n  > data: rows:\n    = `[("a",)]`\n'
        "  > metric: m(rows):\n    [expected] := `6`\n    = `1.0`\n"
    )
    path = tmp_path / "suite.kedi"
    path.write_text(source, encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    (row,) = run_suite(program, suite).rows
    assert row.feedback is not None
    assert "no Kedi binding 'expected' to update with :=" in row.feedback
