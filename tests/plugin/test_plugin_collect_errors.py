"""Every report names the files a run could not collect (the JSON report's ``errors``):
before, a broken ``.kedi`` file or test module failed the run (exit 1, a Markdown verdict of
FAILED) while no entry of the JSON report, the Markdown or HTML summary or ``merge`` said
which file broke."""

from __future__ import annotations

import json

import pytest
from kedi_plugin_helpers import DEMO, Kedi

from pytest_kedi import cli

#: a parse error at line 2, column 9, whose source line holds an API key's value
SECRET = "sk-collect-secret-value-123"
BROKEN = f'@f(x: str) -> int:\n  = `len("{SECRET}", x`\n'
IMPORT_ERROR = "import no_such_module_for_kedi\n\n\ndef test_a():\n    pass\n"
ERROR_KEYS = ("nodeid", "path", "line", "column", "message", "text")


def _merge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    status = cli.main(["merge", *args], prog="pytest-kedi")
    return status, capsys.readouterr().out


def test_the_json_report_lists_a_broken_kedi_file_and_test_module(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    kedi.write("demo.kedi", DEMO)
    kedi.write("sub/broken.kedi", BROKEN)
    kedi.write("test_imports.py", IMPORT_ERROR)
    result = kedi.run(
        "--kedi-eval", "--continue-on-collection-errors", "--kedi-report", "r.json",
        "--kedi-markdown", "r.md", "--kedi-html", "r.html",
    )  # fmt: skip
    result.assert_outcomes(passed=3, errors=2)
    report = kedi.json("r.json")
    assert report["exitstatus"] == 1
    broken, module = report["errors"]
    assert tuple(broken) == ERROR_KEYS
    assert (broken["nodeid"], broken["path"], broken["line"], broken["column"]) == (
        "sub/broken.kedi", "sub/broken.kedi", 2, 9,
    )  # fmt: skip
    assert broken["message"].startswith("sub/broken.kedi:2:9: ")
    assert "Kedi parse error" in broken["text"]
    assert (module["nodeid"], module["line"], module["column"]) == ("test_imports.py", None, None)
    assert module["message"] == "ModuleNotFoundError: No module named 'no_such_module_for_kedi'"
    text = (kedi.pytester.path / "r.json").read_text(encoding="utf-8")
    assert SECRET not in text and "[REDACTED:OPENAI_API_KEY]" in broken["text"]
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert "2 collection errors" in markdown
    assert "| sub/broken.kedi:2:9 |" in markdown and "| test\\_imports.py |" in markdown
    page = (kedi.pytester.path / "r.html").read_text(encoding="utf-8")
    assert "Collection errors (2)" in page and "no_such_module_for_kedi" in page
    assert SECRET not in markdown + page


def test_a_parse_error_shows_no_credential_in_the_terminal_or_junit(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parse error quotes its source line: the terminal's ``ERRORS`` section and the JUnit
    ``<error>`` showed an API key's value there, which the JSON report, the failure text of
    a case and ``pytest-kedi parse`` replace with ``[REDACTED:NAME]``."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    kedi.write("demo.kedi", DEMO)
    kedi.write("broken.kedi", BROKEN)
    result = kedi.run("--kedi-eval", "--junitxml", "j.xml", "-rA")
    result.assert_outcomes(passed=3, errors=1)
    printed = result.stdout.str()
    assert SECRET not in printed
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting broken.kedi*",
            "Kedi parse error:",
            '*= `len("[[]REDACTED:OPENAI_API_KEY[]]", x`',
            "ERROR broken.kedi - broken.kedi:2:9: *",
        ]
    )
    junit = (kedi.pytester.path / "j.xml").read_text(encoding="utf-8")
    assert SECRET not in junit and '"[REDACTED:OPENAI_API_KEY]", x' in junit


def test_a_run_whose_only_kedi_file_is_broken_writes_its_reports(kedi: Kedi) -> None:
    """Before: ``kedi report not written (no Kedi item ran)``, an older report left as it was."""
    kedi.write("broken.kedi", BROKEN)
    (kedi.pytester.path / "r.json").write_text("{}", encoding="utf-8")
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-markdown", "r.md")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["kedi report written: *r.json"])
    report = kedi.json("r.json")
    assert (report["exitstatus"], report["suites"], report["tests"]) == (1, [], [])
    assert [error["nodeid"] for error in report["errors"]] == ["broken.kedi"]
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert "❌ FAILED" in markdown and "| broken.kedi:2:9 |" in markdown


