"""Collection errors as report records (`CollectErrorRecord`): the files pytest could not
collect, as the controller (or the only process) saw them fail.

A ``.kedi`` parse error keeps its location (its `CollectErrorRepr` headline,
``file.kedi:LINE:COLUMN: message``, is what pytest's short test summary shows); another
error's message is the last line pytest printed for it (``E   ModuleNotFoundError: ...``).
Every text is cleaned as the other report texts are (surrogates escaped, keys redacted).
"""

from __future__ import annotations

import pytest

from pytest_kedi.evals.safetext import clean_text
from pytest_kedi.plugin.collect import CollectErrorRepr
from pytest_kedi.plugin.records import CollectErrorRecord

__all__ = ["error_record"]


def error_record(report: pytest.CollectReport) -> CollectErrorRecord | None:
    """The record of a failed collection report (None for one that did not fail)."""
    if not report.failed:
        return None
    text = clean_text(report.longreprtext.strip()) or "collection failed"
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if isinstance(longrepr, CollectErrorRepr) and crash is not None:
        headline = clean_text(str(crash.message))
        line, column = _location(headline, str(crash.path), int(crash.lineno))
        return CollectErrorRecord(report.nodeid, headline, text, line, column)
    return CollectErrorRecord(report.nodeid, _last_line(text), text)


def _location(headline: str, path: str, line: int) -> tuple[int | None, int | None]:
    """The line and column of a headline ``path:LINE:COLUMN: message`` (an unreadable
    file's headline, ``cannot read ...``, has none)."""
    prefix = f"{path}:{line}:"
    if line <= 0 or not headline.startswith(prefix):
        return None, None
    column, colon, _ = headline[len(prefix) :].partition(": ")
    return (line, int(column)) if colon and column.isdigit() else (line, None)


def _last_line(text: str) -> str:
    """What the error says in one line: the last ``E   `` line of a traceback (pytest's
    exception line), else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [line[1:].strip() for line in lines if line.startswith("E ")]
    return marked[-1] if marked else lines[-1]
