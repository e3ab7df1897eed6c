"""Inline SVG for the HTML report: score bars, row-score histograms and run line charts.

Every function returns markup with its user-visible text escaped; charts carry a
``<title>`` and ``role="img"`` so screen readers announce them.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_kedi.text import counted

__all__ = ["HISTOGRAM_BINS", "histogram", "line_chart", "score_bar"]

HISTOGRAM_BINS = 10


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def score_bar(
    score: float, threshold: float | None, ci: tuple[float, float] | None, *, failed: bool
) -> str:
    """A 0..1 bar: the score filled, the interval as a band, the threshold as a tick."""
    width, height = 120.0, 14.0
    parts = [
        f'<svg class="bar" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" aria-hidden="true">',
        f'<rect class="bar-bg" x="0" y="2" width="{_f(width)}" height="10" rx="2"/>',
        f'<rect class="{"bar-fail" if failed else "bar-fill"}" x="0" y="2" '
        f'width="{_f(width * _clamp(score))}" height="10" rx="2"/>',
    ]
    if ci is not None:
        low, high = _clamp(ci[0]) * width, _clamp(ci[1]) * width
        parts.append(
            f'<rect class="bar-ci" x="{_f(low)}" y="5" width="{_f(max(high - low, 1.0))}" '
            'height="4"/>'
        )
    if threshold is not None:
        x = _clamp(threshold) * width
        parts.append(f'<rect class="bar-threshold" x="{_f(max(x - 1, 0))}" y="0" width="2" '
                     f'height="{_f(height)}"/>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def bin_counts(scores: Sequence[float]) -> list[int]:
    """Counts of scores in ten bins [0, 0.1), ..., [0.9, 1.0] (out-of-range values clamped)."""
    counts = [0] * HISTOGRAM_BINS
    for score in scores:
        counts[min(int(_clamp(score) * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)] += 1
    return counts


def histogram(scores: Sequence[float], *, title: str) -> str:
    """Row-score histogram: one bar per bin, labelled 0 / 0.5 / 1 on the axis."""
    counts = bin_counts(scores)
    width, height, left, bottom = 300.0, 110.0, 30.0, 20.0
    plot_w, plot_h = width - left - 6, height - bottom - 8
    peak = max(counts) or 1
    bar_w = plot_w / HISTOGRAM_BINS
    parts = [
        f'<svg class="chart histogram" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<line class="axis" x1="{_f(left)}" y1="{_f(8 + plot_h)}" x2="{_f(left + plot_w)}" '
        f'y2="{_f(8 + plot_h)}"/>',
        f'<text class="tick" x="{_f(left - 4)}" y="12" text-anchor="end">{peak}</text>',
        f'<text class="tick" x="{_f(left - 4)}" y="{_f(8 + plot_h)}" text-anchor="end">0</text>',
    ]
    for i, count in enumerate(counts):
        bar_h = plot_h * count / peak
        x = left + i * bar_w
        low, high = i / HISTOGRAM_BINS, (i + 1) / HISTOGRAM_BINS
        closing = "]" if i == HISTOGRAM_BINS - 1 else ")"
        parts.append(
            f'<rect class="hist-bar" x="{_f(x + 1)}" y="{_f(8 + plot_h - bar_h)}" '
            f'width="{_f(bar_w - 2)}" height="{_f(bar_h)}">'
            f"<title>score [{low:.1f}, {high:.1f}{closing}: {counted(count, 'row')}"
            "</title></rect>"
        )
    for value in (0.0, 0.5, 1.0):
        x = left + value * plot_w
        parts.append(
            f'<text class="tick" x="{_f(x)}" y="{_f(height - 4)}" '
            f'text-anchor="middle">{value:g}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    points: Sequence[float | None], *, threshold: float | None, labels: Sequence[str], title: str
) -> str:
    """A suite's score across runs (oldest first); a run without the suite leaves a gap."""
    width, height, pad = 220.0, 70.0, 8.0
    plot_w, plot_h = width - 2 * pad, height - 2 * pad
    step = plot_w / max(len(points) - 1, 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        return pad + i * step, pad + plot_h * (1 - _clamp(value))

    parts = [
        f'<svg class="chart line" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<rect class="plot-bg" x="{_f(pad)}" y="{_f(pad)}" width="{_f(plot_w)}" '
        f'height="{_f(plot_h)}"/>',
    ]
    if threshold is not None:
        _, y = xy(0, threshold)
        parts.append(
            f'<line class="threshold" x1="{_f(pad)}" y1="{_f(y)}" x2="{_f(pad + plot_w)}" '
            f'y2="{_f(y)}"/>'
        )
    segment: list[str] = []
    segments: list[list[str]] = []
    for i, value in enumerate(points):
        if value is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        x, y = xy(i, value)
        segment.append(f"{_f(x)},{_f(y)}")
    if segment:
        segments.append(segment)
    for seg in segments:
        parts.append(f'<polyline class="series" points="{" ".join(seg)}"/>')
    for i, value in enumerate(points):
        if value is not None:
            x, y = xy(i, value)
            label = labels[i] if i < len(labels) else f"run {i + 1}"
            parts.append(
                f'<circle class="point" cx="{_f(x)}" cy="{_f(y)}" r="3">'
                f"<title>{escape(label)}: {value:.4f}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)
