"""Options validation, result JSON, Kedi's CLI line and the JSONL writer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pytest_kedi.evals import (
    EvalOptions,
    RowResult,
    SuiteResult,
    Usage,
    format_suite_line,
    join_feedback,
    short_repr,
    write_jsonl,
)

ROW_KEYS = {
    "index", "input", "expected", "score", "feedback", "error", "error_class", "duration_s",
    "scores", "flaky", "carried_over",
    "output", "calls",
    "retries", "usage",
}  # fmt: skip


def suite_result(**changes: object) -> SuiteResult:
    base: dict[str, object] = {
        "suite": "initials",
        "metric": "exact",
        "dataset": "people",
        "split": "test_data",
        "score": 0.75,
        "rows": [],
        "rows_total": 4,
        "rows_errored": 1,
        "errors_by_class": {"metric": 1},
        "feedback": "error: KeyError: 'x'",
        "error": None,
        "duration_s": 0.01,
    }
    base.update(changes)
    return SuiteResult(**base)  # type: ignore[arg-type]


def test_options_defaults() -> None:
    assert EvalOptions() == EvalOptions(split="auto", concurrency=1, timeout=None)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"split": "train"},
        {"concurrency": 0},
        {"concurrency": 2.5},
        {"concurrency": True},
        {"timeout": 0},
        {"timeout": -1.0},
        {"timeout": math.nan},
        {"timeout": "5"},
    ],
)
def test_invalid_options_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        EvalOptions(**kwargs)  # type: ignore[arg-type]


def test_suite_line_matches_kedi_cli_format() -> None:
    assert format_suite_line(suite_result()) == "- initials::exact: 0.7500 | error: KeyError: 'x'"
    assert format_suite_line(suite_result(feedback=None, score=1.0)) == "- initials::exact: 1.0000"
    assert format_suite_line(suite_result(feedback="no examples", score=0.0)) == (
        "- initials::exact: 0.0000 | no examples"
    )


def test_suite_line_puts_feedback_of_several_lines_on_one() -> None:
    """``(0.5, "a\\nb")`` feedback broke the line (Kedi's one line per suite); its lines are
    stripped and joined by a space, as a failed case's message on its ``--test`` line."""
    result = suite_result(feedback="error: X: a; line1\n  line2\r\n\nline3 ", score=0.5)
    assert format_suite_line(result) == "- initials::exact: 0.5000 | error: X: a; line1 line2 line3"
    spaced = suite_result(feedback="  kept  as  written ", score=0.5)  # one line: untouched
    assert format_suite_line(spaced) == "- initials::exact: 0.5000 |   kept  as  written "


def test_suite_line_for_a_suite_error() -> None:
    line = format_suite_line(suite_result(error="missing dataset reference at a.kedi:3: ..."))
    assert line == "- initials::exact: ERROR | missing dataset reference at a.kedi:3: ..."
    assert format_suite_line(suite_result(metric=None, error="no metric")) == (
        "- initials: ERROR | no metric"
    )


def test_row_json_is_builtin_only_and_round_trips() -> None:
    row = RowResult(3, "'a'", None, 0.0, "error: X: y", "X: y", "metric", 0.5, ValueError("y"))
    row.retries, row.usage = 2, Usage(3, 40, 5)
    data = row.to_json()
    assert set(data) == ROW_KEYS
    assert json.loads(json.dumps(data)) == data
    assert RowResult.from_json(data) == row
    assert "exception" not in repr(row)


def test_short_repr_limit() -> None:
    assert short_repr("abc") == "'abc'"
    assert len(short_repr(list(range(1000)))) == 200
    assert short_repr(list(range(1000))).endswith("...")


def test_write_jsonl_writes_one_object_per_row(tmp_path: Path) -> None:
    rows = [
        RowResult(0, "'a'", "1", 1.0, None, None, None, 0.1),
        RowResult(1, "'b'", None, 0.0, "error: invalid score: nan", "invalid score: nan",
                  "invalid_score", 0.2),
    ]  # fmt: skip
    target = tmp_path / "out" / "rows.jsonl"
    write_jsonl(target, [*rows, {"extra": "mapping"}])
    lines = target.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        rows[0].to_json(),
        rows[1].to_json(),
        {"extra": "mapping"},
    ]
    assert [p.name for p in target.parent.iterdir()] == ["rows.jsonl"]


def test_write_jsonl_leaves_no_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "rows.jsonl"
    with pytest.raises(ValueError):
        write_jsonl(target, [{"score": math.nan}])
    assert list(tmp_path.iterdir()) == []


def test_locations_are_shown_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_kedi.text import display_path

    inside = tmp_path / "pkg" / "suite.kedi"
    monkeypatch.chdir(tmp_path)
    assert display_path(str(inside)) == str(Path("pkg") / "suite.kedi")
    assert display_path("rel/suite.kedi") == "rel/suite.kedi"
    outside = str(tmp_path.parent / "other.kedi")
    assert display_path(outside) == outside


def test_kedi_messages_show_locations_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_kedi.evals.classify import relative_locations

    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "pkg" / "suite.kedi"
    outside = tmp_path.parent / "other.kedi"
    rel = str(Path("pkg") / "suite.kedi")
    assert relative_locations(f"{inside}:3: parameter 'x' expects str") == (
        f"{rel}:3: parameter 'x' expects str"
    )
    assert relative_locations(f'  File "{inside}", line 7, in case c') == (
        f'  File "{rel}", line 7, in case c'
    )
    untouched = [
        f"{outside}:3: elsewhere",
        "rel/suite.kedi:3: already relative",
        f"{inside} without a line",
        "no location at all",
    ]
    assert [relative_locations(text) for text in untouched] == untouched


