"""The Markdown summary: suites table, worst rows of failed suites, cell escaping."""

from __future__ import annotations

from viewer_reports import full_report, rescored, v1_report

from pytest_kedi.viewer import render_markdown, run_view
from pytest_kedi.viewer.markdown import cell


def _table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            # split on unescaped pipes only
            parts, current, escaped = [], "", False
            for char in line[1:-1]:
                if char == "|" and not escaped:
                    parts.append(current.strip())
                    current = ""
                else:
                    current += char
                escaped = char == "\\" and not escaped
            parts.append(current.strip())
            rows.append(parts)
    return rows


def test_suites_table_and_worst_rows() -> None:
    text = render_markdown([run_view(full_report(), label="r")])
    assert text.startswith("### pytest-kedi: ❌ FAILED\n")
    assert "models: openai:gpt-4o-mini (42 calls), test (3 calls)" in text
    rows = _table_rows(text)
    assert rows[0] == ["Suite", "Score", "Threshold", "Verdict", "Δ", "Errors"]
    assert rows[1] == [
        "classify::exact",
        "0.5000 (95% CI 0.3100 to 0.6900)",
        "0.9000",
        "❌ FAILED",
        "-0.2500",
        "model 1",
    ]
    assert rows[2][3:5] == ["✅ passed", "+0.1000"]
    assert rows[3][5] == "suite error: the dataset failed to load: KeyError: 'x'"
    assert "#### Worst rows of classify::exact (3 of 5)" in text
    worst = rows[5:8]  # header of the worst-rows table is rows[4]
    assert rows[4] == ["Row", "Score", "Input", "Expected", "Output", "Feedback / error"]
    assert [r[0] for r in worst] == ["3", "1", "2"]  # lowest score first, errors first on ties


def test_cells_escape_pipes_newlines_and_markup() -> None:
    assert cell("a|b\nc") == "a\\|b<br>c"
    assert cell("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert cell("*bold* _x_ `code` [link](u)") == "\\*bold\\* \\_x\\_ \\`code\\` \\[link\\](u)"
    assert cell(None) == "—" and cell("x" * 300).endswith("…")

    text = render_markdown([run_view(full_report(), label="r")])
    error_row = next(r for r in _table_rows(text) if r[0] == "3")
    assert error_row[-1] == "model: KediModelError: model call failed \\| boom<br>second line"
    assert all(line.count("<script") == 0 for line in text.splitlines())


def test_cells_show_control_characters_as_escapes() -> None:
    """An ESC in feedback or a skip reason was written raw into the Markdown report (and so
    into ``$GITHUB_STEP_SUMMARY``): `cat` of the file restyled the terminal."""
    assert cell("x \x1b[31mred") == "x \\\\x1b\\[31mred"
    assert cell("a\r\nb\x00") == "a<br>b\\\\x00"
    assert "\x1b" not in cell("\x1b\n\x1b")


def test_delta_against_previous_run_and_passing_run() -> None:
    old = v1_report()
    new = rescored(old, {1: 1.0})
    runs = [run_view(old, label="old"), run_view(new, label="new")]
    text = render_markdown(runs)
    assert _table_rows(text)[1][4] == "+0.3333"
    assert "Worst rows" not in text and text.startswith("### pytest-kedi: ✅ passed")


def test_no_suites() -> None:
    text = render_markdown([run_view({"version": 1, "suites": [], "tests": []}, label="r")])
    assert "No eval suite ran." in text


def test_counts_read_right_in_the_singular() -> None:
    text = render_markdown([run_view(v1_report(), label="r")])
    assert "1 suite (0 failed)" in text and "1 suites" not in text
    assert "3 rows (" in text
    # the test cases and a model's calls read as the suites and rows do (and as the HTML
    # report and the terminal say them): "1 test cases" and "(1 calls)" before
    one_call = {**v1_report(), "version": 3, "model_calls": {"openai:gpt-4o-mini": 1}}
    text = render_markdown([run_view(one_call, label="r")])
    assert "1 test case (0 failed)" in text and "1 test cases" not in text
    assert "models: openai:gpt-4o-mini (1 call)" in text


def test_a_suite_not_scored_shows_no_score() -> None:
    """A skipped suite's placeholder 0.0 read as a score of 0.0000."""
    for change in (
        {"outcome": "skipped", "rows": [], "rows_total": 0},
        {"outcome": "failed", "error": "data-loading failed"},
    ):
        report = v1_report()
        report["suites"][0].update(score=0.0, **change)
        rows = _table_rows(render_markdown([run_view(report, label="r")]))
        assert rows[1][1] == "—"


def test_the_lower_bound_gate_and_an_errored_rows_error_read_once() -> None:
    """A suite gated on its interval's lower bound read `0.5000 | 0.5000 | FAILED`, and an
    errored row's error was printed twice (its feedback is the error) and clipped."""
    report = v1_report()
    entry = report["suites"][0]
    entry.update(gate="lower", threshold=0.5, score=0.5, outcome="failed", repeats=3)
    entry["rows"][0].update(
        score=0.0, error="ValueError: bad", error_class="metric", feedback="error: ValueError: bad"
    )
    text = render_markdown([run_view(report, label="r")])
    rows = _table_rows(text)
    assert rows[1][2] == "0.5000 (lower bound)"
    assert text.count("ValueError: bad") == 1


def test_a_located_row_error_reads_once() -> None:
    """A row error stored with its location (``... (at x.kedi:2)``) was printed twice: the
    feedback (``error: <Type>: <message>``) never contains the located error."""
    report = v1_report()
    entry = report["suites"][0]
    entry.update(threshold=0.9, outcome="failed")  # a failed suite shows its worst rows
    entry["rows"][0].update(
        score=0.0,
        error="ValueError: bad 'three' (at evals/robust.kedi:2)",
        error_class="procedure",
        feedback="error: ValueError: bad 'three'",
    )
    text = render_markdown([run_view(report, label="r")])
    assert text.count("ValueError: bad 'three'") == 1
    assert "procedure: ValueError: bad 'three' (at evals/robust.kedi:2)" in text


def test_a_threshold_is_shown_as_given() -> None:
    """A min score with more than 4 decimals was rounded (0.98765 read 0.9877)."""
    document = full_report()
    document["suites"][0]["threshold"] = 0.98765
    rows = _table_rows(render_markdown([run_view(document, label="r")]))
    assert rows[1][2] == "0.98765"


def test_a_score_is_told_apart_from_its_threshold_as_in_the_terminal() -> None:
    """A failed suite read `0.3333 | 0.3333 | FAILED` (a score of 0.33329 against a min score
    of 0.3333), where the terminal shows `0.33329` against `0.3333`."""
    document = full_report()
    document["suites"][0].update(score=0.33329, threshold=0.3333, outcome="failed", ci=None)
    rows = _table_rows(render_markdown([run_view(document, label="r")]))
    assert rows[1][1:4] == ["0.33329", "0.3333", "❌ FAILED"]
