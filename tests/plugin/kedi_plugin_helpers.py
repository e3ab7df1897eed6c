"""Shared helpers for the plugin tests (imported by ``conftest.py`` and the test modules)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
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
    "KEDI_REPEAT",
    "KEDI_GATE",
    "KEDI_RERUN",
    "KEDI_ROW_MIN_SCORE",
    "KEDI_BASELINE",
    "KEDI_MAX_DROP",
    "KEDI_SHARD",
    "KEDI_RECORD_MODE",
    "KEDI_CASSETTE_DIR",
    "KEDI_PRUNE_CASSETTES",
    "KEDI_RETRIES",
    "KEDI_MAX_REQUESTS",
    "GITHUB_STEP_SUMMARY",
    "TEAMCITY_VERSION",
    "PYTEST_ADDOPTS",
    "PYTEST_XDIST_AUTO_NUM_WORKERS",
)

#: The JSON report's fields, in order (report version 3): what users' tools read, so the
#: tests spell them out rather than import them from the plugin.
SUITE_KEYS = (
    "nodeid", "path", "line", "procedure", "metric", "dataset", "split", "score", "rows_total",
    "rows_errored", "errors_by_class", "feedback", "threshold", "outcome", "error", "failure",
    "skip_reason", "xfail_reason", "duration_s", "repeats", "stderr", "ci", "gate", "rerun",
    "max_errors", "baseline_score", "delta", "retries", "usage", "rows",
)  # fmt: skip
ROW_KEYS = (
    "index", "input", "expected", "score", "feedback", "error", "error_class", "duration_s",
    "scores", "flaky", "carried_over", "output", "calls", "retries", "usage", "delta",
    "regressed",
)  # fmt: skip
TEST_KEYS = (
    "nodeid", "path", "line", "procedure", "case", "outcome", "message", "skip_reason",
    "xfail_reason",
)  # fmt: skip

#: A small program: a deterministic procedure, one @test: suite and one @eval: suite.
#: Lines: @test: 4, case two_words 5, case padded 7, @eval: 12.
# Row 1 scores 0 on odd repeats: with 3 repeats its scores are [1, 0, 1] (flaky); every
# other row scores 1. Row means [1, 2/3, 1, 1]: mean 0.9167, stderr 0.0833, and the 95%
# t interval (3 degrees of freedom) is [0.6515, 1.1819].
FLIP = """\
```
from pytest_kedi.runtime import rowscope
```

@eval: flip:
  > data: xs:
    = `[0, 1, 2, 3]`
  > metric: m(xs):
    = `xs != 1 or rowscope.current().repeat % 2 == 0`
"""


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

#: One model call per row: a label for each of two reviews (a model answering one label
#: scores 0.5).
CLASSIFY = """\
@classify(text: str) -> str:
  >> Classify the sentiment of <text> as [label: str]
  = <label>

@eval: classify:
  > data: reviews:
    = `[("great", "positive"), ("awful", "negative")]`
  > metric: exact(reviews):
    = `classify(reviews) == expected`
"""


def _plugin() -> ModuleType:
    import pytest_kedi.plugin

    return pytest_kedi.plugin


@dataclass
class Kedi:
    """A pytester wrapper that always loads the plugin.

    ``workers`` is set by the ``kedi`` fixture (``tests/plugin/conftest.py``): a test runs
    once single-process (``None``) and once under pytest-xdist with that many workers,
    unless it is marked ``single_process``.
    """

    pytester: pytest.Pytester
    workers: int | None = None

    def write(self, name: str, text: str) -> Path:
        path = self.pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    # In-process runs get the plugin module object (as an installed entry point does);
    # `-p` would re-mark the already imported module for assertion rewriting and warn.

    def run(self, *args: str) -> pytest.RunResult:
        """A run as the user makes it: in-process when single-process (fast), else under
        xdist (``-n workers``) in a separate interpreter."""
        if self.workers is None:
            return self.pytester.runpytest(*args, plugins=[_plugin()])
        return self.subprocess(*args)

    def subprocess(self, *args: str) -> pytest.RunResult:
        """Always a separate interpreter; under xdist (``-n workers``) when ``workers`` is set."""
        extra: tuple[str, ...] = ()
        if self.workers is not None:
            extra = (*XDIST_ARGS, "-n", str(self.workers))
        return self.pytester.runpytest_subprocess(*PLUGIN_ARGS, *extra, *args, timeout=300)

    # Hook recorders see the hooks of this process only: tests using them are single-process.

    def inline(self, *args: str) -> pytest.HookRecorder:
        self._in_process_only("inline")
        return self.pytester.inline_run(*args, plugins=[_plugin()])

    def genitems(self, *args: str) -> list[pytest.Item]:
        self._in_process_only("genitems")
        reprec = self.pytester.inline_run("--collect-only", *args, plugins=[_plugin()])
        return [call.item for call in reprec.getcalls("pytest_itemcollected")]

    def _in_process_only(self, what: str) -> None:
        if self.workers is not None:
            raise AssertionError(
                f"Kedi.{what}() records hooks in this process only; mark the test "
                "@pytest.mark.single_process(reason)"
            )

    def json(self, name: str) -> Any:
        return json.loads((self.pytester.path / name).read_text(encoding="utf-8"))


def without_durations(value: Any) -> Any:
    """A JSON value with every ``duration_s`` removed (for run-to-run comparisons)."""
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration_s"}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    return value


def junit_properties(path: Path) -> dict[str, dict[str, str]]:
    """Each JUnit test case's ``<property>`` values, by ``classname::name`` (xdist carries
    an item's properties back to the controller, so both modes write the same)."""
    root = ET.parse(str(path)).getroot()
    return {
        f"{case.get('classname')}::{case.get('name')}": {
            str(p.get("name")): str(p.get("value")) for p in case.iter("property")
        }
        for case in root.iter("testcase")
    }
