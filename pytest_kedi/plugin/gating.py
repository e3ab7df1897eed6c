"""The eval item's verdict (suite error, min score, error budget) and its failure text.

A completed suite passes whatever its score (Kedi's rule); it fails on a suite-level
error, or when the user asked for a gate that the suite misses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_kedi.plugin.options import MaxErrors

__all__ = ["WORST_ROWS", "KediGateFailed", "Verdict", "failure_text", "judge", "worst_rows"]

WORST_ROWS = 5


class KediGateFailed(AssertionError):
    """A completed suite missed a gate the user asked for (min score, error budget).

    An ``AssertionError``: a missed gate is a failed check (allure ``failed``), not an
    error in the suite's code.
    """


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool
    reasons: tuple[str, ...]


def judge(
    *,
    error: str | None,
    score: float,
    rows_total: int,
    rows_errored: int,
    threshold: float | None,
    max_errors: MaxErrors | None,
) -> Verdict:
    if error is not None:
        return Verdict(False, ("the suite failed before scoring",))
    reasons: list[str] = []
    if threshold is not None and score < threshold:
        reasons.append(f"score {score:.4f} is below the min score {threshold:.4f}")
    if max_errors is not None and max_errors.exceeded(rows_errored, rows_total):
        reasons.append(
            f"{rows_errored} of {rows_total} rows errored; {max_errors.describe()} allowed"
        )
    return Verdict(not reasons, tuple(reasons))


def _errors_line(entry: Mapping[str, Any]) -> str:
    by_class: Mapping[str, int] = entry["errors_by_class"]
    detail = ", ".join(f"{name}: {count}" for name, count in sorted(by_class.items()))
    text = f"errored rows: {entry['rows_errored']} of {entry['rows_total']}"
    return f"{text} ({detail})" if detail else text


def _row_line(row: Mapping[str, Any]) -> str:
    parts = [f"row {row['index']}: score {row['score']:.4f}"]
    if row["input"] is not None:
        parts.append(f"input {row['input']}")
    if row["expected"] is not None:
        parts.append(f"expected {row['expected']}")
    if row["feedback"] is not None:
        parts.append(str(row["feedback"]))
    return " | ".join(parts)


def worst_rows(
    rows: Sequence[Mapping[str, Any]], limit: int = WORST_ROWS
) -> list[Mapping[str, Any]]:
    """The lowest-scoring rows that errored or scored below 1.0 (ties in dataset order)."""
    weak = [row for row in rows if row["error"] is not None or row["score"] < 1.0]
    return sorted(weak, key=lambda row: (row["score"], row["index"]))[:limit]


def failure_text(entry: Mapping[str, Any], verdict: Verdict, detail: str | None = None) -> str:
    """What a failed eval item shows instead of a Python traceback.

    The first line (``file.kedi:LINE: ...``) is what pytest's short summary shows.
    """
    head = f"{entry['path']}:{entry['line']}: @eval: {entry['procedure']}"
    error = entry["error"]
    if error is not None:
        first, _, rest = str(error).partition("\n")
        lines = [f"{head} failed before scoring: {first}"]
        if rest.strip():
            lines.append(rest)
        if detail and detail not in error:
            lines += ["", detail]
        return "\n".join(lines)
    score = f"score {entry['score']:.4f}"
    if entry["threshold"] is not None:
        score += f" vs min score {entry['threshold']:.4f}"
    dataset = entry["dataset"] or "-"
    split = f" ({entry['split']})" if entry["split"] else ""
    lines = [
        f"{head} failed: " + "; ".join(verdict.reasons),
        f"metric {entry['metric'] or '-'}, dataset {dataset}{split}: {score}",
        _errors_line(entry),
    ]
    rows = worst_rows(entry["rows"])
    if rows:
        lines.append(f"worst rows ({len(rows)} of {entry['rows_total']}):")
        lines += [f"  {_row_line(row)}" for row in rows]
    return "\n".join(lines)
