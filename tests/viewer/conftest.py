"""A headless Chromium for the browser tests (the system's ``chromium``, driven by playwright).

Locally the browser tests skip, saying why, when playwright or Chromium is missing; with
``CI=true`` a missing browser fails them instead. The browser never reaches the network:
it runs with background networking off and the pages forbid every fetch.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """``$KEDI_CHROMIUM`` when set (and only it), else ``chromium`` on PATH, else
    /usr/bin/chromium."""
    explicit = os.environ.get("KEDI_CHROMIUM")
    if explicit is not None:
        return explicit if Path(explicit).is_file() else None
    for candidate in (shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"browser tests need Chromium under CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


@pytest.fixture
def chromium() -> Iterator[Any]:
    """Function-scoped on purpose: between calls playwright's sync API marks its event loop
    as running in this thread, which would break later asyncio users in the same process."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the 'playwright' package is not installed (pip install -e '.[dev]')")
    executable = chromium_path()
    if executable is None:
        _unavailable("no Chromium found (apt-get install chromium, or set KEDI_CHROMIUM)")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Opened:
    """A loaded page plus everything it reported: console errors, dialogs, requests."""

    page: Any
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Any]:
    contexts: list[Any] = []

    def load(path: Path, *, width: int = 1280) -> Opened:
        context = chromium.new_context(viewport={"width": width, "height": 900})
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)
        page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: opened.errors.append(str(e)))
        page.on("request", lambda r: opened.requests.append(r.url))

        def dialog(d: Any) -> None:
            opened.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("html[data-kedi-ready]", state="attached")
        return opened

    yield load
    for context in contexts:
        context.close()