def test_collect_only_leaves_the_reports_untouched(kedi: Kedi) -> None:
    kedi.write("broken.kedi", BROKEN)
    (kedi.pytester.path / "r.json").write_text("{}", encoding="utf-8")
    result = kedi.run("--kedi-eval", "--collect-only", "--kedi-report", "r.json")
    result.stdout.fnmatch_lines(["kedi report not written (no Kedi item ran): *r.json"])
    assert kedi.json("r.json") == {}


def test_merge_lists_a_file_every_shard_failed_to_collect_once(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each ``--kedi-shard`` (and each xdist worker) collects every file: the broken one is
    in every shard's report, once in the merged one, and fails the merged run."""
    kedi.write("demo.kedi", DEMO)
    kedi.write("broken.kedi", BROKEN)
    for shard in (1, 2, 3, 4):
        result = kedi.run(
            "--kedi-eval", f"--kedi-shard={shard}/4", "--kedi-report", f"s{shard}.json"
        )
        assert result.ret == 1
        assert [e["nodeid"] for e in kedi.json(f"s{shard}.json")["errors"]] == ["broken.kedi"]
    paths = [str(kedi.pytester.path / f"s{shard}.json") for shard in (1, 2, 3, 4)]
    status, out = _merge(capsys, *paths, "-o", str(kedi.pytester.path / "all.json"))
    assert status == 1
    assert out.count("ERROR broken.kedi: broken.kedi:2:9: ") == 1
    assert "exit status" not in out  # the error explains the shards' status 1
    merged = kedi.json("all.json")
    assert [e["nodeid"] for e in merged["errors"]] == ["broken.kedi"]
    assert len(merged["suites"]) == 1 and len(merged["tests"]) == 2


@pytest.mark.single_process("reads saved reports only")
def test_reports_without_errors_still_merge_compare_and_render(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report of an earlier pytest-kedi has no ``errors``: it reads as none."""
    kedi.write("demo.kedi", DEMO)
    kedi.write("broken.kedi", BROKEN)
    kedi.run("--kedi-eval", "--kedi-report", "new.json")
    old = kedi.json("new.json")
    del old["errors"]
    old["exitstatus"] = 0
    (kedi.pytester.path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    old_path, new_path = (str(kedi.pytester.path / name) for name in ("old.json", "new.json"))
    status, out = _merge(capsys, old_path)
    assert status == 0 and "ERROR" not in out
    assert kedi.json("old.json").get("errors") is None
    capsys.readouterr()
    assert cli.main(["compare", old_path, new_path], prog="pytest-kedi") == 0
    out = capsys.readouterr().out
    assert f"{new_path}: ERROR broken.kedi: broken.kedi:2:9: " in out
    assert cli.main(["compare", new_path, old_path], prog="pytest-kedi") == 0
    html = str(kedi.pytester.path / "h.html")
    assert cli.main(["html", old_path, new_path, "-o", html], prog="pytest-kedi") == 0
    assert "Collection errors (1)" in (kedi.pytester.path / "h.html").read_text("utf-8")


@pytest.mark.single_process("pytest-xdist runs the other tests despite collection errors")
def test_a_run_collection_errors_interrupted_says_so_and_names_them(kedi: Kedi) -> None:
    """A test module's import error beside a Kedi parse error stops pytest before any item
    runs ("Interrupted: 2 errors during collection"): the reports say so, with both files."""
    kedi.write("demo.kedi", DEMO)
    kedi.write("broken.kedi", BROKEN)
    kedi.write("test_imports.py", IMPORT_ERROR)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-markdown", "r.md")
    result.stdout.fnmatch_lines(["*Interrupted: 2 errors during collection*"])
    report = kedi.json("r.json")
    assert (report["exitstatus"], report["interrupted"], report["suites"]) == (2, True, [])
    assert [e["nodeid"] for e in report["errors"]] == ["broken.kedi", "test_imports.py"]
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert (
        markdown.startswith("### pytest-kedi: ⚠️ INTERRUPTED") and "2 collection errors" in markdown
    )


def test_the_job_summary_names_a_broken_kedi_file_when_no_item_ran(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$GITHUB_STEP_SUMMARY`` is appended to when Kedi items ran: a run whose only
    ``.kedi`` file failed to parse wrote its JSON report but left the job summary empty."""
    summary = kedi.pytester.path / "step_summary.md"
    summary.write_text("", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    kedi.write("broken.kedi", BROKEN)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(errors=1)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("### pytest-kedi: ❌ FAILED") and "| broken.kedi:2:9 |" in text
