"""Row sub-results: pytest's built-in subtest reports, emitted after the suite is scored.

Design (documented in the README): every row is reported as a **passed** subtest whose
label carries its score and feedback, e.g. ``SUBPASSED[row 1: 0.0000 | error: KeyError: 'x']``.
pytest counts every failed report as a session failure, so a failed row report would
make the run fail even when the suite passes; the suite item alone carries the verdict.
Labels travel in ``msg`` with empty kwargs (xdist would repr kwargs twice).

This module is the only place that touches pytest's private subtest API
(``_pytest.subtests.SubtestContext``) and the capture manager's
``global_and_fixture_disabled``; without them rows fall back to the summary form.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pytest

try:
    from _pytest.subtests import SubtestContext
except ImportError:  # pragma: no cover - pytest without built-in subtests
    SubtestContext = None  # type: ignore[assignment,misc]

__all__ = ["SUBTESTS_AVAILABLE", "emit_row_reports", "row_label", "rows_section"]

SUBTESTS_AVAILABLE = SubtestContext is not None and hasattr(pytest, "SubtestReport")
_LABEL_FEEDBACK = 120


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def row_label(row: Mapping[str, Any], *, limit: int = _LABEL_FEEDBACK) -> str:
    """``row 3: 0.5000 | feedback`` (feedback on one line, clipped)."""
    label = f"row {row['index']}: {row['score']:.4f}"
    if row["feedback"] is not None:
        label += f" | {_clip(str(row['feedback']), limit)}"
    return label


def rows_section(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as text, for the item's ``kedi rows`` report section (summary mode)."""
    lines = []
    for row in rows:
        line = row_label(row, limit=400)
        if row["input"] is not None:
            line += f" | input {row['input']}"
        if row["expected"] is not None:
            line += f" | expected {row['expected']}"
        lines.append(line)
    return "\n".join(lines)


def emit_row_reports(item: pytest.Item, rows: Sequence[Mapping[str, Any]]) -> None:
    """Log one passed `pytest.SubtestReport` per row, with capture suspended."""
    if not SUBTESTS_AVAILABLE or not rows:
        return
    capman = item.config.pluginmanager.getplugin("capturemanager")
    suspend = capman.global_and_fixture_disabled() if capman is not None else None
    keywords: dict[str, Literal[1]] = dict.fromkeys(item.keywords, 1)
    now = time.time()
    with suspend if suspend is not None else contextlib.nullcontext():
        for row in rows:
            duration = float(row["duration_s"])
            report = pytest.SubtestReport(
                nodeid=item.nodeid,
                location=item.location,
                keywords=keywords,
                outcome="passed",
                longrepr=None,
                when="call",
                sections=[],
                duration=duration,
                start=now - duration,
                stop=now,
                user_properties=[],
                context=SubtestContext(msg=row_label(row), kwargs={}),
            )
            item.ihook.pytest_runtest_logreport(report=report)
