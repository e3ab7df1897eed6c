"""Without Chromium the browser tests skip locally, saying why, and fail under ``CI=true``."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")
NEEDS_BROWSER = "def test_page(chromium):\n    assert chromium is not None\n"


@pytest.fixture
def no_browser(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_page=NEEDS_BROWSER)
    monkeypatch.setenv("KEDI_CHROMIUM", str(pytester.path / "no-such-chromium"))
    return pytester


def test_skips_locally_with_a_reason(
    no_browser: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = no_browser.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*browser tests skipped: no Chromium found*"])


def test_fails_under_ci(no_browser: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    result = no_browser.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*browser tests need Chromium under CI: no Chromium found*"])
