"""Report runs -> a GitHub-flavoured Markdown summary (for ``$GITHUB_STEP_SUMMARY`` or a
pull-request comment): one table of suites, then the worst rows of every failed suite."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_kedi.evals.scoring import threshold_text
from pytest_kedi.text import counted, printable, truncate
from pytest_kedi.viewer.errors import errors_markdown
from pytest_kedi.viewer.model import (
    RowView,
    RunView,
    SuiteView,
    compared,
    previous_suites,
    shown_digits,
)

__all__ = ["cell", "render_markdown"]

_VERDICT = {
    "passed": "✅ passed",
    "failed": "❌ FAILED",
    "skipped": "⏭️ skipped",
    "xfail": "⚠️ xfail (expected failure)",
}
_RUN = {"passed": "✅ passed", "failed": "❌ FAILED", "interrupted": "⚠️ INTERRUPTED"}
_CELL_LIMIT = 160
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def cell(text: str | None, limit: int = _CELL_LIMIT) -> str:
    """One table cell: HTML and Markdown specials escaped, ``|`` escaped, newlines as
    ``<br>``, control characters as their escapes (`printable`: an ESC in feedback would
    restyle a terminal showing the file)."""
    if text is None or text == "":
        return "—"
    text = truncate(text, limit, "…")
    lines = text.splitlines() if "\n" in text or "\r" in text else [text]
    text = "\n".join(printable(line) for line in lines)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _SPECIAL.sub(r"\\\1", text)
    return text.replace("\n", "<br>")


def _suite_row(suite: SuiteView, delta: float | None) -> str:
    digits = shown_digits(suite)  # as the terminal shows them: told apart from the threshold
    score = f"{suite.score:.{digits}f}" if suite.scored else "—"  # else a placeholder 0.0
    if suite.ci is not None:
        score += f" (95% CI {suite.ci[0]:.{digits}f} to {suite.ci[1]:.{digits}f})"
    errors = ", ".join(f"{name} {count}" for name, count in suite.errors_by_class)
    if not errors and suite.rows_errored:
        errors = str(suite.rows_errored)
    if suite.error:
        lines = [line for line in suite.error.strip().splitlines() if line.strip()]
        errors = (errors + "; " if errors else "") + "suite error: " + (lines[-1] if lines else "")
    cells = [
        cell(suite.label),
        score,
        (threshold_text(suite.threshold, digits) + (" (lower bound)" if suite.lower_gate else ""))
        if suite.threshold is not None
        else "—",
        _VERDICT.get(suite.verdict, cell(suite.verdict)) + _why(suite),
        f"{delta:+.4f}" if delta is not None else "—",
        cell(errors) if errors else "0",
    ]
    return "| " + " | ".join(cells) + " |"


def _why(suite: SuiteView) -> str:
    """Why pytest failed a suite its gates passed (XPASS(strict), a teardown), skipped it or
    expected it to fail."""
    why = suite.failure if suite.verdict == "failed" else suite.reason
    return f" ({cell(why)})" if why else ""


def _worst(rows: Sequence[RowView], count: int) -> list[RowView]:
    below = [row for row in rows if row.score < 1.0 or row.error_class]
    return sorted(below, key=lambda r: (r.score, r.error_class is None, r.index))[:count]


def _worst_rows(suite: SuiteView, count: int) -> list[str]:
    rows = _worst(suite.rows, count)
    if not rows:
        return []
    with_output = any(r.output is not None for r in rows)
    head = ["Row", "Score", "Input", "Expected"] + (["Output"] if with_output else [])
    head.append("Feedback / error")
    lines = [
        "",
        f"#### Worst rows of {cell(suite.label)} ({len(rows)} of {suite.rows_total})",
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(["---:", "---:"] + ["---"] * (len(head) - 2)) + " |",
    ]
    for row in rows:
        note = row.feedback
        if row.error_class:
            error = row.error or ""
            if note and error and (error in note or note.removeprefix("error: ") in error):
                note = None  # the feedback is the error (`error: <Type>: <message>`), unlocated
            note = f"{row.error_class}: {row.error or ''}" + (f" ({note})" if note else "")
        cells = [str(row.index), f"{row.score:.4f}", cell(row.input), cell(row.expected)]
        cells += [cell(row.output)] if with_output else []
        cells.append(cell(note))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown(runs: Sequence[RunView], *, worst: int = 5) -> str:
    """The summary of the last run (deltas against its baseline, else the previous run)."""
    if not runs:
        raise ValueError("render_markdown needs at least one run")
    run = runs[-1]
    previous = previous_suites(runs)
    failed = sum(1 for s in run.suites if s.verdict == "failed")
    rows = sum(s.rows_total for s in run.suites)
    errored = sum(s.rows_errored for s in run.suites)
    facts = [
        f"{counted(len(run.suites), 'suite')} ({failed} failed)",
        f"{counted(rows, 'row')} ({errored} errored)",
    ]
    if run.tests:
        failed_tests = sum(1 for t in run.tests if t.outcome == "failed")
        facts.append(f"{counted(len(run.tests), 'test case')} ({failed_tests} failed)")
    if run.models:
        facts.append(
            "models: "
            + ", ".join(
                cell(m.name) + (f" ({counted(m.calls, 'call')})" if m.calls is not None else "")
                for m in run.models
            )
        )
    if run.errors:
        facts.append(counted(len(run.errors), "collection error"))
    lines = [f"### pytest-kedi: {_RUN[run.verdict]}", "", " · ".join(facts), ""]
    if run.stopped:  # -x, --maxfail: the items after the stop did not run
        lines += [f"⚠️ The run stopped early ({cell(run.stopped)}): not every item ran.", ""]
    lines += errors_markdown(run.errors)
    if not run.suites:
        lines.append("No eval suite ran.")
        return "\n".join(lines) + "\n"
    lines += [
        "| Suite | Score | Threshold | Verdict | Δ | Errors |",
        "| --- | ---: | ---: | --- | ---: | --- |",
    ]
    for suite in run.suites:
        # against the previous report when several were given, else the baseline
        delta = compared(previous.get(suite.nodeid), suite) if previous else suite.delta
        lines.append(_suite_row(suite, delta))
    for suite in run.suites:
        if suite.verdict in ("failed", "xfail"):
            lines += _worst_rows(suite, worst)
    return "\n".join(lines) + "\n"
