"""A suite's row scores as a one-line histogram (the ``kedi`` section under ``-v``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_kedi.evals.scoring import outside_note

__all__ = ["BINS", "LEVELS", "histogram", "histogram_line"]

#: fixed bins over [0, 1]: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] (1.0 in the last)
BINS = 10
#: bar heights, lowest first; an empty bin is a space
LEVELS = "▁▂▃▄▅▆▇█"


def histogram(scores: Sequence[float], bins: int = BINS) -> list[int]:
    """How many scores fall in each of ``bins`` equal bins over [0, 1] (scores outside
    [0, 1] count in the first or last bin)."""
    counts = [0] * bins
    for score in scores:
        # clamped before scaling: a score near the float maximum would scale to infinity
        index = min(bins - 1, max(0, math.floor(min(max(score, 0.0), 1.0) * bins)))
        counts[index] += 1
    return counts


def sparkline(counts: Sequence[int]) -> str:
    """One character per bin, its height relative to the fullest bin (never empty when
    the bin holds a score)."""
    top = max(counts, default=0)
    if top == 0:
        return " " * len(counts)
    top_level = len(LEVELS)
    return "".join(
        " " if count == 0 else LEVELS[math.ceil(count / top * top_level) - 1] for count in counts
    )


def histogram_line(scores: Sequence[float], width: int, indent: str = "    ") -> str | None:
    """``    scores 0 |▄        █| 1``, or ``None`` when there is no score or the line
    would not fit in ``width`` columns. Scores are not clamped: those outside [0, 1], which
    count in the end bins, are told (``(2 below 0, 1 above 1)``)."""
    if not scores:
        return None
    line = f"{indent}scores 0 |{sparkline(histogram(scores))}| 1{outside_note(scores)}"
    return line if len(line) < width else None
