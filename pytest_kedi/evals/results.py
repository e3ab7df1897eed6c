"""Eval results: plain dataclasses with builtin-only `to_json()`, plus Kedi's CLI line.

`RowResult.exception` and `SuiteResult.exception` keep the raised exception (for
rendering a Kedi stack trace); they are never part of `to_json()`, `==` or `repr()`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_kedi.atomicwrite import write_text_atomic
from pytest_kedi.evals.safetext import clean_with, current_secrets, secrets
from pytest_kedi.evals.stats import SuiteStats, suite_stats
from pytest_kedi.evals.usage import NO_USAGE, Usage, call_from_json, call_to_json, clean_call
from pytest_kedi.runtime.rowscope import REPR_LIMIT, ModelCallTrace, short_repr
from pytest_kedi.text import one_line

__all__ = [
    "REPR_LIMIT",
    "ModelCallTrace",
    "RowResult",
    "SuiteResult",
    "Usage",
    "format_suite_line",
    "join_feedback",
    "join_outputs",
    "reclean_rows",
    "short_repr",
    "write_jsonl",
    "write_text_atomic",
]


def _clean_fields(record: object, *names: str, found: list[tuple[str, str]] | None = None) -> None:
    """Make the text fields ``names`` of ``record`` encodable and secret-free (of the
    credentials ``found``, by default those set now)."""
    if found is None:
        found = secrets()
    for name in names:
        text = getattr(record, name)
        # ASCII text is always encodable: without credentials to redact it is clean as is.
        if text is not None and (found or not text.isascii()):
            setattr(record, name, clean_with(text, found))


def join_feedback(feedbacks: Iterable[str | None]) -> str | None:
    """Kedi's suite feedback: the non-``None`` row feedbacks in order, joined with ``"; "``."""
    if type(feedbacks) is list and feedbacks.count(None) == len(feedbacks):
        return None  # (most suites: no row has feedback; one pass that compares)
    parts = [f for f in feedbacks if f is not None]
    return "; ".join(parts) if parts else None


#: At most this many procedure outputs are shown in a row's ``output``.
OUTPUTS_SHOWN = 10


def join_outputs(outputs: Sequence[str]) -> str | None:
    """A row's ``output``: the short repr of each value the suite procedure returned
    during the row, in call order, joined with ``"; "`` (``None`` when it was not called;
    after `OUTPUTS_SHOWN` values, ``"; ... (N calls)"``)."""
    if not outputs:
        return None
    if len(outputs) == 1:
        return outputs[0]
    text = "; ".join(outputs[:OUTPUTS_SHOWN])
    if len(outputs) > OUTPUTS_SHOWN:
        text += f"; ... ({len(outputs)} calls)"
    return text


#: The text fields of a `RowResult`, made encodable and secret-free when it is made.
_ROW_TEXTS = ("input", "expected", "feedback", "error", "output")
_new = object.__new__


def reclean_rows(rows: Iterable[RowResult]) -> None:
    """Clean the text of ``rows`` again, of the credentials set now: the rows were made
    inside a `SecretsHeld` block whose credentials changed before it ended."""
    found = secrets()
    for row in rows:
        row.reclean(found)


