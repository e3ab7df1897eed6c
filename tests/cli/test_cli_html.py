"""``pytest-kedi html REPORT.json [...] -o OUT.html`` (issue 12 §3)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi import cli

REPORT: dict[str, Any] = {
    "version": 1,
    "suites": [
        {
            "nodeid": "a.kedi::eval:alpha",
            "path": "a.kedi",
            "line": 1,
            "procedure": "alpha",
            "metric": "m",
            "dataset": "rows",
            "split": "data",
            "score": 0.5,
            "rows_total": 2,
            "rows_errored": 0,
            "errors_by_class": {},
            "feedback": None,
            "threshold": None,
            "outcome": "passed",
            "error": None,
            "duration_s": 0.1,
            "rows": [
                {"index": 0, "input": "'a'", "expected": None, "score": 1.0, "feedback": None,
                 "error": None, "error_class": None, "duration_s": 0.0},
                {"index": 1, "input": "'b'", "expected": None, "score": 0.0, "feedback": None,
                 "error": None, "error_class": None, "duration_s": 0.0},
            ],
        }
    ],
    "tests": [],
}  # fmt: skip


def _save(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_html_from_one_and_several_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _save(tmp_path / "old.json", REPORT)
    newer = json.loads(json.dumps(REPORT))
    newer["suites"][0]["rows"][1]["score"] = 1.0
    newer["suites"][0]["score"] = 1.0
    second = _save(tmp_path / "new.json", newer)
    out = tmp_path / "sub" / "out.html"
    assert cli.main(["html", first, "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"HTML report written: {out}\n"
    assert "alpha::m" in out.read_text(encoding="utf-8") and "Across runs" not in out.read_text()
    assert cli.main(["html", first, second, "--output", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Across runs" in page and "Changed rows (1, worst first)" in page
    assert "Δ previous run" in page and "+0.5000" in page


def test_bad_report_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "suites": {}}', encoding="utf-8")
    out = tmp_path / "out.html"
    assert cli.main(["html", str(bad), "-o", str(out)]) == 2  # as compare and merge
    err = capsys.readouterr().err
    assert err == (
        f"python -m pytest_kedi html: error: {bad}: not a pytest-kedi JSON report "
        "(no 'suites' list)\n"
    )
    assert not out.exists()
    missing = tmp_path / "missing.json"
    for command in (["html", str(missing), "-o", str(out)], ["compare", str(missing), str(bad)]):
        assert cli.main(command) == 2  # the three commands word a missing file alike
        assert capsys.readouterr().err.endswith(f" error: {missing}: no such file\n")
    good = _save(tmp_path / "r.json", REPORT)
    blocked = tmp_path / "r.json" / "out.html"  # its directory is a file
    assert cli.main(["html", good, "-o", str(blocked)]) == 2
    assert capsys.readouterr().err == (
        f"python -m pytest_kedi html: error: cannot write {blocked}: Not a directory\n"
    )


def test_usage_errors_exit_2(cli: Callable[..., Any], tmp_path: Path) -> None:
    _save(tmp_path / "r.json", REPORT)
    result = cli("html", "r.json")
    assert result.code == 2
    assert "the following arguments are required: -o/--output" in result.err
    assert "Traceback" not in result.err
    result = cli("html", "r.json", "-o", "out.html")
    assert (result.code, result.out) == (0, "HTML report written: out.html\n")
    assert (tmp_path / "out.html").is_file()


@pytest.mark.parametrize("command", ["html", "merge"])
@pytest.mark.parametrize("target", ["prog.kedi", "helper.py", "r.json"])
def test_an_output_over_a_source_or_an_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, target: str
) -> None:
    """`html -o prog.kedi` and `merge -o helper.py` overwrote the file; `html r.json -o
    r.json` replaced the report it read."""
    document = {**REPORT, "version": 3, "exitstatus": 0, "interrupted": False, "model_calls": {}}
    report = _save(tmp_path / "r.json", document)
    out = tmp_path / target
    if target != "r.json":
        out.write_text("keep me\n", encoding="utf-8")
    before = out.read_bytes()
    assert cli.main([command, report, "-o", str(out)], prog="pytest-kedi") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pytest-kedi {command}: error: -o {out}: "), err
    assert ("source file" in err) == (target != "r.json")
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    "argv", [["html", "-o", "out.html"], ["merge"], ["compare", "old.json"]], ids=lambda a: a[0]
)
def test_control_characters_in_a_report_path_are_escaped_in_diagnostics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv
) -> None:
    """A report name holding an ESC (``x\\x1b[31m.json``) reached the terminal raw in the
    ``html``/``compare``/``merge`` error line (restyling it), where the CLI's other
    diagnostics show control characters as escapes (README "Command line")."""
    monkeypatch.chdir(tmp_path)
    document = {**REPORT, "version": 3, "exitstatus": 0, "interrupted": False, "model_calls": {}}
    _save(tmp_path / "old.json", document)
    command, *rest = argv
    assert cli.main([command, *rest, "x\x1b[31m.json"], prog="pytest-kedi") == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "\x1b" not in err
    assert err.startswith(f"pytest-kedi {command}: error: x\\x1b[31m.json: ")


@pytest.mark.parametrize("command", ["html", "compare", "merge"])
def test_control_characters_in_an_unknown_argument_are_escaped(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """argparse's own error line (``unrecognized arguments: <ESC>[31m``) reached the
    terminal raw."""
    argv = [command, "a.json", "b.json", "--x\x1b[31m", "-o", "out.html"]
    assert cli.main(argv[: None if command == "html" else -2], prog="pytest-kedi") == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "--x\\x1b[31m" in err


def test_the_html_written_line_escapes_control_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    document = {**REPORT, "version": 3, "exitstatus": 0, "interrupted": False, "model_calls": {}}
    _save(tmp_path / "r.json", document)
    assert cli.main(["html", "r.json", "-o", "x\x1b[31m.html"], prog="pytest-kedi") == 0
    assert capsys.readouterr().out == "HTML report written: x\\x1b[31m.html\n"


@pytest.mark.parametrize("command", ["html", "merge"])
@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_output_path_is_misuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, blank: str
) -> None:
    """`merge r.json -o ''` (an unset `$OUT`) wrote no merged report, without a word, and
    exited 0; `html r.json -o ''` said `cannot write : is a directory`. As pytest's
    `--kedi-report ''`, it is a usage error naming the option."""
    document = {**REPORT, "version": 3, "exitstatus": 0, "interrupted": False, "model_calls": {}}
    report = _save(tmp_path / "r.json", document)
    assert cli.main([command, report, "-o", blank], prog="pytest-kedi") == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == (
        f"pytest-kedi {command}: error: argument -o/--output: expected a file path, got {blank!r}"
    )


@pytest.mark.parametrize("command", ["html", "merge"])
def test_a_report_with_lone_surrogate_escapes_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`"\\udc80"` is valid JSON: reading it gives a lone surrogate, and writing the page
    (or the merged report) failed with UnicodeEncodeError."""
    document = json.loads(json.dumps(REPORT))
    document.update(version=3, exitstatus=0, interrupted=False, model_calls={})
    suite = document["suites"][0]
    suite.update(nodeid="a.kedi::eval:\udc80", procedure="al\udc80", feedback="f\udc80")
    report = _save(tmp_path / "r.json", document)
    out = tmp_path / "out.txt"
    assert cli.main([command, report, "-o", str(out)], prog="pytest-kedi") in (0, 1)
    assert "Error" not in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "al\\udc80" in text
    if command == "merge":  # the escape reads back as the same text
        assert json.loads(text)["suites"][0]["procedure"] == "al\udc80"
