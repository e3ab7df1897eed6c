"""The baseline comparison (issue 11 §3): deltas, rows matched by index and input, one-side
suites and rows, the max-drop gate, and reading saved reports."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from report_docs import record, row, run, save, suite

from pytest_kedi.plugin.records import RunRecord
from pytest_kedi.reports.compare import (
    compare_runs,
    compare_suites,
    comparison_lines,
    drop_reason,
)
from pytest_kedi.reports.load import ReportReadError, read_run

A = "a.kedi::eval:alpha"
B = "b.kedi::eval:beta"


def _pair(old_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]]) -> tuple[Any, Any]:
    old = record(suite(A, sum(r["score"] for r in old_rows) / len(old_rows), old_rows))
    new = record(suite(A, sum(r["score"] for r in new_rows) / len(new_rows), new_rows))
    return old, new


def test_rows_are_matched_by_index_and_input() -> None:
    old, new = _pair(
        [row(0, "'a'", 1.0), row(1, "'b'", 1.0), row(2, "'c'", 0.0), row(3, "'d'", 1.0)],
        [row(0, "'a'", 0.0), row(1, "'b'", 1.0), row(2, "'c'", 1.0), row(3, "'CHANGED'", 0.0)],
    )
    compared = compare_suites(A, old, new)
    assert [(c.index, c.old, c.new) for c in compared.regressed] == [(0, 1.0, 0.0)]
    assert [(c.index, c.old, c.new) for c in compared.improved] == [(2, 0.0, 1.0)]
    # row 3's input changed: not the same row, so one row on each side only
    assert (compared.only_old_rows, compared.only_new_rows) == (1, 1)
    delta = compared.suite_delta()
    assert delta is not None
    assert delta.baseline_score == 0.75 and delta.delta == pytest.approx(-0.25)
    assert {r.index: (r.delta, r.regressed) for r in delta.rows} == {
        0: (-1.0, True),
        1: (0.0, False),
        2: (1.0, False),
    }


def test_lines_show_deltas_rows_and_one_side_suites() -> None:
    old, new = _pair(
        [row(0, "'a'", 1.0), row(1, "'b'", 0.0)], [row(0, "'a'", 0.0), row(1, "'b'", 0.0)]
    )
    gone = record(suite("c.kedi::eval:gamma", 0.7))
    added = record(suite(B, 0.9))
    lines = comparison_lines(compare_runs([old, gone], [new, added]), max_drop=0.1)
    assert lines == [
        "1 suite compared, 1 new, 1 only in the baseline",
        "- alpha::m: 0.5000 -> 0.0000 (-0.5000)  [FAILED, dropped more than 0.1000]",
        "    regressed rows (1):",
        "      row 0 input 'a': 1.0000 -> 0.0000",
        "- beta::m: 0.9000 (new: not in the baseline)",
        "- gamma::m: only in the baseline (0.7000)",
    ]


def test_unscored_suites_are_reported_not_compared() -> None:
    old = record(suite(A, 0.8))
    new = record(suite(A, 0.0, outcome="failed", error="missing dataset reference"))
    compared = compare_runs([old], [new])
    assert compared.deltas() == {}
    assert comparison_lines(compared)[1] == (
        "- alpha::m: 0.8000 -> ERROR (not compared: not scored in both runs)"
    )
    assert drop_reason(compared.suites[0], 0.0) is None


def test_the_row_listing_is_capped() -> None:
    old_rows = [row(i, repr(str(i)), 1.0) for i in range(25)]
    new_rows = [row(i, repr(str(i)), 0.0) for i in range(25)]
    old, new = _pair(old_rows, new_rows)
    lines = comparison_lines(compare_runs([old], [new]), row_limit=3)
    assert lines[2:] == [
        "    regressed rows (25):",
        "      row 0 input '0': 1.0000 -> 0.0000",
        "      row 1 input '1': 1.0000 -> 0.0000",
        "      row 2 input '2': 1.0000 -> 0.0000",
        "      ... and 22 more",
    ]


def test_suites_with_one_name_in_two_files_are_told_apart() -> None:
    one, two = record(suite("x.kedi::eval:alpha", 0.5)), record(suite("y.kedi::eval:alpha", 0.5))
    lines = comparison_lines(compare_runs([one, two], [one, two]))
    assert lines[1:] == [
        "- alpha::m (x.kedi): 0.5000 -> 0.5000 (+0.0000)",
        "- alpha::m (y.kedi): 0.5000 -> 0.5000 (+0.0000)",
    ]


@pytest.mark.parametrize(
    ("before", "after", "max_drop", "fails"),
    [
        (0.8, 0.7, 0.1, False),  # exactly the max drop (0.10000000000000009 in floats)
        (0.8, 0.69, 0.1, True),
        (0.8, 0.8, 0.0, False),
        (0.8, 0.79, 0.0, True),
        (0.5, 0.9, 0.0, False),
    ],
)
def test_max_drop(before: float, after: float, max_drop: float, fails: bool) -> None:
    compared = compare_suites(A, record(suite(A, before)), record(suite(A, after)))
    reason = drop_reason(compared, max_drop)
    assert (reason is not None) == fails
    if fails:
        assert reason == (
            f"score fell from {before:.4f} (baseline) to {after:.4f}, a drop of "
            f"{before - after:.4f}; the max drop is {max_drop:.4f}"
        )


def test_both_intervals_are_shown_when_both_sides_show_them() -> None:
    pair = _pair(
        [row(i, repr(c), s) for i, (c, s) in enumerate(zip("abcde", [1, 1, 1, 0, 0], strict=True))],
        [row(i, repr(c), s) for i, (c, s) in enumerate(zip("abcde", [1, 1, 1, 1, 0], strict=True))],
    )
    old, new = (dataclasses.replace(r, gate="lower") for r in pair)
    shown = [f"[{r.result.stats.ci[0]:.4f}, {r.result.stats.ci[1]:.4f}]" for r in (old, new)]
    assert comparison_lines(compare_runs([old], [new]))[1] == (
        f"- alpha::m: 0.6000 {shown[0]} -> 0.8000 {shown[1]} (+0.2000)"
    )


def test_a_plain_runs_comparison_shows_no_interval() -> None:
    old, new = _pair(
        [row(i, repr(c), s) for i, (c, s) in enumerate(zip("abcde", [1, 1, 1, 0, 0], strict=True))],
        [row(i, repr(c), s) for i, (c, s) in enumerate(zip("abcde", [1, 1, 1, 1, 0], strict=True))],
    )
    assert old.result.stats.ci is not None  # computed, but a plain run does not show it
    assert (
        comparison_lines(compare_runs([old], [new]))[1] == "- alpha::m: 0.6000 -> 0.8000 (+0.2000)"
    )


# --------------------------------------------------------------------------- reading


def test_version_2_and_3_reports_load(tmp_path: Path) -> None:
    v2 = read_run(save(tmp_path / "v2.json", run([suite(A, 0.5, [row(0, "'a'", 0.5)])])))
    assert isinstance(v2, RunRecord) and v2.suites[0].baseline is None
    document = v2.to_json()
    assert document["version"] == 3
    document["suites"][0].update(baseline_score=0.75, delta=-0.25)
    document["suites"][0]["rows"][0].update(delta=-0.5, regressed=True)
    v3 = read_run(save(tmp_path / "v3.json", document))
    assert v3.to_json() == document  # the deltas survive a round trip


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "{path}: no such file"),
        ("{", "{path}:1:2: not valid JSON: Expecting property name enclosed in double quotes"),
        ("[1]", "{path}: not a pytest-kedi JSON report (expected a JSON object)"),
        ('{"suites": []}', "{path}: not a pytest-kedi JSON report (--kedi-report)"),
        (b"\xff{}", "{path}: not a pytest-kedi JSON report (not UTF-8 text)"),
        (
            json.dumps(run(version=9)),
            "{path}: report version 9 is not supported (this pytest-kedi reads versions 2, 3)",
        ),
        (
            json.dumps(run(version=3.0)),
            "{path}: report version 3.0 is not supported (this pytest-kedi reads versions 2, 3)",
        ),
        (
            json.dumps(run(version=True)),
            "{path}: report version true is not supported (this pytest-kedi reads versions 2, 3)",
        ),
        (
            json.dumps({**run([suite(A, 1.0)]), "exitstatus": None}),
            "{path}: malformed report: int() argument must be a string, a bytes-like object "
            "or a real number, not 'NoneType'",
        ),
        (
            json.dumps(run([{k: v for k, v in suite(A, 1.0).items() if k != "score"}])),
            "{path}: malformed report: missing field 'score'",
        ),
    ],
)
def test_unusable_reports_are_one_line_errors(
    tmp_path: Path, content: str | bytes | None, message: str
) -> None:
    path = tmp_path / "r.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportReadError) as caught:
        read_run(path)
    assert str(caught.value) == message.format(path=path)


@pytest.mark.parametrize(
    ("before", "after"),
    [(2 / 3, 0.0), (1 / 3, 0.0), (0.1234567890123, 0.0), (1.0, 1 / 3), (12345.678901234, 0.0)],
)
def test_a_drop_of_exactly_the_max_drop_passes_at_every_precision(
    before: float, after: float
) -> None:
    """The drop was rounded to 12 decimals and the max drop was not: a drop of exactly
    ``--kedi-max-drop 0.6666666666666666`` (rounded up to 0.666666666667) failed."""
    drop = before - after
    compared = compare_suites(A, record(suite(A, before)), record(suite(A, after)))
    assert drop_reason(compared, drop) is None
    assert drop_reason(compared, drop * (1 - 1e-9)) is not None


def test_a_drop_is_told_apart_from_the_max_drop_it_exceeds() -> None:
    """A drop of 0.33331 read `a drop of 0.3333; the max drop is 0.3333` and a max drop of
    0.33334 was rounded to 0.3333: drops are shown, like scores against a min score, with
    the decimals that tell them from the max drop, which is shown as given."""
    compared = compare_suites(A, record(suite(A, 0.66664)), record(suite(A, 0.33333)))
    assert drop_reason(compared, 0.3333) == (
        "score fell from 0.66664 (baseline) to 0.33333, a drop of 0.33331; the max drop is 0.3333"
    )
    assert comparison_lines(compare_runs([compared.old], [compared.new]), max_drop=0.3333)[1] == (
        "- alpha::m: 0.66664 -> 0.33333 (-0.33331)  [FAILED, dropped more than 0.3333]"
    )
    far = compare_suites(A, record(suite(A, 0.9)), record(suite(A, 0.1)))
    assert drop_reason(far, 0.33334) == (
        "score fell from 0.9000 (baseline) to 0.1000, a drop of 0.8000; the max drop is 0.33334"
    )