@dataclass(slots=True, init=False)
class RowResult:
    """One scored row. ``input``/``expected`` are short reprs (``expected`` is ``None``
    when the row had no ``expected`` binding; ``input`` is ``None`` for the single row
    of a legacy dataset-free metric). ``error``/``error_class`` are set for row errors.
    ``output`` is what the suite procedure returned during the row (`join_outputs`);
    ``calls`` the row's model calls when tracing was on."""

    index: int
    input: str | None
    expected: str | None
    score: float
    feedback: str | None
    error: str | None
    error_class: str | None
    duration_s: float
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    #: the score of each repeat (``[score]`` for a row run once); ``score`` is their mean
    scores: list[float] = field(default_factory=list)
    #: taken from the previous run (``--kedi-rerun``) instead of being run again
    carried_over: bool = False
    output: str | None = None
    calls: tuple[ModelCallTrace, ...] = ()
    retries: int = 0  # transient model failures retried during the row
    usage: Usage = NO_USAGE  # the row's model requests and tokens

    def __init__(
        self,
        index: int,
        input: str | None,
        expected: str | None,
        score: float,
        feedback: str | None,
        error: str | None,
        error_class: str | None,
        duration_s: float,
        exception: BaseException | None = None,
        scores: list[float] | None = None,
        carried_over: bool = False,
        output: str | None = None,
        calls: tuple[ModelCallTrace, ...] = (),
        retries: int = 0,
        usage: Usage = NO_USAGE,
    ) -> None:
        # Written out (one is made per row, and the generated `__init__` with a
        # `__post_init__` cost twice as much). ``scores`` empty or left out: ``[score]``.
        self.index = index
        self.score = score
        self.duration_s = duration_s
        self.exception = exception
        self.scores = scores if scores else [score]
        self.carried_over = carried_over
        self.retries = retries
        self.usage = usage
        # Every text a row carries is made encodable and secret-free once, here (ASCII
        # text is always encodable: without credentials to redact it is clean as is).
        found = current_secrets()
        self.input = input
        self.expected = expected
        self.feedback = feedback
        self.error = error
        self.error_class = error_class
        self.output = output
        if found or not (
            (input is None or input.isascii())
            and (expected is None or expected.isascii())
            and (feedback is None or feedback.isascii())
            and (error is None or error.isascii())
            and (output is None or output.isascii())
        ):
            _clean_fields(self, *_ROW_TEXTS, found=found)
        self.calls = tuple(clean_call(call, found) for call in calls) if calls else ()

    @classmethod
    def scored(
        cls,
        index: int,
        input: str | None,
        expected: str | None,
        score: float,
        feedback: str | None,
        duration_s: float,
        output: str | None,
        calls: tuple[ModelCallTrace, ...],
        retries: int,
        usage: Usage,
        found: list[tuple[str, str]],
    ) -> RowResult:
        """The row a metric scored without an error, run once: what
        ``RowResult(index, input, expected, score, feedback, None, None, duration_s,
        output=output, calls=calls, retries=retries, usage=usage)`` makes when the
        credentials set are ``found`` (the suite runner's per-row path: no argument
        defaults, no error fields to check)."""
        self = _new(cls)
        self.index = index
        self.score = score
        self.duration_s = duration_s
        self.exception = None
        self.scores = [score]
        self.carried_over = False
        self.retries = retries
        self.usage = usage
        self.input = input
        self.expected = expected
        self.feedback = feedback
        self.error = None
        self.error_class = None
        self.output = output
        if found or not (
            (input is None or input.isascii())
            and (expected is None or expected.isascii())
            and (feedback is None or feedback.isascii())
            and (output is None or output.isascii())
        ):
            _clean_fields(self, *_ROW_TEXTS, found=found)
        self.calls = tuple(clean_call(call, found) for call in calls) if calls else ()
        return self

    def reclean(self, found: list[tuple[str, str]]) -> None:
        """Clean the row's text again, of the credentials ``found`` (`reclean_rows`)."""
        _clean_fields(self, *_ROW_TEXTS, found=found)
        if self.calls:
            self.calls = tuple(clean_call(call, found) for call in self.calls)

    @property
    def errored(self) -> bool:
        return self.error_class is not None

    @property
    def flaky(self) -> bool:
        """The repeats of the row did not all score the same."""
        scores = self.scores
        if len(scores) == 1:
            return False
        first = scores[0]
        return any(score != first for score in scores)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "input": self.input,
            "expected": self.expected,
            "score": self.score,
            "feedback": self.feedback,
            "error": self.error,
            "error_class": self.error_class,
            "duration_s": self.duration_s,
            "scores": list(self.scores),
            "flaky": self.flaky,
            "carried_over": self.carried_over,
            "output": self.output,
            "calls": [call_to_json(call) for call in self.calls] if self.calls else [],
            "retries": self.retries,
            "usage": self.usage.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RowResult:
        return cls(
            index=int(data["index"]),
            input=data["input"],
            expected=data["expected"],
            score=float(data["score"]),
            feedback=data["feedback"],
            error=data["error"],
            error_class=data["error_class"],
            duration_s=float(data["duration_s"]),
            scores=[float(score) for score in data.get("scores") or ()],
            carried_over=bool(data.get("carried_over", False)),
            output=data.get("output"),
            calls=tuple(call_from_json(call) for call in data.get("calls") or ()),
            retries=int(data.get("retries", 0)),
            usage=Usage.from_json(data.get("usage")),
        )


