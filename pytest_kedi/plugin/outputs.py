"""Report paths are checked once, at configure time, before anything runs; `Output` is
what writing the reports at the end of the run gave.

A report never overwrites a source (``.kedi`` or ``.py`` file), and no two reports (the JSON
report, the rows JSONL, the HTML and Markdown views, ``$GITHUB_STEP_SUMMARY``) name the same
file (also through ``..``, symbolic links or hard links).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_kedi.atomicwrite import is_source_file, same_file
from pytest_kedi.plugin.settings import KediSettings
from pytest_kedi.text import display_path

__all__ = ["Output", "check_report_paths", "other_reports", "report_outputs"]

#: report files other plugins write: (their option, the attribute of ``config.option``)
_OTHER_REPORTS = (
    ("--junitxml", "xmlpath"),
    ("--html", "htmlpath"),
    ("--json-report-file", "json_report_file"),
)


def other_reports(config: pytest.Config) -> tuple[tuple[str, Path | None], ...]:
    """The report files pytest's JUnit XML and the known report plugins will write."""
    base = config.invocation_params.dir
    found = []
    for option, attribute in _OTHER_REPORTS:
        value = getattr(config.option, attribute, None)
        if option == "--json-report-file" and not getattr(config.option, "json_report", False):
            value = None  # pytest-json-report writes only with --json-report
        found.append((option, base / value if isinstance(value, str) and value else None))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Output:
    """What `reporting.write_reports` wrote, and the errors it met."""

    written: tuple[Path, ...] = ()
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # shown in the summary; they do not fail the run


def report_outputs(settings: KediSettings) -> tuple[tuple[str, Path | None], ...]:
    """(option, path) of every report ``settings`` asks for (``None``: not asked for)."""
    markdown = "$GITHUB_STEP_SUMMARY" if settings.markdown_append else "--kedi-markdown"
    return (
        ("--kedi-report", settings.report_path),
        ("--kedi-rows-jsonl", settings.rows_jsonl_path),
        ("--kedi-html", settings.html_path),
        (markdown, settings.markdown_path),
    )


def check_report_paths(
    outputs: Sequence[tuple[str, Path | None]], others: Sequence[tuple[str, Path | None]] = ()
) -> None:
    """Raise `pytest.UsageError` (exit 4) for a report path that would destroy data: a
    source file, or a file another report also writes. ``outputs``: (option, path) of
    every report the run writes (``None``: not asked for); ``others``: the files other
    plugins write (`other_reports`), none of which a Kedi report may share."""
    named = [(option, path) for option, path in outputs if path is not None]
    for option, path in named:
        for other, theirs in others:
            if theirs is not None and same_file(path, theirs):
                raise pytest.UsageError(
                    f"{option} and {other} name the same file ({display_path(str(path))}); "
                    "give each report its own path"
                )
    for option, path in named:
        if is_source_file(path):
            raise pytest.UsageError(
                f"{option} {display_path(str(path))}: refusing to overwrite a source file "
                "(a .kedi or .py file); choose another path"
            )
    for index, (option, path) in enumerate(named):
        for other, second in named[index + 1 :]:
            if same_file(path, second):
                shown = display_path(str(path))
                raise pytest.UsageError(
                    f"{option} and {other} name the same file ({shown}); "
                    "give each report its own path"
                )
