"""The eval item's verdict (suite error, min score, error budget) and its failure text.

A completed suite passes whatever its score (Kedi's rule); it fails on a suite-level
error, or when the user asked for a gate that the suite misses.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_kedi.evals.scoring import SCORE_DIGITS as _DIGITS
from pytest_kedi.evals.scoring import below, score_digits, threshold_text
from pytest_kedi.plugin.optionvalues import MaxErrors
from pytest_kedi.plugin.records import SuiteRecord
from pytest_kedi.plugin.rows import row_line
from pytest_kedi.text import display_path

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult, SuiteResult

__all__ = [
    "WORST_ROWS",
    "KediGateFailed",
    "Verdict",
    "failure_text",
    "gated_score",
    "interval_text",
    "judge",
    "score_digits",
    "shows_interval",
    "threshold_text",
    "worst_rows",
]

WORST_ROWS = 5


def _score_vs(score: float, threshold: float) -> tuple[str, str]:
    digits = score_digits(score, threshold)
    return f"{score:.{digits}f}", threshold_text(threshold, digits)


class KediGateFailed(AssertionError):
    """A completed suite missed a gate the user asked for (min score, error budget).

    An ``AssertionError``: a missed gate is a failed check (allure ``failed``), not an
    error in the suite's code.
    """


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool
    reasons: tuple[str, ...]


def gated_score(result: SuiteResult, gate: str) -> float:
    """What the min score is compared with: the mean, or under ``gate == "lower"`` the lower
    bound of the 95% interval (the mean when there is none: fewer than two rows)."""
    ci = result.stats.ci if gate == "lower" else None
    return result.score if ci is None else ci[0]


def interval_text(result: SuiteResult, digits: int = _DIGITS) -> str:
    """``95% CI [0.6100, 0.8300]`` (or why there is none), with the repeats when > 1."""
    ci = result.stats.ci
    if ci is None:
        text = "no 95% CI (fewer than 2 rows)"
    else:
        text = f"95% CI [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"
    return text + (f", {result.repeats} repeats" if result.repeats > 1 else "")


def shows_interval(result: SuiteResult, gate: str) -> bool:
    """The interval is shown with repeats or the lower-bound gate; a plain run looks as
    it always did."""
    return result.error is None and (result.repeats > 1 or gate == "lower")


def judge(
    result: SuiteResult,
    *,
    threshold: float | None,
    max_errors: MaxErrors | None,
    gate: str = "mean",
) -> Verdict:
    """A suite's verdict: a suite error fails it; otherwise only a gate it misses does."""
    if result.error is not None:
        return Verdict(False, ("the suite failed before scoring",))
    reasons: list[str] = []
    value = gated_score(result, gate)
    if threshold is not None and below(value, threshold):
        shown, bar = _score_vs(value, threshold)
        if gate != "lower":
            reasons.append(f"score {shown} is below the min score {bar}")
        elif result.stats.ci is None:
            reasons.append(
                f"score {shown} is below the min score {bar} (no confidence interval with "
                "fewer than 2 rows: the mean is gated)"
            )
        else:
            mean = f"{result.score:.{score_digits(result.score, threshold)}f}"
            reasons.append(
                f"lower bound {shown} of the 95% confidence interval is below the min score "
                f"{bar} (mean {mean})"
            )
    errored, total = result.rows_errored, result.rows_total
    if max_errors is not None and max_errors.exceeded(errored, total):
        reasons.append(f"{errored} of {total} rows errored; {max_errors.describe()} allowed")
    return Verdict(not reasons, tuple(reasons))


def _errors_line(result: SuiteResult) -> str:
    by_class = result.errors_by_class
    detail = ", ".join(f"{name}: {count}" for name, count in sorted(by_class.items()))
    text = f"errored rows: {result.rows_errored} of {result.rows_total}"
    return f"{text} ({detail})" if detail else text


def worst_rows(rows: Sequence[RowResult], limit: int = WORST_ROWS) -> list[RowResult]:
    """The lowest-scoring rows that errored or scored below 1.0 (ties in dataset order)."""
    weak = [row for row in rows if row.error is not None or row.score < 1.0]
    return sorted(weak, key=lambda row: (row.score, row.index))[:limit]


def failure_text(
    record: SuiteRecord,
    verdict: Verdict,
    detail: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> str:
    """What a failed eval item shows instead of a Python traceback.

    The first line (``file.kedi:LINE: ...``) is what pytest's short summary shows; ``path``,
    the file (default: the record's, rootdir-relative), is shown relative to the working
    directory, as in the stack trace below.
    """
    where = record.path if path is None else display_path(os.fspath(path))
    head = f"{where}:{record.line}: @eval: {record.procedure}"
    result = record.result
    error = result.error
    if error is not None:
        first, _, rest = error.partition("\n")
        lines = [f"{head} failed before scoring: {first}"]
        if rest.strip():
            lines.append(rest)
        if detail and detail not in error:
            lines += ["", detail]
        return "\n".join(lines)
    score = f"score {result.score:.4f}"
    if record.threshold is not None:
        shown, bar = _score_vs(result.score, record.threshold)
        score = f"score {shown} vs min score {bar}"
    if shows_interval(result, record.gate):
        digits = score_digits(gated_score(result, record.gate), record.threshold)
        score = f"{score}; {interval_text(result, digits)}"
        if record.gate == "lower":
            score += "; the min score applies to the lower bound"
    dataset = result.dataset or "-"
    split = f" ({result.split})" if result.split else ""
    lines = [
        f"{head} failed: " + "; ".join(verdict.reasons),
        f"metric {result.metric or '-'}, dataset {dataset}{split}: {score}",
        _errors_line(result),
    ]
    rows = worst_rows(result.rows)
    if rows:
        lines.append(f"worst rows ({len(rows)} of {result.rows_total}):")
        lines += [f"  {row_line(row, limit=None)}" for row in rows]
    return "\n".join(lines)