@dataclass(slots=True)
class SuiteResult:
    """One eval suite's outcome. A suite error (no metric, missing dataset reference,
    data-loading failure) leaves ``error`` set, ``score`` 0.0 and ``rows`` empty."""

    suite: str
    metric: str | None
    dataset: str | None
    split: str | None
    score: float
    rows: list[RowResult]
    rows_total: int
    rows_errored: int
    errors_by_class: dict[str, int]
    feedback: str | None
    error: str | None
    duration_s: float
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    repeats: int = 1  # how many times each row ran

    def __post_init__(self) -> None:
        _clean_fields(self, "feedback", "error")

    @classmethod
    def failed(
        cls,
        suite: str,
        metric: str | None,
        dataset: str | None,
        error: str | None,
        duration_s: float,
        *,
        split: str | None = None,
        exception: BaseException | None = None,
    ) -> SuiteResult:
        """A suite that was not scored (every key present, score 0.0); ``error`` says why,
        or is ``None`` for a skipped suite."""
        return cls(
            suite=suite,
            metric=metric,
            dataset=dataset,
            split=split,
            score=0.0,
            rows=[],
            rows_total=0,
            rows_errored=0,
            errors_by_class={},
            feedback=None,
            error=error,
            duration_s=duration_s,
            exception=exception,
        )

    @property
    def retries(self) -> int:
        """Transient model failures retried over the suite's rows."""
        return sum([row.retries for row in self.rows])  # (a list: no generator per row)

    @property
    def usage(self) -> Usage:
        """Model requests and tokens summed over the suite's rows."""
        # Most rows call no model: only the others are summed, and when no row did (a
        # zero usage is equal to `NO_USAGE`), no row is (`list.count`: no Python per row).
        usages = [row.usage for row in self.rows]
        if usages.count(NO_USAGE) == len(usages):
            return NO_USAGE
        return Usage.total([usage for usage in usages if usage is not NO_USAGE])

    @property
    def completed(self) -> bool:
        """True when the suite was scored (no suite-level error)."""
        return self.error is None

    @property
    def stats(self) -> SuiteStats:
        """Mean, standard error and 95% interval over the row scores (`suite_stats`); no
        interval for a suite that was not scored."""
        if self.error is not None:
            return SuiteStats(self.score, None, None)
        return suite_stats([row.score for row in self.rows])

    @property
    def flaky_rows(self) -> list[RowResult]:
        # A row run once is never flaky: its one score is not compared; when every row ran
        # once, no row is (counted by `list.count`: no Python per row).
        counts = [len(row.scores) for row in self.rows]
        if counts.count(1) + counts.count(0) == len(counts):
            return []
        return [row for row in self.rows if len(row.scores) > 1 and row.flaky]

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "metric": self.metric,
            "dataset": self.dataset,
            "split": self.split,
            "score": self.score,
            "rows_total": self.rows_total,
            "rows_errored": self.rows_errored,
            "errors_by_class": dict(self.errors_by_class),
            "feedback": self.feedback,
            "error": self.error,
            "duration_s": self.duration_s,
            **self.stats_json(),
            "retries": self.retries,
            "usage": self.usage.to_json(),
            "rows": [row.to_json() for row in self.rows],
        }

    def stats_json(self) -> dict[str, Any]:
        """``repeats``, ``stderr`` and ``ci`` (``{"low": x, "high": y}`` or ``None``)."""
        stats = self.stats
        ci = None if stats.ci is None else {"low": stats.ci[0], "high": stats.ci[1]}
        return {"repeats": self.repeats, "stderr": stats.stderr, "ci": ci}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SuiteResult:
        return cls(
            suite=data["suite"],
            metric=data["metric"],
            dataset=data["dataset"],
            split=data["split"],
            score=float(data["score"]),
            rows=[RowResult.from_json(row) for row in data["rows"]],
            rows_total=int(data["rows_total"]),
            rows_errored=int(data["rows_errored"]),
            errors_by_class={str(k): int(v) for k, v in data["errors_by_class"].items()},
            feedback=data["feedback"],
            error=data["error"],
            duration_s=float(data["duration_s"]),
            repeats=int(data.get("repeats", 1)),
        )


def format_suite_line(result: SuiteResult, *, digits: int = 4) -> str:
    """Kedi's CLI line ``- <suite>::<metric>: 0.7500 | <feedback>`` (score with ``digits``).

    `` | feedback`` is omitted when there is none; feedback of several lines is put on one
    (`one_line`, as a failed case's message on its ``--test`` line), so that each suite keeps
    its one line (the reports keep it as written). A suite error (which Kedi's CLI
    reports as a command failure instead of a score) reads ``- <suite>::<metric>: ERROR | <error>``.
    """
    head = f"- {result.suite}::{result.metric}" if result.metric else f"- {result.suite}"
    if result.error is not None:
        return f"{head}: ERROR | {result.error}"
    line = f"{head}: {result.score:.{digits}f}"
    feedback = result.feedback
    if feedback and ("\n" in feedback or "\r" in feedback):
        feedback = one_line(feedback)
    return f"{line} | {feedback}" if feedback else line


def write_jsonl(
    path: str | os.PathLike[str], records: Iterable[RowResult | Mapping[str, Any]]
) -> None:
    """Write one JSON object per line, atomically (temporary file, then rename)."""
    lines = (
        json.dumps(
            record.to_json() if isinstance(record, RowResult) else dict(record),
            ensure_ascii=False,
            allow_nan=False,
        )
        + "\n"
        for record in records
    )
    write_text_atomic(path, "".join(lines))