def test_optimized_prompts_paths_are_relative_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An invalid `prog.kedi.optimized.json` failed every item of the file with its absolute
    path in the message and stack trace, next to a relative location line."""
    from pytest_kedi.evals.classify import relative_locations

    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "pkg" / "prog.kedi.optimized.json"
    rel = str(Path("pkg") / "prog.kedi.optimized.json")
    assert relative_locations(f"invalid optimized prompts in {inside}: Expecting value") == (
        f"invalid optimized prompts in {rel}: Expecting value"
    )
    assert relative_locations(f'  File "{inside}", line 1, in <optimized prompts>') == (
        f'  File "{rel}", line 1, in <optimized prompts>'
    )
    outside = tmp_path.parent / "prog.kedi.optimized.json"
    assert relative_locations(f"{outside}:1: bad") == f"{outside}:1: bad"
    for text in (f"{tmp_path / 'prog.kedi.json'}: x", f"{tmp_path / 'prog.kedi.optimized'}: x"):
        assert relative_locations(text) == text


def test_locations_below_a_working_directory_with_spaces_are_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout path with a space (``/ci/My Job``) left its absolute paths in feedback,
    row errors and reports."""
    from pytest_kedi.evals.classify import relative_locations

    work = tmp_path / "My Job" / "ünï dir"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    inside = work / "ex amples" / "extractor.kedi"
    rel = str(Path("ex amples") / "extractor.kedi")
    text = f'KediModelError: {inside}:13: model call failed; File "{inside}", line 4, in x'
    assert relative_locations(text) == (
        f'KediModelError: {rel}:13: model call failed; File "{rel}", line 4, in x'
    )
    untouched = f"{work / 'notes.py'}:3: not a Kedi file"
    assert relative_locations(untouched) == untouched


def test_usage_and_retries_sum_per_suite_and_old_rows_load() -> None:
    rows = [
        RowResult(0, "'a'", None, 1.0, None, None, None, 0.1, retries=1, usage=Usage(1, 10, 2)),
        RowResult(1, "'b'", None, 1.0, None, None, None, 0.1, retries=2, usage=Usage(2, 30, 4)),
    ]
    suite = suite_result(rows=rows)
    assert (suite.retries, suite.usage) == (3, Usage(3, 40, 6))
    data = suite.to_json()
    assert data["usage"] == {"requests": 3, "input_tokens": 40, "output_tokens": 6}
    assert data["retries"] == 3
    old = {k: v for k, v in rows[0].to_json().items() if k not in ("retries", "usage")}
    assert (RowResult.from_json(old).retries, RowResult.from_json(old).usage) == (0, Usage())


@pytest.mark.parametrize(
    ("texts", "secret"),
    [
        (("'q'", "'a'", None, "'a'"), False),
        (("'q'", None, "close", None), True),
        (("'caf\u00e9 \udcff'", "'\u00e9'", "f\u00e9", "'\udcff'"), False),
        ((None, None, None, None), True),
    ],
)
def test_a_scored_row_is_the_row_the_constructor_makes(
    monkeypatch: pytest.MonkeyPatch, texts: tuple[str | None, ...], secret: bool
) -> None:
    """`RowResult.scored` (the suite runner's per-row path) makes what the constructor
    makes: the same fields, text made encodable and cleaned of the credentials given."""
    from pytest_kedi.evals.safetext import secrets
    from pytest_kedi.runtime.rowscope import ModelCallTrace

    key = "sk-test-" + "k" * 24
    if secret:
        monkeypatch.setenv("KEDI_TEST_API_KEY", key)
        texts = tuple(None if t is None else f"{t} {key}" for t in texts)
    found = secrets()
    shown, wanted, feedback, output = texts
    prompt = f"p {key}" if secret else "p"
    calls = (ModelCallTrace("m", prompt, None, "a\udcff", 1, 2, 0.1),)
    usage = Usage(1, 2, 3)
    made = RowResult(
        3, shown, wanted, 0.5, feedback, None, None, 0.25,
        output=output, calls=calls, retries=1, usage=usage,
    )  # fmt: skip
    fast = RowResult.scored(3, shown, wanted, 0.5, feedback, 0.25, output, calls, 1, usage, found)
    assert fast == made
    assert {name: getattr(fast, name) for name in RowResult.__slots__} == {
        name: getattr(made, name) for name in RowResult.__slots__
    }
    assert json.dumps(fast.to_json()) == json.dumps(made.to_json())
    assert key not in json.dumps(fast.to_json())


def test_suite_totals_count_the_rare_row_among_many_plain_ones() -> None:
    # Usage, retries, flaky rows and feedback of a suite whose rows mostly have none (the
    # totals skip the rows one comparing pass finds plain): the one that has some counts.
    def plain(index: int) -> RowResult:
        return RowResult(index, repr(index), None, 1.0, None, None, None, 0.1)

    rows = [plain(index) for index in range(300)]
    assert (suite_result(rows=rows).usage, suite_result(rows=rows).flaky_rows) == (Usage(), [])
    assert suite_result(rows=rows).retries == 0 and join_feedback([None] * 3) is None
    rows[150] = RowResult(150, "'x'", None, 0.5, "close", None, None, 0.1, retries=2,
                          usage=Usage(1, 7, 3), scores=[0.0, 1.0])  # fmt: skip
    rows[200] = RowResult(200, "'y'", None, 0.0, None, None, None, 0.1, usage=Usage(0, 0, 0))
    suite = suite_result(rows=rows)
    assert (suite.usage, suite.retries, suite.flaky_rows) == (Usage(1, 7, 3), 2, [rows[150]])
    assert join_feedback([row.feedback for row in rows]) == "close"
    assert join_feedback([None, "a", None, "b"]) == "a; b"
