"""pytest outcomes raised from Kedi code (``pytest.skip``/``importorskip``/``xfail``).

A skip raised while loading a file or a suite's data, or in a case, skips the item; the
kedi summary and JSON report then say ``skipped`` too. ``pytest.xfail()`` in a case makes
it ``xfailed``. Embedded Python is compiled under the ``.kedi`` path and line numbers, so
pytest's skip location already names the ``.kedi`` line.
"""

from __future__ import annotations

import linecache
import traceback

import pytest

from pytest_kedi.pytraces import is_users
from pytest_kedi.text import display_path

__all__ = ["case_outcome", "expected_failure", "failed_trace"]


def expected_failure(report: pytest.TestReport) -> bool:
    """Whether pytest reported an expected failure (XFAIL). An unexpected pass (XPASS)
    carries ``wasxfail`` too, but passed (or failed, when the marker is strict)."""
    return report.skipped and hasattr(report, "wasxfail")


def case_outcome(report: pytest.TestReport) -> str:
    """A case's outcome word for reports: pytest's, with ``pytest.xfail()`` as ``xfailed``."""
    if expected_failure(report):
        return "xfailed"
    return report.outcome


def failed_trace(error: BaseException) -> tuple[str, tuple[str | None, int | None], str]:
    """``pytest.fail()`` raised in a case, in a procedure it called or by the model a
    template called, as a Kedi stack trace of the user's frames (the ``.kedi`` lines and
    the user's own Python: no frame of pytest-kedi, pydantic-ai or the standard library),
    the innermost ``.kedi`` file and line, and the trace's last part, ``Failed: <message>``
    (over several lines if the message has them)."""
    lines = ["Kedi stack trace:"]
    kedi_line: tuple[str | None, int | None] = (None, None)
    if getattr(error, "pytrace", True):
        for frame in traceback.extract_tb(error.__traceback__):
            name = frame.filename
            if not is_users(name):  # pytest-kedi's, pydantic-ai's, the standard library's
                continue
            if name.endswith(".kedi"):
                kedi_line = (name, frame.lineno)
                where = f'  File "{name}", line {frame.lineno}'
            else:
                where = f'  File "{display_path(name)}", line {frame.lineno}, in {frame.name}'
            lines.append(where)
            source = frame.line or linecache.getline(name, frame.lineno or 0)
            if source.strip():
                lines.append(f"    {source.strip()}")
    message = str(getattr(error, "msg", "") or "").rstrip()
    final = f"Failed: {message}" if message else "Failed"
    lines.append(final)
    return "\n".join(lines), kedi_line, final
