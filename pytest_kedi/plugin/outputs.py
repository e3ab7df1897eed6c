"""Report paths are checked once, at configure time, before anything runs; `Output` is
what writing the reports at the end of the run gave.

A report never overwrites a source (``.kedi`` or ``.py`` file), and the JSON report and
the rows JSONL never name the same file (also through ``..``, symbolic links or hard links).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_kedi.text import display_path

__all__ = ["Output", "check_report_paths"]

_SOURCE_SUFFIXES = (".kedi", ".py")


@dataclass(frozen=True, slots=True)
class Output:
    """What `reporting.write_reports` wrote, and the errors it met."""

    written: tuple[Path, ...] = ()
    errors: tuple[str, ...] = ()


def _same_file(first: Path, second: Path) -> bool:
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist yet
        return False


def check_report_paths(report: Path | None, rows_jsonl: Path | None) -> None:
    """Raise `pytest.UsageError` (exit 4) for a report path that would destroy data."""
    named = [
        (opt, path)
        for opt, path in (("--kedi-report", report), ("--kedi-rows-jsonl", rows_jsonl))
        if path is not None
    ]
    for option, path in named:
        resolved = Path(os.path.realpath(path))
        if path.suffix in _SOURCE_SUFFIXES or resolved.suffix in _SOURCE_SUFFIXES:
            raise pytest.UsageError(
                f"{option} {display_path(str(path))}: refusing to overwrite a source file "
                "(a .kedi or .py file); choose another path"
            )
    if report is not None and rows_jsonl is not None and _same_file(report, rows_jsonl):
        shown = display_path(str(report))
        raise pytest.UsageError(
            f"--kedi-report and --kedi-rows-jsonl name the same file ({shown}); "
            "give each report its own path"
        )
