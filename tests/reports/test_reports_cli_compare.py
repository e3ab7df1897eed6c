"""``pytest-kedi compare OLD.json NEW.json [--max-drop D]`` (issue 11 §3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_docs import row, run, save, suite

from pytest_kedi import cli

A = "a.kedi::eval:alpha"


def _reports(tmp_path: Path) -> tuple[str, str]:
    old = run([suite(A, 1.0, [row(0, "'a'", 1.0), row(1, "'b'", 1.0)])])
    new = run([suite(A, 0.5, [row(0, "'a'", 1.0), row(1, "'b'", 0.0)])], version=3)
    return save(tmp_path / "old.json", old), save(tmp_path / "new.json", new)


def test_compare_prints_the_comparison(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _reports(tmp_path)
    assert cli.main(["compare", old, new], prog="pytest-kedi") == 0
    assert capsys.readouterr().out.splitlines() == [
        f"Comparing {old} -> {new}: 1 suite compared",
        "- alpha::m: 1.0000 -> 0.5000 (-0.5000)",
        "    regressed rows (1):",
        "      row 1 input 'b': 1.0000 -> 0.0000",
    ]


@pytest.mark.parametrize(("max_drop", "status"), [("0.5", 0), ("0.4", 1)])
def test_max_drop_sets_the_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], max_drop: str, status: int
) -> None:
    old, new = _reports(tmp_path)
    assert cli.main(["compare", old, new, "--max-drop", max_drop], prog="pytest-kedi") == status
    out = capsys.readouterr().out
    assert ("FAILED a.kedi::eval:alpha: score fell from 1.0000 (baseline) to 0.5000" in out) == (
        status == 1
    )


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, _ = _reports(tmp_path)
    missing = str(tmp_path / "missing.json")
    assert cli.main(["compare", old, missing], prog="pytest-kedi") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"pytest-kedi compare: error: {missing}: no such file\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "the following arguments are required: OLD.json, NEW.json"),
        (("a", "b", "--max-drop", "x"), "argument --max-drop: expected a score drop from 0 to 1"),
    ],
)
def test_misuse_exits_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    assert cli.main(["compare", *args], prog="pytest-kedi") == 2
    assert message in capsys.readouterr().err
