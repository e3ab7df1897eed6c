"""Hand-written ``--kedi-report`` documents for the comparison and merge tests (the report
format is what users' files hold, so it is spelled out here, not produced by the plugin)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_kedi.plugin.records import SuiteRecord


def row(index: int, input: str | None, score: float, **over: Any) -> dict[str, Any]:
    return {
        "index": index, "input": input, "expected": None, "score": score, "feedback": None,
        "error": None, "error_class": None, "duration_s": 0.01, **over,
    }  # fmt: skip


def suite(
    nodeid: str, score: float, rows: Sequence[dict[str, Any]] = (), **over: Any
) -> dict[str, Any]:
    procedure = nodeid.rsplit("eval:", 1)[-1]
    return {
        "nodeid": nodeid, "path": nodeid.split("::")[0], "line": 1, "procedure": procedure,
        "metric": "m", "dataset": "xs", "split": "data", "score": score,
        "rows_total": len(rows), "rows_errored": 0, "errors_by_class": {}, "feedback": None,
        "threshold": None, "outcome": "passed", "error": None, "duration_s": 0.5,
        "rows": list(rows), **over,
    }  # fmt: skip


def case(nodeid: str, outcome: str = "passed", message: str | None = None) -> dict[str, Any]:
    procedure, name = nodeid.split("::test:")[1].split("::")
    return {
        "nodeid": nodeid, "path": nodeid.split("::")[0], "line": 2, "procedure": procedure,
        "case": name, "outcome": outcome, "message": message,
    }  # fmt: skip


def run(
    suites: Sequence[dict[str, Any]] = (),
    tests: Sequence[dict[str, Any]] = (),
    *,
    version: int = 2,
    **over: Any,
) -> dict[str, Any]:
    """A version-2 report by default (what earlier pytest-kedi releases wrote)."""
    return {
        "version": version, "interrupted": False, "exitstatus": 0, "model_calls": {},
        "suites": list(suites), "tests": list(tests), **over,
    }  # fmt: skip


def record(document: dict[str, Any]) -> SuiteRecord:
    return SuiteRecord.from_json(document)


def save(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)
