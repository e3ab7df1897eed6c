"""Reading a saved ``--kedi-report`` JSON document back into a `RunRecord`.

Versions 2 and 3 are read (fields a version-2 report lacks take their defaults). Every
failure is one `ReportReadError` line naming the file: unreadable, not JSON, not a
pytest-kedi report, an unsupported version, or a missing or malformed field.
"""

from __future__ import annotations

import json
import os

from pytest_kedi.jsontext import ReportFileError, read_report_object
from pytest_kedi.plugin.records import RunRecord

__all__ = ["SUPPORTED_VERSIONS", "ReportReadError", "read_run"]

SUPPORTED_VERSIONS = (2, 3)


class ReportReadError(Exception):
    """A report that cannot be used; the message is one line naming the file."""


def read_run(path: str | os.PathLike[str]) -> RunRecord:
    name = os.fspath(path)
    try:
        data = read_report_object(path)
    except ReportFileError as exc:
        raise ReportReadError(str(exc)) from None
    if "version" not in data or "suites" not in data:
        raise ReportReadError(f"{name}: not a pytest-kedi JSON report (--kedi-report)")
    version = data["version"]
    # `true` and `3.0` equal 1 and 3 in Python; a report writes its version as an integer.
    if type(version) is not int or version not in SUPPORTED_VERSIONS:
        supported = ", ".join(map(str, SUPPORTED_VERSIONS))
        raise ReportReadError(
            f"{name}: report version {json.dumps(version)} is not supported "
            f"(this pytest-kedi reads versions {supported})"
        )
    try:
        return RunRecord.from_json(data)
    except KeyError as exc:
        raise ReportReadError(f"{name}: malformed report: missing field {exc}") from None
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ReportReadError(f"{name}: malformed report: {exc}") from None
