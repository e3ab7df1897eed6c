"""The HTML report and the Markdown summary, written by the controller at session finish.

Both are rendered by `pytest_kedi.viewer` from the same report document as the JSON
report. The Markdown summary goes to ``--kedi-markdown`` (overwritten) or is appended to
``$GITHUB_STEP_SUMMARY`` -- the latter only when the run had Kedi items (or a ``.kedi``
file failed to collect).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pytest_kedi.atomicwrite import reason
from pytest_kedi.evals.results import write_text_atomic
from pytest_kedi.plugin.records import RunRecord
from pytest_kedi.plugin.settings import KediSettings

__all__ = ["ViewOutcome", "write_views"]


@dataclass(frozen=True, slots=True)
class ViewOutcome:
    written: list[Path] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # shown, but do not fail the run


def write_views(
    settings: KediSettings,
    run: RunRecord,
    *,
    xfailed: Iterable[str],
    exitstatus: int,
    started: datetime,
) -> ViewOutcome:
    outcome = ViewOutcome()
    ran = bool(
        run.suites or run.tests or run.errors
    )  # (errors: a .kedi file could not be collected)
    want_markdown = settings.markdown_path is not None and (ran or not settings.markdown_append)
    if settings.html_path is None and not want_markdown:
        return outcome
    from pytest_kedi.text import display_path
    from pytest_kedi.viewer import render_html, render_markdown, run_view
    from pytest_kedi.viewer.model import format_time

    # the JSON report's path as the user gave it (relative where it lies under the working
    # directory: the page travels as a CI artifact), else what the page shows
    report = settings.report_path
    label = display_path(str(report)) if report is not None else "this pytest run"
    view = run_view(
        run.to_json(),
        label=label,
        when=format_time(started),
        exitstatus=exitstatus,
        xfailed=xfailed,
    )
    if settings.html_path is not None:
        _write(outcome, settings.html_path, lambda: render_html([view]), append=False)
    if want_markdown and settings.markdown_path is not None:
        text = render_markdown([view])
        _write(outcome, settings.markdown_path, lambda: text, append=settings.markdown_append)
    return outcome


def _write(outcome: ViewOutcome, path: Path, render: Callable[[], str], *, append: bool) -> None:
    try:
        text = render()
        if append:  # $GITHUB_STEP_SUMMARY is shared by every command of the step
            with path.open("a", encoding="utf-8") as handle:
                handle.write(("\n" if path.stat().st_size else "") + text)
        else:
            write_text_atomic(path, text)
        outcome.written.append(path)
    except OSError as exc:
        if append:  # $GITHUB_STEP_SUMMARY, not a report the user asked for: a note
            outcome.notes.append(f"cannot append the job summary to {path}: {reason(exc)}")
        else:
            outcome.errors.append(f"cannot write {path}: {reason(exc)}")
