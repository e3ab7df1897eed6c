"""pytest outcomes raised from Kedi code (``pytest.skip``/``importorskip``/``xfail``).

A skip raised while loading a file or a suite's data, or in a case, skips the item; the
kedi summary and JSON report then say ``skipped`` too. ``pytest.xfail()`` in a case makes
it ``xfailed``. Embedded Python is compiled under the ``.kedi`` path and line numbers, so
pytest's skip location already names the ``.kedi`` line.
"""

from __future__ import annotations

import linecache

import pytest

from pytest_kedi.text import display_path, printable

__all__ = ["case_outcome", "expected_failure", "failed_trace", "skip_reason", "xfail_reason"]


def expected_failure(report: pytest.TestReport) -> bool:
    """Whether pytest reported an expected failure (XFAIL). An unexpected pass (XPASS)
    carries ``wasxfail`` too, but passed (or failed, when the marker is strict)."""
    return report.skipped and hasattr(report, "wasxfail")


def skip_reason(report: pytest.TestReport) -> str | None:
    """Why pytest skipped the item, as its short summary shows it under ``-rs`` (a
    ``skip``/``skipif`` marker's reason, ``pytest.skip("why")`` in a fixture or in Kedi
    code): None for no reason, and for an expected failure (its reason is ``wasxfail``)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr = report.longrepr
    if not isinstance(longrepr, tuple) or len(longrepr) != 3:
        return None
    reason = str(longrepr[2])
    reason = reason.removeprefix("Skipped: ") if reason != "Skipped" else ""
    return reason or None


def xfail_reason(report: pytest.TestReport) -> str | None:
    """Why pytest expected the failure it reported (XFAIL), as ``-rx`` shows it: an
    ``xfail`` marker's reason or ``pytest.xfail("why")``'s; None without one."""
    if not expected_failure(report):
        return None
    return str(report.wasxfail).removeprefix("reason: ") or None


def case_outcome(report: pytest.TestReport) -> str:
    """A case's outcome word for reports: pytest's, with ``pytest.xfail()`` as ``xfailed``."""
    if expected_failure(report):
        return "xfailed"
    return report.outcome


def failed_trace(
    error: BaseException, header: tuple[str, int, str, str] | None = None
) -> tuple[str, tuple[str | None, int | None], str]:
    """``pytest.fail()`` raised in a case, in a procedure it called or by the model a
    template called, as a Kedi stack trace of the user's frames (the ``.kedi`` lines and
    the user's own Python: no frame of pytest-kedi, pydantic-ai or the standard library),
    the innermost ``.kedi`` file and line, and the trace's last part, ``Failed: <message>``
    (over several lines if the message has them).

    ``header`` (path, line, label, source) is the case's own frame (``> case: name:``),
    shown first; each `.kedi` line is labelled as a Kedi stack trace labels it (``in case
    name``, ``in proc``; the innermost ``in proc (Python)``)."""
    from pytest_kedi.pytraces import is_users  # (imported on a failure only)
    from pytest_kedi.runtime.pyerrors import PYTHON_UNITS

    entries: list[tuple[str, int, str, str, bool]] = []  # path, line, label, source, .kedi
    kedi_line: tuple[str | None, int | None] = (None, None)
    if header is not None:
        entries.append((*header, True))
    if getattr(error, "pytrace", True):
        tb = error.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            name, lineno = code.co_filename, tb.tb_lineno
            tb = tb.tb_next
            if not is_users(name):  # pytest-kedi's, pydantic-ai's, the standard library's
                continue
            source = linecache.getline(name, lineno).strip()
            if name.endswith(".kedi"):
                kedi_line = (name, lineno)
                unit = PYTHON_UNITS.codes.get(id(code))
                label = unit[1].procedure if unit is not None and unit[0] is code else None
                entries.append((name, lineno, label or "", source, True))
            else:
                entries.append((display_path(name), lineno, code.co_name, source, False))
    lines = ["Kedi stack trace:"]
    last = len(entries) - 1
    for index, (name, lineno, label, source, kedi) in enumerate(entries):
        if kedi and label and index == last and index > 0:
            label += " (Python)"  # the innermost unit, as a Kedi stack trace shows it
        lines.append(f'  File "{name}", line {lineno}' + (f", in {label}" if label else ""))
        if source:
            lines.append(f"    {printable(source)}")  # a control character as its escape
    message = str(getattr(error, "msg", "") or "").rstrip()
    final = f"Failed: {message}" if message else "Failed"
    lines.append(final)
    return "\n".join(lines), kedi_line, final
