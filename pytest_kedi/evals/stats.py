"""Suite statistics: the mean, its standard error and a 95% Student t confidence interval
over the row scores (each row's score is the mean over its repeats).

With ``n`` rows of scores ``x_i``: ``mean = sum(x_i) / n``; ``s`` is the sample standard
deviation (divisor ``n - 1``); ``stderr = s / sqrt(n)``; the interval is
``mean -/+ t(0.975, n - 1) * stderr``, where ``t(p, df)`` is the quantile of Student's t
distribution, computed from the regularized incomplete beta function (to about 1e-10;
above 1,000 degrees of freedom from the Cornish-Fisher expansion around the normal
quantile, whose first omitted term is below 1e-15) -- no table, no SciPy. With fewer
than two rows there is no spread to measure: ``stderr`` and the interval are ``None``.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from pytest_kedi.evals.scoring import mean as scores_mean

__all__ = ["CONFIDENCE", "SuiteStats", "suite_stats", "t_cdf", "t_quantile"]

#: The confidence level of every interval pytest-kedi reports.
CONFIDENCE = 0.95

_EPS = 1e-15
_TINY = 1e-300
_LARGE_DF = 1_000


def _cornish_fisher(z: float, df: float) -> float:
    """Student's t quantile from the normal quantile ``z``, in powers of ``1 / df``."""
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``0 <= x <= 1``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """``P(T <= t)`` for Student's t distribution with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df!r}")
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``0 < p < 1``).

    Bisection on `t_cdf` (the distribution is symmetric); above 1,000 degrees of freedom,
    where the incomplete beta loses precision, the Cornish-Fisher expansion (Abramowitz and
    Stegun 26.7.5) around the normal quantile. Values are remembered per ``(p, df)``: every
    suite of the same size needs the same quantile, and the bisection costs about 1 ms.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, not {p!r}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df > _LARGE_DF:
        return _cornish_fisher(statistics.NormalDist().inv_cdf(p), df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


@dataclass(frozen=True, slots=True)
class SuiteStats:
    """``mean`` of the row scores, its ``stderr`` and the 95% interval ``ci`` (low, high);
    ``stderr`` and ``ci`` are ``None`` with fewer than two rows."""

    mean: float
    stderr: float | None
    ci: tuple[float, float] | None


def suite_stats(scores: Sequence[float]) -> SuiteStats:
    """`SuiteStats` of the row scores (see the module docstring for the method)."""
    n = len(scores)
    mean = scores_mean(scores)
    if n < 2:
        return SuiteStats(mean, None, None)
    if mean - mean == 0.0 and scores[0] == mean and scores.count(mean) == n:
        # every score is the (finite) mean, as when every row passed: each deviation is
        # zero, and so is their sum (one pass that compares, instead of two that compute)
        stderr = 0.0
    else:
        stderr = _stderr(scores, mean)
    half = _finite(t_quantile(0.5 + CONFIDENCE / 2.0, n - 1) * stderr)
    return SuiteStats(mean, stderr, (_finite(mean - half), _finite(mean + half)))


def _stderr(scores: Sequence[float], mean: float) -> float:
    """The standard error, from the sample standard deviation computed with compensated
    sums (`statistics.stdev` is exact but converts every score to a fraction: 20x slower,
    and within an ulp of this)."""
    n = len(scores)
    try:
        variance = math.fsum([(score - mean) ** 2 for score in scores]) / (n - 1)
        return math.sqrt(variance) / math.sqrt(n)
    except OverflowError:  # scores near the float maximum (they are not clamped)
        return _scaled_stderr(scores)


def _finite(value: float) -> float:
    """``value``, an overflow to infinity being the largest float of its sign (a report
    holds no infinity, and a lower bound of -max still fails every gate)."""
    return math.copysign(sys.float_info.max, value) if math.isinf(value) else value


def _scaled_stderr(scores: Sequence[float]) -> float:
    """The standard error of scores whose squared deviations overflow, computed on the
    scores divided by the largest of them in size."""
    scale = max(abs(score) for score in scores)
    scaled = [score / scale for score in scores]
    middle = math.fsum(scaled) / len(scaled)
    variance = math.fsum([(score - middle) ** 2 for score in scaled]) / (len(scaled) - 1)
    return _finite(math.sqrt(variance) / math.sqrt(len(scaled)) * scale)
