"""`loads`: JSON as the standard has it, for the reports pytest-kedi reads back, and
`read_report_object`, a report file's JSON object.

Python's reader also takes ``NaN``, ``Infinity`` and ``-Infinity``, which no report
pytest-kedi writes holds (it writes with ``allow_nan=False``): read back, they would
break the numbers every reader relies on. Here they are a `ValueError` naming them.
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["ReportFileError", "loads", "read_report_object"]


class ReportFileError(ValueError):
    """A report file that cannot be read as one; the message is one line naming the file."""


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str) -> Any:
    """``json.loads(text)``, refusing ``NaN``/``Infinity`` (`json.JSONDecodeError` for bad
    syntax, `ValueError` for those and for arrays or objects nested too deeply to read)."""
    try:
        return json.loads(text, parse_constant=_refuse)
    except RecursionError:  # Python's reader recurses per level: no report nests so deep
        raise ValueError("JSON nested too deeply") from None


def read_report_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in the report file ``path``, read as `html`, `compare` and `merge` all
    read one: every problem is a `ReportFileError` whose message is one line naming the file."""
    name = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        raise ReportFileError(f"{name}: no such file") from None
    except OSError as exc:
        raise ReportFileError(f"{name}: cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ReportFileError(f"{name}: not a pytest-kedi JSON report (not UTF-8 text)") from None
    try:
        document = loads(text)
    except json.JSONDecodeError as exc:
        raise ReportFileError(
            f"{name}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
        ) from None
    except ValueError as exc:  # NaN or Infinity, which reports never hold
        raise ReportFileError(f"{name}: not a pytest-kedi JSON report ({exc})") from None
    if not isinstance(document, dict):
        raise ReportFileError(f"{name}: not a pytest-kedi JSON report (expected a JSON object)")
    return document
