"""--kedi-html and --kedi-markdown (issue 12 §3, §5): written by the controller from the
report document, env/ini forms, $GITHUB_STEP_SUMMARY appending and its opt-out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kedi_plugin_helpers import DEMO, Kedi

INJECTED = """\
@echo(text: str) -> str:
  = `text`

@eval: echo:
  > data: samples:
    = `[("<script>alert(1)</script>", "x"), ("a|b", "a|b")]`
  > metric: exact(samples):
    = `(echo(samples) == expected, "got </script> back")`
"""

PLAIN_TEST = "def test_plain():\n    assert True\n"


def _data_block(page: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="kedi-data">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def _summary_file(kedi: Kedi, monkeypatch: pytest.MonkeyPatch, text: str = "") -> Path:
    path = kedi.pytester.path / "step_summary.md"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def test_html_report_is_written_by_the_controller(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("inj.kedi", INJECTED)
    args = ("--kedi-eval", "--kedi-html", "out/report.html", "--kedi-min-score", "0.9")
    result = kedi.run(*args)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["kedi report written: *report.html"])
    page = (kedi.pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in page and "got </script>" not in page
    data = _data_block(page)
    labels = [s["label"] for s in data["suites"]]  # type: ignore[index]
    assert labels == ["initials::exact", "echo::exact"]
    assert 'id="run-verdict">FAILED<' in page
    assert "<dd>no model calls</dd>" in page or ">no model calls<" in page
    assert sorted(p.name for p in (kedi.pytester.path / "out").iterdir()) == ["report.html"]


def test_html_names_the_json_report_as_given(kedi: Kedi) -> None:
    """The page's Report field named the JSON report by its absolute path (the machine's
    folders in a CI artifact); under the working directory it is the relative path."""
    kedi.write("demo.kedi", DEMO)
    kedi.run("--kedi-eval", "--kedi-html", "out/r.html", "--kedi-report", "out/r.json")
    page = (kedi.pytester.path / "out" / "r.html").read_text(encoding="utf-8")
    assert "<dd>out/r.json</dd>" in page
    assert str(kedi.pytester.path) not in page


def test_html_from_env_and_ini(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    kedi.write("demo.kedi", DEMO)
    monkeypatch.setenv("KEDI_HTML", "env.html")
    assert kedi.run("--kedi-eval").ret == 0
    assert "initials::exact" in (kedi.pytester.path / "env.html").read_text(encoding="utf-8")
    monkeypatch.delenv("KEDI_HTML")
    kedi.write("conf/pytest.ini", "[pytest]\nkedi_html = reports/ini.html\n")
    assert kedi.run("--kedi-eval", "-c", "conf/pytest.ini", "--rootdir", ".").ret == 0
    assert (kedi.pytester.path / "conf" / "reports" / "ini.html").is_file()


def test_markdown_summary(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("inj.kedi", INJECTED)
    result = kedi.run("--kedi-eval", "--kedi-markdown", "summary.md", "--kedi-min-score", "0.9")
    assert result.ret == 1
    text = (kedi.pytester.path / "summary.md").read_text(encoding="utf-8")
    assert text.startswith("### pytest-kedi: ❌ FAILED\n")
    assert "| Suite | Score | Threshold | Verdict | Δ | Errors |" in text
    assert "| initials::exact | 0.6667 | 0.9000 | ❌ FAILED | — | 0 |" in text
    assert "#### Worst rows of echo::exact (1 of 2)" in text
    assert (
        "| 0 | 0.0000 | '&lt;script&gt;alert(1)&lt;/script&gt;' | 'x' "
        "| '&lt;script&gt;alert(1)&lt;/script&gt;' | got &lt;/script&gt; back |" in text
    )


def test_step_summary_is_appended_when_set(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    kedi.write("demo.kedi", DEMO)
    path = _summary_file(kedi, monkeypatch, "earlier step output\n")
    assert kedi.run("--kedi-eval").ret == 0
    assert kedi.run("--kedi-eval").ret == 0
    text = path.read_text(encoding="utf-8")
    assert text.startswith("earlier step output\n")
    assert text.count("### pytest-kedi: ✅ passed") == 2
    assert "| initials::exact | 0.6667 | — | ✅ passed | — | 0 |" in text


def test_a_job_summary_that_cannot_be_appended_fails_nothing(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``$GITHUB_STEP_SUMMARY`` in a missing directory turned a green run into exit 1
    (the summary is pytest-kedi's courtesy to the job, not a report the user asked for)."""
    kedi.write("demo.kedi", DEMO)
    missing = kedi.pytester.path / "no_such_dir" / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(missing))
    result = kedi.run("--kedi-eval")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["kedi: cannot append the job summary to *summary.md: *"])
    assert not missing.exists()


@pytest.mark.parametrize(
    ("env", "args"),
    [({"KEDI_MARKDOWN": "off"}, ()), ({}, ("--kedi-markdown=off",)), ({}, ("--kedi-markdown=",))],
)
def test_step_summary_opt_out(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], args: tuple[str, ...]
) -> None:
    kedi.write("demo.kedi", DEMO)
    path = _summary_file(kedi, monkeypatch)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert kedi.run("--kedi-eval", *args).ret == 0
    assert path.read_text(encoding="utf-8") == ""
    assert not (kedi.pytester.path / "off").exists()


def test_explicit_markdown_path_wins_over_step_summary(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    kedi.write("demo.kedi", DEMO)
    path = _summary_file(kedi, monkeypatch)
    (kedi.pytester.path / "mine.md").write_text("old content", encoding="utf-8")
    assert kedi.run("--kedi-eval", "--kedi-markdown", "mine.md").ret == 0
    assert path.read_text(encoding="utf-8") == ""
    mine = (kedi.pytester.path / "mine.md").read_text(encoding="utf-8")
    assert mine.startswith("### pytest-kedi") and "old content" not in mine


def test_step_summary_untouched_without_kedi_items(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    kedi.write("test_plain.py", PLAIN_TEST)
    path = _summary_file(kedi, monkeypatch)
    assert kedi.run().ret == 0
    assert path.read_text(encoding="utf-8") == ""


def test_unwritable_html_path_fails_the_run(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("blocker", "a file, not a directory")
    result = kedi.run("--kedi-eval", "--kedi-html", "blocker/report.html")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["kedi: cannot write *blocker*report.html*"])
