"""The reports tell pytest's truth: a Kedi item pytest failed is ``failed`` in the JSON
report, the views and ``pytest-kedi merge``, whatever the item's own verdict was."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

PASSING = """\
@eval: classify:
  > data: xs:
    = `[2, 4]`
  > metric: m(xs):
    = `xs % 2 == 0`

@test: t:
  > case: ok:
    `assert 1 == 1`
"""

STRICT_XFAIL_CONFTEST = """
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.xfail(strict=True, reason="known weak"))
"""


def test_a_strict_xfail_that_passes_is_failed_in_every_report(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """XPASS(strict) fails the run, but the suite and the case were recorded ``passed``:
    the JSON report, the job summary (``0 failed``) and ``merge`` (no failure listed)
    disagreed with pytest's ``2 failed``."""
    from pytest_kedi import cli

    kedi.pytester.makeconftest(STRICT_XFAIL_CONFTEST)
    kedi.write("classifier.kedi", PASSING)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-markdown", "r.md")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["- t::ok: FAIL | [[]XPASS(strict)[]] known weak", "Evals:"])
    result.stdout.fnmatch_lines(["- classify::m: 1.0000  [[]FAILED, XPASS(strict): known weak[]]"])
    report = kedi.json("r.json")
    assert report["exitstatus"] == 1
    assert [(s["outcome"], s["failure"]) for s in report["suites"]] == [
        ("failed", "[XPASS(strict)] known weak")
    ]
    assert [(t["outcome"], t["message"]) for t in report["tests"]] == [
        ("failed", "[XPASS(strict)] known weak")
    ]
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert "1 suite (1 failed)" in markdown and "1 test case (1 failed)" in markdown
    assert "❌ FAILED (\\[XPASS(strict)\\] known weak)" in markdown
    capsys.readouterr()
    assert cli.main(["merge", str(kedi.pytester.path / "r.json")], prog="pytest-kedi") == 1
    out = capsys.readouterr().out
    assert "- classify::m: 1.0000  [FAILED, XPASS(strict): known weak]" in out
    assert "FAILED classifier.kedi::eval:classify: failed in its shard: [XPASS(strict)]" in out
    assert "FAILED classifier.kedi::test:t::ok: [XPASS(strict)] known weak" in out


XFAIL_SETUP_ERROR_CONFTEST = """
import pytest


@pytest.fixture(autouse=True)
def broken():
    raise RuntimeError("setup broke")


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.xfail(reason="known broken"))
"""


