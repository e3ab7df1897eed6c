"""Typed records of what the plugin reports: one frozen dataclass per reported thing.

* `SuiteRecord`: one ``@eval:`` suite -- the evals `SuiteResult` (its rows are the evals
  `RowResult` records) plus the item's node id, ``.kedi`` line, threshold and outcome;
* `CaseRecord`: one ``> case:`` of a ``@test:`` suite;
* `CollectErrorRecord`: a file pytest could not collect (a ``.kedi`` parse error, a test
  module that failed to import);
* `RunRecord`: the whole run (the JSON report document).

Each has one ``to_json``/``from_json`` pair, used for the JSON report (schema version 3),
the rows JSONL (`SuiteRecord.row_lines`), the xdist transport (records cross to the
controller as ``to_json`` builtins on the report) and the views. Everything that formats
or judges a result (the verdict, failure text, row sub-results, JUnit properties, the
terminal summary) takes these records, never their JSON form. Every JSON form carries
every key of its schema, even when a suite errored before scoring.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_kedi.reports.deltas import SuiteDelta, row_fields

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult, SuiteResult, Usage
    from pytest_kedi.lang import nodes

__all__ = [
    "REPORT_VERSION",
    "ROW_KEYS",
    "SUITE_KEYS",
    "TEST_KEYS",
    "ERROR_KEYS",
    "CaseRecord",
    "CollectErrorRecord",
    "Json",
    "Rerun",
    "RunRecord",
    "SuiteRecord",
    "node_path",
    "source_order",
]

#: A record's JSON form: builtins only (what ``json.dumps`` and xdist's execnet carry).
Json = dict[str, Any]

#: 2: the document gained ``interrupted``, ``exitstatus`` and ``model_calls``.
#: 3: suites gained ``repeats``, ``stderr``, ``ci``, ``gate``, ``rerun``, ``max_errors``,
#: ``baseline_score``, ``delta``, ``retries`` and ``usage``; rows gained ``scores``, ``flaky``,
#: ``carried_over``, ``output``, ``calls``, ``retries``, ``usage``, ``delta`` and ``regressed``
#: (the last two set when the run was compared with a baseline); the document gained
#: ``usage`` and ``retries`` (run totals). Later version-3 reports added the document's
#: ``xfailed`` and ``errors`` lists and ``stopped``, the suites' ``failure`` and the suites'
#: and cases' ``skip_reason`` and ``xfail_reason`` (read as empty when absent).
REPORT_VERSION = 3
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
TEST_KEYS = ("nodeid", "path", "line", "procedure", "case", "outcome", "message",
             "skip_reason", "xfail_reason")  # fmt: skip
ERROR_KEYS = ("nodeid", "path", "line", "column", "message", "text")


def node_path(nodeid: str) -> str:
    """The rootdir-relative ``.kedi`` path of a node id (``/``-separated on every OS)."""
    return nodeid.split("::", 1)[0]


@dataclass(frozen=True, slots=True)
class Rerun:
    """``--kedi-rerun``'s mode, and whether a previous run of the suite was found."""

    mode: str  # "errors" or "failures"
    previous_run: bool

    def to_json(self, rows: Sequence[RowResult]) -> Json:
        carried = sum(1 for row in rows if row.carried_over)
        return {
            "mode": self.mode,
            "previous_run": self.previous_run,
            "rows_rerun": len(rows) - carried,
            "rows_carried_over": carried,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rerun:
        return cls(mode=str(data["mode"]), previous_run=bool(data["previous_run"]))


@dataclass(frozen=True, slots=True)
class SuiteRecord:
    """One ``@eval:`` suite as reported (``result``: `run_suite`'s, or an unscored stand-in)."""

    nodeid: str
    line: int  # the suite's ``.kedi`` header line
    result: SuiteResult
    threshold: float | None
    outcome: str  # "passed", "failed" or "skipped"
    gate: str = "mean"  # what the threshold applied to: "mean" or "lower"
    rerun: Rerun | None = None  # set under --kedi-rerun
    max_errors: float | None = None  # the error budget applied: a row count, or a fraction < 1
    baseline: SuiteDelta | None = None  # the comparison with --kedi-baseline's suite
    failure: str | None = None  # why pytest failed it: ``[XPASS(strict)] <reason>``, teardown
    skip_reason: str | None = None  # why pytest skipped it (a skip marker, pytest.skip())
    xfail_reason: str | None = None  # why pytest expected it to fail (an expected failure)

    @property
    def path(self) -> str:
        return node_path(self.nodeid)

    @property
    def procedure(self) -> str:
        return self.result.suite

    @property
    def rows(self) -> list[RowResult]:
        return self.result.rows

    @classmethod
    def scored(
        cls,
        nodeid: str,
        suite: nodes.EvalSuite,
        result: SuiteResult,
        *,
        threshold: float | None,
        outcome: str,
        gate: str = "mean",
        rerun: Rerun | None = None,
        max_errors: float | None = None,
    ) -> SuiteRecord:
        return cls(
            nodeid, suite.span.start_line, result, threshold, outcome, gate, rerun, max_errors
        )

    @classmethod
    def unscored(
        cls,
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
    ) -> SuiteRecord:
        """A suite that was not scored (skipped, or failed before scoring): score 0.0."""
        from pytest_kedi.evals.results import SuiteResult

        result = SuiteResult.failed(procedure, metric, dataset, error, duration_s)
        return cls(nodeid, line, result, threshold, outcome)

    @classmethod
    def placeholder(
        cls,
        nodeid: str,
        suite: nodes.EvalSuite,
        *,
        threshold: float | None,
        outcome: str,
        error: str | None,
        duration_s: float = 0.0,
    ) -> SuiteRecord:
        """`unscored` for a parsed suite."""
        metric = suite.metric
        return cls.unscored(
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

    def to_json(self) -> Json:
        return {**self.head_json(), "rows": list(self.row_json())}

    def head_json(self) -> Json:
        """`to_json` without its last key, ``rows`` (the report streams the rows)."""
        result = self.result
        return {
            "nodeid": self.nodeid,
            "path": self.path,
            "line": self.line,
            "procedure": result.suite,
            "metric": result.metric,
            "dataset": result.dataset,
            "split": result.split,
            "score": result.score,
            "rows_total": result.rows_total,
            "rows_errored": result.rows_errored,
            "errors_by_class": dict(result.errors_by_class),
            "feedback": result.feedback,
            "threshold": self.threshold,
            "outcome": self.outcome,
            "error": result.error,
            "failure": self.failure,
            "skip_reason": self.skip_reason,
            "xfail_reason": self.xfail_reason,
            "duration_s": result.duration_s,
            **result.stats_json(),
            "gate": self.gate,
            "rerun": None if self.rerun is None else self.rerun.to_json(result.rows),
            "max_errors": self.max_errors,
            "baseline_score": self.baseline.baseline_score if self.baseline else None,
            "delta": self.baseline.delta if self.baseline else None,
            "retries": result.retries,
            "usage": result.usage.to_json(),
        }

    def row_json(self) -> Iterator[Json]:
        """The JSON form of each row, in order (built as iterated)."""
        rows = self.baseline.by_index() if self.baseline else {}
        for row in self.result.rows:
            data = row.to_json()
            if rows:
                data.update(row_fields(rows, row.index))
            else:  # no baseline: what `row_fields` gives every row
                data["delta"] = data["regressed"] = None
            yield data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SuiteRecord:
        from pytest_kedi.evals.results import SuiteResult

        result = SuiteResult.from_json({**data, "suite": data["procedure"]})
        threshold = data["threshold"]
        max_errors = data.get("max_errors")  # absent before version 3
        return cls(
            nodeid=str(data["nodeid"]),
            line=int(data["line"]),
            result=result,
            threshold=None if threshold is None else float(threshold),
            outcome=str(data["outcome"]),
            gate=str(data.get("gate", "mean")),
            rerun=None if data.get("rerun") is None else Rerun.from_json(data["rerun"]),
            max_errors=_budget(max_errors),
            baseline=SuiteDelta.from_json(data),
            failure=_text(data.get("failure")),
            skip_reason=_text(data.get("skip_reason")),
            xfail_reason=_text(data.get("xfail_reason")),
        )

    def row_lines(self) -> Iterator[Json]:
        """The rows JSONL's objects: each row with its suite's `row_context`."""
        context = self.row_context()
        for row in self.row_json():
            yield {**context, **row}

    def row_context(self) -> Json:
        """What each rows JSONL object has before the row's own keys."""
        result = self.result
        return {
            "nodeid": self.nodeid,
            "procedure": result.suite,
            "metric": result.metric,
            "split": result.split,
        }


@dataclass(frozen=True, slots=True)
class CaseRecord:
    """One ``> case:`` as reported; ``message`` is the failure's message, when it failed."""

    nodeid: str
    line: int  # the case's ``.kedi`` line
    procedure: str  # the ``@test:`` suite's name
    case: str
    outcome: str  # "passed", "failed", "skipped" or "xfailed"
    message: str | None
    skip_reason: str | None = None  # why pytest skipped it (a skip marker, pytest.skip())
    xfail_reason: str | None = None  # why pytest expected it to fail (an expected failure)

    @property
    def path(self) -> str:
        return node_path(self.nodeid)

    @classmethod
    def of(
        cls,
        nodeid: str,
        suite: nodes.TestSuite,
        case: nodes.Case,
        *,
        outcome: str,
        message: str | None,
    ) -> CaseRecord:
        return cls(nodeid, case.span.start_line, suite.name, case.name, outcome, message)

    def to_json(self) -> Json:
        return {
            "nodeid": self.nodeid,
            "path": self.path,
            "line": self.line,
            "procedure": self.procedure,
            "case": self.case,
            "outcome": self.outcome,
            "message": self.message,
            "skip_reason": self.skip_reason,
            "xfail_reason": self.xfail_reason,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseRecord:
        message = data["message"]
        return cls(
            nodeid=str(data["nodeid"]),
            line=int(data["line"]),
            procedure=str(data["procedure"]),
            case=str(data["case"]),
            outcome=str(data["outcome"]),
            message=None if message is None else str(message),
            skip_reason=_text(data.get("skip_reason")),
            xfail_reason=_text(data.get("xfail_reason")),
        )


@dataclass(frozen=True, slots=True)
class CollectErrorRecord:
    """A file (or folder) pytest could not collect: ``message`` is one line, ``text`` the
    error as pytest printed it; ``line`` and ``column`` locate a Kedi parse error."""

    nodeid: str
    message: str
    text: str
    line: int | None = None
    column: int | None = None

    @property
    def path(self) -> str:
        return node_path(self.nodeid)

    def to_json(self) -> Json:
        return {
            "nodeid": self.nodeid,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "text": self.text,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CollectErrorRecord:
        line, column = data.get("line"), data.get("column")
        return cls(
            nodeid=str(data["nodeid"]),
            message=str(data["message"]),
            text=str(data.get("text") or data["message"]),
            line=None if line is None else int(line),
            column=None if column is None else int(column),
        )


def _text(value: object) -> str | None:
    return None if value is None else str(value)  # an optional text field


def _budget(value: object) -> float | None:
    """A recorded error budget: a whole row count stays an int (``3``, not ``3.0``)."""
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return number if 0 < number < 1 else int(number)


R = TypeVar("R", SuiteRecord, CaseRecord)


def source_order(records: Iterable[R]) -> list[R]:
    """Records sorted by file path, then ``.kedi`` line, then node id."""
    return sorted(records, key=lambda r: (r.path, r.line, r.nodeid))


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The whole run: the JSON report document (schema version 3), in source order."""

    exitstatus: int
    interrupted: bool  # ended by Ctrl-C or SIGTERM
    stopped: str | None = None  # why pytest stopped before every item ran (-x, --maxfail)
    model_calls: tuple[tuple[str, int], ...] = ()  # (resolved model name, calls), by name
    suites: tuple[SuiteRecord, ...] = field(default=())
    tests: tuple[CaseRecord, ...] = field(default=())
    #: node ids of the suites and cases pytest reported as expected failures (an ``xfail``
    #: marker, or ``pytest.xfail()`` in a case): their failures do not fail the run
    xfailed: tuple[str, ...] = ()
    #: the files pytest could not collect, by node id
    errors: tuple[CollectErrorRecord, ...] = ()

    @property
    def usage(self) -> Usage:
        """Model requests and tokens of every suite's rows."""
        from pytest_kedi.evals.usage import Usage

        return Usage.total(suite.result.usage for suite in self.suites)

    @property
    def retries(self) -> int:
        return sum(suite.result.retries for suite in self.suites)

    def to_json(self) -> Json:
        return {
            **self.head_json(),
            "suites": [suite.to_json() for suite in source_order(self.suites)],
            "tests": [test.to_json() for test in source_order(self.tests)],
        }

    def head_json(self) -> Json:
        """`to_json` without its last two keys, ``suites`` and ``tests``."""
        return {
            "version": REPORT_VERSION,
            "interrupted": self.interrupted,
            "stopped": self.stopped,
            "exitstatus": self.exitstatus,
            "model_calls": dict(self.model_calls),
            "usage": self.usage.to_json(),
            "retries": self.retries,
            "xfailed": sorted(self.xfailed),
            "errors": [e.to_json() for e in sorted(self.errors, key=lambda e: e.nodeid)],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunRecord:
        return cls(
            exitstatus=int(data["exitstatus"]),
            interrupted=bool(data["interrupted"]),
            stopped=_text(data.get("stopped")),
            model_calls=tuple(sorted((str(k), int(v)) for k, v in data["model_calls"].items())),
            suites=tuple(SuiteRecord.from_json(suite) for suite in data["suites"]),
            tests=tuple(CaseRecord.from_json(test) for test in data["tests"]),
            xfailed=tuple(str(nodeid) for nodeid in data.get("xfailed", ())),
            errors=tuple(CollectErrorRecord.from_json(e) for e in data.get("errors", ())),
        )
