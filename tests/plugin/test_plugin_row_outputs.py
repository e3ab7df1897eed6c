"""What happened in a row: ``output`` and, with ``--kedi-trace``, ``calls`` in every view."""

from __future__ import annotations

import json

import pytest
from kedi_plugin_helpers import Kedi

from pytest_kedi.plugin.records import REPORT_VERSION

LABEL = """\
@label(text: str) -> str:
  = `"billing" if "delete" in text else "account"`

@eval: label:
  > data: tickets:
    = `[("Where is my invoice?", "account"), ("How do I delete my account?", "account")]`
  > metric: exact(tickets):
    = `label(tickets) == expected`
"""

#: the metric stands in for the model boundary: one traced call per row when tracing is on
TRACED = """\
@eval: traced:
  > data: xs:
    = `["a"]`
  > metric: m(xs):
    = `(lambda s: s.trace and (s.calls.append(__import__("pytest_kedi.runtime.rowscope", fromlist=["x"]).ModelCallTrace("test", "say " + xs, None, xs.upper(), 3, 1, 0.5)) or True))(__import__("pytest_kedi.runtime.rowscope", fromlist=["x"]).current())`
"""  # noqa: E501


def test_reports_carry_each_rows_output(kedi: Kedi) -> None:
    kedi.write("label.kedi", LABEL)
    kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-rows-jsonl", "rows.jsonl")
    report = kedi.json("r.json")
    assert report["version"] == REPORT_VERSION == 3
    rows = report["suites"][0]["rows"]
    assert [(row["output"], row["calls"]) for row in rows] == [("'account'", []), ("'billing'", [])]
    lines = (kedi.pytester.path / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["output"] for line in lines] == ["'account'", "'billing'"]


def test_failed_suite_shows_the_output_of_its_worst_rows(kedi: Kedi) -> None:
    kedi.write("label.kedi", LABEL)
    result = kedi.run("--kedi-eval", "--kedi-min-score", "0.9")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "worst rows (1 of 2):",
            "  row 1: score 0.0000 | input 'How do I delete my account?' | expected 'account' "
            "| output 'billing'",
        ]
    )


@pytest.mark.parametrize("rows", ["summary", "subtests"])
def test_verbose_row_lines_show_input_expected_and_output(kedi: Kedi, rows: str) -> None:
    # the same line as the worst rows of a failed suite (the format)
    kedi.write("label.kedi", LABEL)
    result = kedi.run("--kedi-eval", "--kedi-rows", rows, "-v")
    result.stdout.fnmatch_lines(
        [
            "    row 0: score 1.0000 | input 'Where is my invoice?' | expected 'account' "
            "| output 'account'",
            "    row 1: score 0.0000 | input 'How do I delete my account?' | expected 'account' "
            "| output 'billing'",
        ]
    )


def test_row_hook_receives_the_output(kedi: Kedi) -> None:
    kedi.write("label.kedi", LABEL)
    kedi.write(
        "conftest.py",
        "def pytest_kedi_row_result(item, row):\n"
        "    with open('seen.txt', 'a', encoding='utf-8') as f:\n"
        "        f.write(f'{row.index} {row.output}\\n')\n",
    )
    kedi.run("--kedi-eval").assert_outcomes(passed=1)
    seen = (kedi.pytester.path / "seen.txt").read_text(encoding="utf-8").splitlines()
    assert seen == ["0 'account'", "1 'billing'"]


@pytest.mark.parametrize(
    ("how", "env"), [("flag", None), ("env", "1"), ("ini", None), ("off", None)]
)
def test_trace_records_the_rows_model_calls(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, how: str, env: str | None
) -> None:
    kedi.write("traced.kedi", TRACED)
    args = ["--kedi-eval", "--kedi-report", "r.json"]
    if how == "flag":
        args.append("--kedi-trace")
    elif how == "env":
        monkeypatch.setenv("KEDI_TRACE", "1")
    elif how == "ini":
        kedi.write("pytest.ini", "[pytest]\nkedi_trace = true\n")
    kedi.run(*args)
    (row,) = kedi.json("r.json")["suites"][0]["rows"]
    if how == "off":
        assert (row["score"], row["calls"]) == (0.0, [])
        return
    assert row["score"] == 1.0
    assert row["calls"] == [
        {
            "model": "test",
            "prompt": "say a",
            "instructions": None,
            "answer": "A",
            "input_tokens": 3,
            "output_tokens": 1,
            "duration_s": 0.5,
        }
    ]


def test_the_rows_section_has_one_row_line_per_row() -> None:
    # The section writes its commonest row in one step: every shape reads as `row_line`.
    from pytest_kedi.evals import RowResult
    from pytest_kedi.plugin.rows import row_label, row_line, rows_section

    rows = [
        RowResult(0, "'w w'", "2", 1.0, None, None, None, 0.1, output="2"),
        RowResult(1, "'w'", "2", 0.0, "off by one", None, None, 0.1, output="1"),
        RowResult(2, "'w'", None, 1.0, None, None, None, 0.1, output="1"),
        RowResult(3, None, None, 0.25, None, None, None, 0.1),
        RowResult(4, "'w'", "1", 0.5, None, None, None, 0.1, scores=[1.0, 0.0], output="1"),
        RowResult(5, "'w'", "1", 1.0, None, None, None, 0.1, carried_over=True, output="1"),
        RowResult(6, "'x'", "1", 0.0, "error: boom", "boom", "runtime", 0.1),
        RowResult(7, "'w'", "1", 1 / 3, None, None, None, 0.1, output="'a\\nb'"),
        RowResult(8, "'w'", "1", 1.0, "", None, None, 0.1, output="1"),
    ]
    assert rows_section(rows) == "\n".join(row_line(row, limit=400) for row in rows)
    # an empty feedback is none: no trailing ` | ` on the row's line or its sub-result label
    assert rows_section(rows).splitlines()[8] == (
        "row 8: score 1.0000 | input 'w' | expected 1 | output 1"
    )
    assert row_label(rows[8]) == "row 8: 1.0000"
    assert rows_section(rows).splitlines()[0] == (
        "row 0: score 1.0000 | input 'w w' | expected 2 | output 2"
    )


#: `other` is named after no procedure and `shout` after another one than `label`: their
#: rows' outputs are not `label`'s, whether or not `label`'s suite ran before in the process
AFTER_LABEL = (
    LABEL
    + """
@shout(text: str) -> str:
  = `text.upper()`

@eval: other:
  > data: xs:
    = `["delete it"]`
  > metric: m(xs):
    = `label(xs) == "billing"`

@eval: shout:
  > data: xs:
    = `["delete it"]`
  > metric: m(xs):
    = `label(xs) == "billing" and shout(xs) == "DELETE IT"`
"""
)


def test_a_suite_records_only_its_own_procedures_output(kedi: Kedi) -> None:
    """Once `label`'s suite had run in a process, every later row of any suite there that
    called `label` showed its return values as its output (`null` expected, as under xdist
    when the suites ran in other workers)."""
    kedi.write("label.kedi", AFTER_LABEL)
    kedi.run("--kedi-eval", "-p", "no:randomly", "--kedi-report", "r.json")
    suites = kedi.json("r.json")["suites"]
    outputs = {suite["procedure"]: [row["output"] for row in suite["rows"]] for suite in suites}
    assert outputs == {
        "label": ["'account'", "'billing'"],
        "other": [None],
        "shout": ["'DELETE IT'"],
    }
