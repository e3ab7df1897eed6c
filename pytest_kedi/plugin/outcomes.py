"""pytest outcomes raised from Kedi code (``pytest.skip``/``importorskip``/``xfail``).

A skip raised while loading a file or a suite's data, or in a case, skips the item; the
kedi summary and JSON report then say ``skipped`` too. ``pytest.xfail()`` in a case makes
it ``xfailed``. Embedded Python is compiled under the ``.kedi`` path and line numbers, so
pytest's skip location already names the ``.kedi`` line.
"""

from __future__ import annotations

import pytest

__all__ = ["case_outcome", "expected_failure"]


def expected_failure(report: pytest.TestReport) -> bool:
    """Whether pytest reported an expected failure (XFAIL). An unexpected pass (XPASS)
    carries ``wasxfail`` too, but passed (or failed, when the marker is strict)."""
    return report.skipped and hasattr(report, "wasxfail")


def case_outcome(report: pytest.TestReport) -> str:
    """A case's outcome word for reports: pytest's, with ``pytest.xfail()`` as ``xfailed``."""
    if expected_failure(report):
        return "xfailed"
    return report.outcome
