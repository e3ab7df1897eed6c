"""The ``kedi`` terminal summary's lines (Kedi's own ``--test``/``--eval`` format).

Records are listed in source order: files in path order, then suites and cases by their
``.kedi`` line (`records.source_order`); the JSON report and the rows JSONL use the same order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping

from pytest_kedi.constants import TEST_MODEL
from pytest_kedi.evals import Usage, format_suite_line
from pytest_kedi.plugin.gating import score_digits, threshold_text
from pytest_kedi.plugin.records import CaseRecord, SuiteRecord

__all__ = ["case_line", "models_line", "suite_line", "usage_line"]

HOOK_NOTE = "pytest_kedi_model hook"
_OFFLINE = "offline default: synthetic output, not a real model"


def _case_status(outcome: str) -> str:
    if outcome == "passed":
        return "OK"
    if outcome == "skipped":
        return "SKIPPED"
    return "XFAIL" if outcome == "xfailed" else "FAIL"


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _verdict(record: SuiteRecord, digits: int = 4) -> str:
    outcome = record.outcome
    word = "FAILED" if outcome == "failed" else outcome
    if record.threshold is not None and outcome != "skipped":
        return f"[{word}, min score {threshold_text(record.threshold, digits)}]"
    return f"[{word}]"


def suite_line(record: SuiteRecord, *, feedback_limit: int | None) -> str:
    """Kedi's line ``- procedure::metric: 0.7500 | feedback`` plus threshold and verdict."""
    result = record.result
    if record.outcome == "skipped" and result.error is None:
        head = f"- {result.suite}::{result.metric}" if result.metric else f"- {result.suite}"
        return f"{head}: not run {_verdict(record)}"
    error = result.error
    if error and "\n" in error.strip():  # a rendered stack trace: its last line says what failed
        error = error.strip().splitlines()[-1].strip()
    feedback = result.feedback
    if feedback_limit is not None:
        feedback = _clip(feedback, feedback_limit) if feedback else feedback
        error = _clip(error, feedback_limit) if error else error
    shown = dataclasses.replace(result, rows=[], feedback=feedback, error=error)
    digits = score_digits(result.score, record.threshold)
    return f"{format_suite_line(shown, digits=digits)}  {_verdict(record, digits)}"


def case_line(record: CaseRecord, *, feedback_limit: int | None) -> str:
    """Kedi's ``--test`` line: ``- suite::case: OK`` or ``- suite::case: FAIL | <message>``."""
    line = f"- {record.procedure}::{record.case}: {_case_status(record.outcome)}"
    message = record.message
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


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def usage_line(suites: Collection[SuiteRecord]) -> str | None:
    """The run's model usage and retries over every suite's rows:
    ``usage: 7 requests, 812 input tokens, 64 output tokens; 1 retry`` (None: nothing)."""
    usage = Usage.total(suite.result.usage for suite in suites)
    retries = sum(suite.result.retries for suite in suites)
    if not usage and not retries:
        return None
    parts = []
    if usage:
        parts.append(
            f"{_count(usage.requests, 'request')}, {_count(usage.input_tokens, 'input token')}, "
            f"{_count(usage.output_tokens, 'output token')}"
        )
    if retries:
        parts.append(f"{retries} {'retry' if retries == 1 else 'retries'}")
    return "usage: " + "; ".join(parts)
