"""Report entries: the builtin-only dicts of the JSON report (schema version 2).

Entries are built where an item runs (worker or single process), travel to the xdist
controller as report attributes (execnet only carries builtins) and are written there.
Every entry carries every key of its schema, even when a suite errored before scoring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_kedi.lang import nodes

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import SuiteResult

__all__ = [
    "REPORT_VERSION",
    "ROW_KEYS",
    "SUITE_KEYS",
    "TEST_KEYS",
    "case_entry",
    "node_path",
    "plain_case_entry",
    "placeholder_suite_entry",
    "suite_entry",
    "unscored_suite_entry",
]

#: 2: the document gained ``interrupted``, ``exitstatus`` and ``model_calls``.
REPORT_VERSION = 2
SUITE_KEYS = (
    "nodeid", "path", "line", "procedure", "metric", "dataset", "split", "score", "rows_total",
    "rows_errored", "errors_by_class", "feedback", "threshold", "outcome", "error", "duration_s",
    "rows",
)  # fmt: skip
ROW_KEYS = (
    "index", "input", "expected", "score", "feedback", "error", "error_class", "duration_s",
)  # fmt: skip
TEST_KEYS = ("nodeid", "path", "line", "procedure", "case", "outcome", "message")


def node_path(nodeid: str) -> str:
    """The rootdir-relative ``.kedi`` path of a node id (``/``-separated on every OS)."""
    return nodeid.split("::", 1)[0]


def suite_entry(
    nodeid: str,
    suite: nodes.EvalSuite,
    result: SuiteResult,
    *,
    threshold: float | None,
    outcome: str,
) -> dict[str, Any]:
    data = result.to_json()
    return {
        "nodeid": nodeid,
        "path": node_path(nodeid),
        "line": suite.span.start_line,
        "procedure": suite.name,
        "metric": data["metric"],
        "dataset": data["dataset"],
        "split": data["split"],
        "score": data["score"],
        "rows_total": data["rows_total"],
        "rows_errored": data["rows_errored"],
        "errors_by_class": data["errors_by_class"],
        "feedback": data["feedback"],
        "threshold": threshold,
        "outcome": outcome,
        "error": data["error"],
        "duration_s": data["duration_s"],
        "rows": [{key: row[key] for key in ROW_KEYS} for row in data["rows"]],
    }


def placeholder_suite_entry(
    nodeid: str,
    suite: nodes.EvalSuite,
    *,
    threshold: float | None,
    outcome: str,
    error: str | None,
    duration_s: float = 0.0,
) -> dict[str, Any]:
    """An entry for a suite that was not scored (skipped, or failed before scoring)."""
    metric = suite.metric
    return unscored_suite_entry(
        nodeid,
        line=suite.span.start_line,
        procedure=suite.name,
        metric=metric.name if metric is not None else None,
        dataset=metric.dataset if metric is not None else None,
        threshold=threshold,
        outcome=outcome,
        error=error,
        duration_s=duration_s,
    )


def unscored_suite_entry(
    nodeid: str,
    *,
    line: int,
    procedure: str,
    metric: str | None,
    dataset: str | None,
    threshold: float | None,
    outcome: str,
    error: str | None,
    duration_s: float = 0.0,
) -> dict[str, Any]:
    """An unscored suite's entry from plain values (when no parsed suite is at hand)."""
    return {
        "nodeid": nodeid,
        "path": node_path(nodeid),
        "line": line,
        "procedure": procedure,
        "metric": metric,
        "dataset": dataset,
        "split": None,
        "score": 0.0,
        "rows_total": 0,
        "rows_errored": 0,
        "errors_by_class": {},
        "feedback": None,
        "threshold": threshold,
        "outcome": outcome,
        "error": error,
        "duration_s": duration_s,
        "rows": [],
    }


def case_entry(
    nodeid: str,
    suite: nodes.TestSuite,
    case: nodes.Case,
    *,
    outcome: str,
    message: str | None,
) -> dict[str, Any]:
    return plain_case_entry(
        nodeid,
        line=case.span.start_line,
        procedure=suite.name,
        case=case.name,
        outcome=outcome,
        message=message,
    )


def plain_case_entry(
    nodeid: str, *, line: int, procedure: str, case: str, outcome: str, message: str | None
) -> dict[str, Any]:
    """A case's entry from plain values (when no parsed case is at hand)."""
    return {
        "nodeid": nodeid,
        "path": node_path(nodeid),
        "line": line,
        "procedure": procedure,
        "case": case,
        "outcome": outcome,
        "message": message,
    }
