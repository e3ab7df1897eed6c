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
import sys
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pytest_kedi.errors import InvalidScoreError

__all__ = [
    "SCORE_DIGITS",
    "InvalidScoreError",
    "mean",
    "normalize_score",
    "outside_note",
    "score_digits",
    "threshold_text",
]

#: Decimals of a score shown to users, unless more are needed to tell it from its threshold.
SCORE_DIGITS = 4


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
    return score + 0.0, feedback  # -0.0 (say `-abs(error)` of an exact answer) is 0.0


def mean(scores: Sequence[float]) -> float:
    """Arithmetic mean (0.0 for no scores), never outside the scores' range: the mean of
    equal scores is that score (``fsum([0.7] * 3) / 3`` is 0.6999999999999998, which a
    ``--kedi-min-score 0.7`` gate would fail)."""
    if not scores:
        return 0.0
    n = len(scores)
    first = scores[0]
    # Every score equal to the first (as when every row passed): the mean is that score,
    # found in one pass that compares (`list.count`, no Python per score) instead of three.
    # Not for zeros (a -0.0 among them: the sum's sign) or a non-float first score.
    if type(first) is float and first != 0.0 and scores.count(first) == n:
        return first
    try:
        value = math.fsum(scores) / n
    except OverflowError:  # the sum of scores near the float maximum
        value = math.fsum([score / n for score in scores])
    low = min(scores)
    if value < low:
        return low
    high = max(scores)
    return high if value > high else value


#: The relative size of a score difference that is float noise, not a real difference: a
#: mean of scores that only rounding puts under a threshold meets it, and a change of 1e-16
#: is no change. Differences are measured against the larger magnitude, at least 1. A mean
#: (`math.fsum`, then one division) and a difference of two scores are off by a few units in
#: the last place (about 1e-16 each), far below this; a threshold of 1e-12 is not noise.
NOISE = 1e-14


def same_score(a: float, b: float) -> bool:
    """``a`` and ``b`` differ by float noise at most (or not at all)."""
    return abs(a - b) <= NOISE * max(1.0, abs(a), abs(b))


def beyond(a: float, b: float) -> bool:
    """``a`` is greater than ``b`` by more than float noise: what every gate asks (a score
    below its min score, a drop beyond the max drop), so that a value exactly at a bound,
    or off it by noise only, never fails it."""
    return a > b and not same_score(a, b)


def below(score: float, threshold: float) -> bool:
    """``score`` is below ``threshold``, float noise aside (the mean of 0.6, 0.8 and 0.7 is
    0.6999999999999998, which meets a min score of 0.7; a score equal to the threshold,
    however many decimals it has, meets it)."""
    return beyond(threshold, score)


def change(new: float, old: float) -> float:
    """``new - old``, finite: scores are not clamped, and the difference of two scores near
    the float maximum would overflow to infinity, which no report can hold (it is then the
    largest float of its sign)."""
    delta = new - old
    return math.copysign(sys.float_info.max, delta) if math.isinf(delta) else delta


def fell(delta: float) -> bool:
    """A score change (new minus old) is a fall, float noise aside."""
    return beyond(0.0, delta)


def rose(delta: float) -> bool:
    """A score change (new minus old) is a rise, float noise aside."""
    return beyond(delta, 0.0)


def score_digits(score: float, threshold: float | None) -> int:
    """Decimals that show a score and its threshold apart (at least 4); 4 when they differ
    by float noise only, which the gate does not count (`same_score`).

    ``0.666666...`` against ``0.66667`` needs 6: ``0.666667`` vs ``0.66667``.
    """
    if threshold is None or same_score(score, threshold):
        return SCORE_DIGITS
    for digits in range(SCORE_DIGITS, 18):
        if f"{score:.{digits}f}" != f"{threshold:.{digits}f}":
            return digits
    return 17


def threshold_text(threshold: float, digits: int, least: int = 4) -> str:
    """A min score with ``digits`` decimals, or as many as it was given with (a gate of
    ``0.33334`` is never shown as ``0.3333``), trailing zeros dropped down to ``least``."""
    if math.isfinite(threshold):
        exponent = Decimal(repr(threshold)).as_tuple().exponent
        if isinstance(exponent, int):
            digits = min(max(digits, -exponent), 17)
    head, _, tail = f"{threshold:.{digits}f}".partition(".")
    return f"{head}.{tail.rstrip('0').ljust(least, '0')}"


def outside_note(scores: Sequence[float]) -> str:
    """`` (1 below 0, 2 above 1)``: how many ``scores`` lie outside [0, 1] (scores are not
    clamped; a histogram over [0, 1] counts them in its end bins); ``""`` when none do."""
    below = sum(1 for score in scores if score < 0)
    above = sum(1 for score in scores if score > 1)
    parts = ([f"{below} below 0"] if below else []) + ([f"{above} above 1"] if above else [])
    return f" ({', '.join(parts)})" if parts else ""
