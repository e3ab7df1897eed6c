"""Metric result normalization (docs/language.md#scoring) and suite aggregation
(docs/language.md#aggregation).

* ``bool`` -> 1.0 / 0.0 (checked before ``int``);
* a number (anything with ``__float__`` except ``str``/``bytes``) -> ``float``, no clamping;
* a tuple of exactly two elements ``(score, feedback)`` -> ``float(score)`` and
  ``str(feedback)`` unless it is ``None``;
* anything else -> ``TypeError`` (a row error of class ``metric``);
* NaN or an infinite score -> `InvalidScoreError` (class ``invalid_score``, feedback
  ``error: invalid score: nan``), following pydantic-gepa: non-finite scores are never
  passed on.
"""

from __future__ import annotations

import math
from typing import Any

from pytest_kedi.errors import InvalidScoreError

__all__ = ["InvalidScoreError", "mean", "normalize_score"]


def normalize_score(value: Any) -> tuple[float, str | None]:
    """``(score, feedback)`` for a metric's raw return value."""
    cls = type(value)
    feedback: str | None = None
    if cls is bool:
        return (1.0 if value else 0.0), None
    if cls is float:
        score = value
    elif cls is int:
        score = float(value)
    elif isinstance(value, tuple):
        if len(value) != 2:
            raise TypeError(
                f"a (score, feedback) metric result must have exactly 2 elements, got {len(value)}"
            )
        raw, note = value
        score = float(raw)
        feedback = None if note is None else str(note)
    elif isinstance(value, str | bytes | bytearray) or not hasattr(cls, "__float__"):
        raise TypeError(
            f"metric must return a bool, a number or a (score, feedback) tuple, not {cls.__name__}"
        )
    else:
        score = float(value)
    if not math.isfinite(score):
        raise InvalidScoreError(score)
    return score, feedback


def mean(scores: list[float]) -> float:
    """Arithmetic mean (0.0 for no scores)."""
    return math.fsum(scores) / len(scores) if scores else 0.0
