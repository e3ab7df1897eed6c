"""Shared helpers for the plugin tests (imported by ``conftest.py`` and the test modules)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN_ARGS = ("-p", "pytest_kedi.plugin")
XDIST_ARGS = ("-p", "xdist.plugin")

KEDI_ENV = (
    "KEDI_EVAL",
    "KEDI_ROWS",
    "KEDI_MIN_SCORE",
    "KEDI_MAX_ERRORS",
    "KEDI_SPLIT",
    "KEDI_CONCURRENCY",
    "KEDI_TIMEOUT",
    "KEDI_ADAPTER_MODEL",
    "KEDI_HTML",
    "KEDI_MARKDOWN",
    "KEDI_DEBUG",
    "GITHUB_STEP_SUMMARY",
    "TEAMCITY_VERSION",
    "PYTEST_ADDOPTS",
    "PYTEST_XDIST_AUTO_NUM_WORKERS",
)

#: A small program: a deterministic procedure, one @test: suite and one @eval: suite.
#: Lines: @test: 4, case two_words 5, case padded 7, @eval: 12.
DEMO = """\
@initials(name: str) -> str:
  = `"".join(w[0].upper() for w in name.split())`

@test: initials:
  > case: two_words:
    `assert initials("ada lovelace") == "AL"`
  > case: padded:
    ```
    assert initials(" grace  hopper ") == "GH"
    ```

@eval: initials:
  > data: people:
    = `[("ada lovelace", "AL"), ("alan turing", "AT"), ("x y", "XX")]`
  > metric: exact(people):
    = `initials(people) == expected`
"""


def _plugin() -> ModuleType:
    import pytest_kedi.plugin

    return pytest_kedi.plugin


@dataclass
class Kedi:
    """A pytester wrapper that always loads the plugin."""

    pytester: pytest.Pytester

    def write(self, name: str, text: str) -> Path:
        path = self.pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    # In-process runs get the plugin module object (as an installed entry point does);
    # `-p` would re-mark the already imported module for assertion rewriting and warn.

    def run(self, *args: str) -> pytest.RunResult:
        """In-process run (fast)."""
        return self.pytester.runpytest(*args, plugins=[_plugin()])

    def inline(self, *args: str) -> pytest.HookRecorder:
        return self.pytester.inline_run(*args, plugins=[_plugin()])

    def genitems(self, *args: str) -> list[pytest.Item]:
        reprec = self.pytester.inline_run("--collect-only", *args, plugins=[_plugin()])
        return [call.item for call in reprec.getcalls("pytest_itemcollected")]

    def subprocess(self, *args: str, workers: int | None = None) -> pytest.RunResult:
        """A separate interpreter; ``workers`` runs it under pytest-xdist (``-n``)."""
        extra: tuple[str, ...] = ()
        if workers is not None:
            extra = (*XDIST_ARGS, "-n", str(workers))
        return self.pytester.runpytest_subprocess(*PLUGIN_ARGS, *extra, *args, timeout=300)

    def json(self, name: str) -> Any:
        return json.loads((self.pytester.path / name).read_text(encoding="utf-8"))


def without_durations(value: Any) -> Any:
    """A JSON value with every ``duration_s`` removed (for run-to-run comparisons)."""
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration_s"}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    return value