def test_a_setup_error_under_an_xfail_marker_is_an_expected_failure(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest reports a setup error under an ``xfail`` marker as xfailed: the case read
    ``SKIPPED`` and the suite ``not run [skipped] (xfail)``, as if a skip marker applied,
    and the suite's error was lost."""
    from pytest_kedi import cli

    kedi.pytester.makeconftest(XFAIL_SETUP_ERROR_CONFTEST)
    kedi.write("classifier.kedi", PASSING)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(xfailed=2)
    result.stdout.fnmatch_lines(
        [
            "- t::ok: XFAIL | known broken",
            "- classify::m: ERROR | RuntimeError: setup broke  [[]FAILED[]] (xfail: known broken)",
        ]
    )
    report = kedi.json("r.json")
    assert [(t["outcome"], t["message"]) for t in report["tests"]] == [("xfailed", None)]
    assert [(s["outcome"], s["error"]) for s in report["suites"]] == [
        ("failed", "RuntimeError: setup broke")
    ]
    capsys.readouterr()
    assert cli.main(["merge", str(kedi.pytester.path / "r.json")], prog="pytest-kedi") == 0


TEARDOWN_ERROR_CONFTEST = """
import pytest


@pytest.fixture(autouse=True)
def broken():
    yield
    raise RuntimeError("teardown broke")
"""


def test_a_teardown_error_fails_the_suite_and_the_case_in_every_report(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest ends ``2 passed, 2 errors`` (exit 1), but the suite and the case stayed
    ``passed``: the job summary counted ``0 failed`` and ``merge`` exited 1 naming no
    failure."""
    from pytest_kedi import cli

    kedi.pytester.makeconftest(TEARDOWN_ERROR_CONFTEST)
    kedi.write("classifier.kedi", PASSING)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-markdown", "r.md")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "- t::ok: FAIL | RuntimeError: teardown broke",
            "Evals:",
            "- classify::m: 1.0000  [[]FAILED, teardown: RuntimeError: teardown broke[]]",
        ]
    )
    report = kedi.json("r.json")
    assert [(s["outcome"], s["failure"]) for s in report["suites"]] == [
        ("failed", "teardown: RuntimeError: teardown broke")
    ]
    assert [(t["outcome"], t["message"]) for t in report["tests"]] == [
        ("failed", "RuntimeError: teardown broke")
    ]
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert "1 suite (1 failed)" in markdown and "1 test case (1 failed)" in markdown
    capsys.readouterr()
    assert cli.main(["merge", str(kedi.pytester.path / "r.json")], prog="pytest-kedi") == 1
    out = capsys.readouterr().out
    assert "FAILED classifier.kedi::eval:classify: failed in its shard: teardown: Runtime" in out
    assert "FAILED classifier.kedi::test:t::ok: RuntimeError: teardown broke" in out


BAD_MODEL_CONFTEST = """
import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return 42
"""


def test_the_reports_carry_the_exit_status_the_run_ends_with(kedi: Kedi) -> None:
    """A hook returning no model ends the run with exit 4 (a usage error), decided after
    the reports were written: the JSON report said ``"exitstatus": 1``."""
    kedi.pytester.makeconftest(BAD_MODEL_CONFTEST)
    kedi.write("classifier.kedi", PASSING)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-html", "r.html")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert kedi.json("r.json")["exitstatus"] == 4
    page = (kedi.pytester.path / "r.html").read_text(encoding="utf-8")
    assert "Exit status</dt><dd>4</dd>" in page


SKIPS = """\
@eval: by_fixture:
  > data: xs:
    = `[2, 4]`
  > metric: m(xs):
    = `xs % 2 == 0`

@eval: by_marker:
  > data: xs:
    = `[2, 4]`
  > metric: m(xs):
    = `xs % 2 == 0`

@eval: in_data:
  > data: xs:
    ```
    import pytest
    pytest.skip("no data today")
    ```
  > metric: m(xs):
    = `xs % 2 == 0`

@test: t:
  > case: by_fixture:
    `assert 1 == 1`
  > case: by_skipif:
    `assert 1 == 1`
  > case: inside:
    ```
    import pytest
    pytest.skip("not here")
    ```
"""

SKIP_CONFTEST = """
import os

import pytest


@pytest.fixture(autouse=True)
def skipper(request):
    if request.node.nodeid.endswith(("eval:by_fixture", "::by_fixture")):
        pytest.skip("needs " + os.environ["KEDI_TEST_API_KEY"] + " \\x1b[31mred")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.endswith("eval:by_marker"):
            item.add_marker(pytest.mark.skip(reason="slow suite"))
        if item.nodeid.endswith("::by_skipif"):
            item.add_marker(pytest.mark.skipif(True, reason="not on this OS"))
"""


def test_skip_reasons_are_in_every_report(
    kedi: Kedi, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite or case skipped by a fixture's ``pytest.skip("why")`` or a marker added in
    conftest.py read ``not run [skipped]`` / ``SKIPPED`` with no reason anywhere (``-rs``
    printed it): the reason is now in the summary, the JSON report (``skip_reason``), the
    Markdown and HTML reports and merge, cleaned like every other text."""
    from pytest_kedi import cli

    monkeypatch.setenv("KEDI_TEST_API_KEY", "sk-test-0123456789abcdef")
    kedi.pytester.makeconftest(SKIP_CONFTEST)
    kedi.write("skips.kedi", SKIPS)
    result = kedi.run(
        "--kedi-eval", "-rs", "--kedi-report", "r.json", "--kedi-markdown", "r.md",
        "--kedi-html", "r.html",
    )  # fmt: skip
    result.assert_outcomes(skipped=6)
    needs = "needs [[]REDACTED:KEDI_TEST_API_KEY[]] \\x1b[[]31mred"  # fnmatch: [[] is [
    result.stdout.fnmatch_lines(
        [
            "Tests:",
            f"- t::by_fixture: SKIPPED | {needs}",
            "- t::by_skipif: SKIPPED | not on this OS",
            "- t::inside: SKIPPED | not here",
            "Evals:",
            f"- by_fixture::m: not run [[]skipped: {needs}[]]",
            "- by_marker::m: not run [[]skipped: slow suite[]]",
            "- in_data::m: not run [[]skipped: no data today[]]",
        ]
    )
    assert "sk-test-0123456789abcdef" not in result.stdout.str()
    report = kedi.json("r.json")
    needs_text = "needs [REDACTED:KEDI_TEST_API_KEY] \x1b[31mred"
    assert [(s["outcome"], s["skip_reason"], s["error"]) for s in report["suites"]] == [
        ("skipped", needs_text, None),
        ("skipped", "slow suite", None),
        ("skipped", "no data today", None),
    ]
    assert [(t["outcome"], t["skip_reason"], t["message"]) for t in report["tests"]] == [
        ("skipped", needs_text, None),
        ("skipped", "not on this OS", None),
        ("skipped", "not here", None),
    ]
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert "| ⏭️ skipped (slow suite) |" in markdown
    assert "| ⏭️ skipped (no data today) |" in markdown
    page = (kedi.pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<div class="sub">slow suite</div>' in page
    assert "<td class='msg'>not on this OS</td>" in page
    capsys.readouterr()
    assert cli.main(["merge", str(kedi.pytester.path / "r.json")], prog="pytest-kedi") == 0
    out = capsys.readouterr().out
    assert "- by_marker::m: not run [skipped: slow suite]" in out
    assert "- t::by_skipif: SKIPPED | not on this OS" in out
    shown = "needs [REDACTED:KEDI_TEST_API_KEY] \\x1b[31mred"  # an ESC as its escape
    assert f"- by_fixture::m: not run [skipped: {shown}]" in out


XFAILS = """\
@eval: weak:
  > data: xs:
    = `[2, 3]`
  > metric: m(xs):
    = `xs % 2 == 0`

@test: t:
  > case: later:
    `import pytest; pytest.xfail("not built yet")`
  > case: broken:
    `assert 4 == 5`
"""

XFAIL_CONFTEST = """
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.endswith(("eval:weak", "::broken")):
            item.add_marker(pytest.mark.xfail(reason="known weak"))
"""


def test_xfail_reasons_are_in_every_report(kedi: Kedi, capsys: pytest.CaptureFixture[str]) -> None:
    """``-rx`` printed why each expected failure was expected; the reports said only
    ``(xfail)`` / ``XFAIL``: the reason is now in the summary, the JSON report
    (``xfail_reason``), the Markdown and HTML reports and merge."""
    from pytest_kedi import cli

    kedi.pytester.makeconftest(XFAIL_CONFTEST)
    kedi.write("x.kedi", XFAILS)
    result = kedi.run(
        "--kedi-eval", "--kedi-min-score", "0.9", "--kedi-report", "r.json",
        "--kedi-markdown", "r.md", "--kedi-html", "r.html",
    )  # fmt: skip
    result.assert_outcomes(xfailed=3)
    lines = [
        "- t::later: XFAIL | not built yet",
        "- t::broken: FAIL | AssertionError: assert 4 == 5 (xfail: known weak)",
        "Evals:",
        "- weak::m: 0.5000  [[]FAILED, min score 0.9000[]] (xfail: known weak)",
    ]
    result.stdout.fnmatch_lines(lines)
    report = kedi.json("r.json")
    assert [(s["outcome"], s["xfail_reason"]) for s in report["suites"]] == [
        ("failed", "known weak")
    ]
    assert [(t["outcome"], t["xfail_reason"]) for t in report["tests"]] == [
        ("xfailed", "not built yet"),
        ("failed", "known weak"),
    ]
    markdown = (kedi.pytester.path / "r.md").read_text(encoding="utf-8")
    assert "| ⚠️ xfail (expected failure) (known weak) |" in markdown
    page = (kedi.pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<div class="sub">known weak</div>' in page
    assert "<td class='msg'>not built yet</td>" in page
    capsys.readouterr()
    assert cli.main(["merge", str(kedi.pytester.path / "r.json")], prog="pytest-kedi") == 0
    out = capsys.readouterr().out
    assert "- weak::m: 0.5000  [FAILED, min score 0.9000] (xfail: known weak)" in out
    assert "- t::later: XFAIL | not built yet" in out
