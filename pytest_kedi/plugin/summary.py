"""The ``kedi`` terminal summary's lines (Kedi's own ``--test``/``--eval`` format).

Entries are listed in source order: files in path order, then suites and cases by their
``.kedi`` line (`source_order`); the JSON report and the rows JSONL use the same order.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from pytest_kedi.constants import TEST_MODEL
from pytest_kedi.plugin.gating import score_digits, threshold_text

__all__ = ["case_line", "models_line", "source_order", "suite_line"]

HOOK_NOTE = "pytest_kedi_model hook"
_OFFLINE = "offline default: synthetic output, not a real model"
_CASE_STATUS = {"passed": "OK", "skipped": "SKIPPED", "xfailed": "XFAIL"}


def source_order(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries sorted by file path, then ``.kedi`` line, then node id."""
    return sorted(entries, key=lambda e: (e["path"], e["line"], e["nodeid"]))


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _verdict(suite: Mapping[str, Any], digits: int = 4) -> str:
    outcome = suite["outcome"]
    word = "FAILED" if outcome == "failed" else outcome
    if suite["threshold"] is not None and outcome != "skipped":
        return f"[{word}, min score {threshold_text(suite['threshold'], digits)}]"
    return f"[{word}]"


def suite_line(suite: Mapping[str, Any], *, feedback_limit: int | None) -> str:
    """Kedi's line ``- procedure::metric: 0.7500 | feedback`` plus threshold and verdict."""
    from pytest_kedi.evals import SuiteResult, format_suite_line

    if suite["outcome"] == "skipped" and suite["error"] is None:
        head = (
            f"- {suite['procedure']}::{suite['metric']}"
            if suite["metric"]
            else f"- {suite['procedure']}"
        )
        return f"{head}: not run {_verdict(suite)}"
    error = suite["error"]
    if error and "\n" in error.strip():  # a rendered stack trace: its last line says what failed
        error = error.strip().splitlines()[-1].strip()
    feedback = suite["feedback"]
    if feedback_limit is not None:
        feedback = _clip(feedback, feedback_limit) if feedback else feedback
        error = _clip(error, feedback_limit) if error else error
    result = SuiteResult(
        suite=suite["procedure"],
        metric=suite["metric"],
        dataset=suite["dataset"],
        split=suite["split"],
        score=suite["score"],
        rows=[],
        rows_total=suite["rows_total"],
        rows_errored=suite["rows_errored"],
        errors_by_class=dict(suite["errors_by_class"]),
        feedback=feedback,
        error=error,
        duration_s=suite["duration_s"],
    )
    digits = score_digits(suite["score"], suite["threshold"])
    return f"{format_suite_line(result, digits=digits)}  {_verdict(suite, digits)}"


def case_line(entry: Mapping[str, Any], *, feedback_limit: int | None) -> str:
    """Kedi's ``--test`` line: ``- suite::case: OK`` or ``- suite::case: FAIL | <message>``."""
    status = _CASE_STATUS.get(entry["outcome"], "FAIL")
    line = f"- {entry['procedure']}::{entry['case']}: {status}"
    message = entry["message"]
    if message:
        first = message.strip().splitlines()[0]
        line += f" | {_clip(first, feedback_limit) if feedback_limit else first}"
    return line


def models_line(calls: Mapping[str, int], defaults: Collection[str]) -> str:
    """The models that answered: ``models: openai-chat:gpt-4o-mini (7 calls)``.

    The offline ``test`` model is flagged whenever it answered anything. With no model
    call at all, the default model label(s) of the files that ran are named instead.
    """
    if calls:
        parts = []
        for name, count in sorted(calls.items()):
            counted = f"{count} call{'s' if count != 1 else ''}"
            if f"{name} ({HOOK_NOTE})" in defaults:
                counted += f"; {HOOK_NOTE}"
            parts.append(
                f"{name} ({counted}; {_OFFLINE})" if name == TEST_MODEL else f"{name} ({counted})"
            )
        return "models: " + ", ".join(parts)
    return f"models: no model calls (default: {'; '.join(sorted(defaults))})"
