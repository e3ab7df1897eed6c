"""pytest outcomes raised from Kedi code (``pytest.skip``/``importorskip``/``xfail``).

A skip raised while loading a file or a suite's data, or in a case, skips the item; the
kedi summary and JSON report then say ``skipped`` too. ``pytest.xfail()`` in a case makes
it ``xfailed``. pytest reports a skip at the innermost frame, which is an embedded
Python unit of the ``.kedi`` file; `relocate_skip` points the report at the `.kedi` line.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["case_outcome", "relocate_skip"]


def relocate_skip(report: pytest.TestReport) -> None:
    """Point a skip raised inside embedded Python at its ``.kedi`` file and line."""
    from pytest_kedi.runtime.pyerrors import REGISTRY

    longrepr = report.longrepr
    if not report.skipped or not isinstance(longrepr, tuple) or len(longrepr) != 3:
        return
    filename, lineno, reason = longrepr
    info = REGISTRY.get(str(filename))
    if info is None:
        return
    line = info.code.line + int(lineno) - 1
    report.longrepr = (os.fspath(info.source_file.path), line, reason)


def case_outcome(report: pytest.TestReport) -> str:
    """A case's outcome word for reports: pytest's, with ``pytest.xfail()`` as ``xfailed``."""
    if report.skipped and hasattr(report, "wasxfail"):
        return "xfailed"
    return report.outcome
