"""The ``kedi`` terminal summary's lines (Kedi's own ``--test``/``--eval`` format).

Records are listed in source order: files in path order, then suites and cases by their
``.kedi`` line (`records.source_order`); the JSON report and the rows JSONL use the same order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping

from pytest_kedi.constants import EVAL_SKIP_REASON, HOOK_NOTE, TEST_MODEL
from pytest_kedi.plugin.gating import interval_text, score_digits, shows_interval, threshold_text
from pytest_kedi.plugin.optionvalues import MaxErrors
from pytest_kedi.plugin.records import CaseRecord, SuiteRecord
from pytest_kedi.text import counted, one_line, truncate

__all__ = [
    "case_line",
    "flaky_line",
    "models_line",
    "rerun_lines",
    "suite_line",
    "usage_line",
    "xfail_note",
]

#: flaky rows named per suite in the summary (the reports list them all)
FLAKY_SHOWN = 10

_OFFLINE = "offline default: synthetic output, not a real model"


def _clip(text: str, limit: int) -> str:
    """``text`` on one line as Kedi's CLI puts it (`one_line`: each line's own spacing
    kept, ``'a  b'`` is not ``'a b'``), cut to ``limit`` characters."""
    return truncate(one_line(text), limit)


def _case_status(outcome: str) -> str:
    if outcome == "passed":
        return "OK"
    if outcome == "skipped":
        return "SKIPPED"
    return "XFAIL" if outcome == "xfailed" else "FAIL"


def _verdict(
    record: SuiteRecord, digits: int = 4, limit: int | None = None, dropped: float | None = None
) -> str:
    outcome = record.outcome
    word = "FAILED" if outcome == "failed" else outcome
    reason = record.skip_reason.strip() if record.skip_reason else ""
    if outcome == "skipped" and reason and reason != EVAL_SKIP_REASON:  # (that one: said once)
        reason = reason.splitlines()[0]  # pytest's, as `-rs` shows it
        word += f": {_clip(reason, limit) if limit else reason}"
    parts = [word]
    if record.failure and outcome == "failed":  # pytest failed it: an XPASS(strict), a teardown
        parts.append(_failure_text(record.failure))
    if record.threshold is not None and outcome != "skipped":
        bound = " on the lower bound" if record.gate == "lower" else ""
        parts.append(f"min score {threshold_text(record.threshold, digits)}{bound}")
    result = record.result
    if (
        record.max_errors is not None
        and result.error is None
        and MaxErrors.of(record.max_errors).exceeded(result.rows_errored, result.rows_total)
    ):  # the error budget it missed (`--kedi-max-errors`), as its failure message says
        parts.append(
            f"max errors {record.max_errors:g}: {result.rows_errored} of "
            f"{result.rows_total} rows errored"
        )
    if dropped is not None:  # the max drop it fell by more than, as the baseline lines say
        parts.append(f"dropped more than {threshold_text(dropped, digits)}")
    return f"[{', '.join(parts)}]"


def _failure_text(failure: str) -> str:
    """Why pytest failed the suite, one line: ``XPASS(strict): <reason>`` (pytest's
    ``[XPASS(strict)] <reason>``) or ``teardown: <ExceptionType>: <message>``."""
    first = failure.strip().splitlines()[0] if failure.strip() else "failed"
    if first.startswith("[XPASS(strict)]"):
        reason = first.removeprefix("[XPASS(strict)]").strip()
        return f"XPASS(strict): {reason}" if reason else "XPASS(strict)"
    return first


def suite_line(
    record: SuiteRecord, *, feedback_limit: int | None, dropped: float | None = None
) -> str:
    """Kedi's line ``- procedure::metric: 0.7500 | feedback`` plus threshold and verdict
    (``dropped``: the ``--kedi-max-drop`` the suite fell by more than)."""
    result = record.result
    if record.outcome == "skipped" and result.error is None:
        head = f"- {result.suite}::{result.metric}" if result.metric else f"- {result.suite}"
        return f"{head}: not run {_verdict(record, limit=feedback_limit)}"
    error = result.error
    if error and "\n" in error.strip():  # a rendered stack trace: its last line says what failed
        error = error.strip().splitlines()[-1].strip()
    feedback = result.feedback
    if feedback_limit is not None:
        feedback = _clip(feedback, feedback_limit) if feedback else feedback
        error = _clip(error, feedback_limit) if error else error
    shown = dataclasses.replace(result, rows=[], feedback=feedback, error=error)
    digits = score_digits(result.score, record.threshold)
    from pytest_kedi.evals.results import format_suite_line

    line = format_suite_line(shown, digits=digits)
    if shows_interval(result, record.gate):
        line += f"  ({interval_text(result, digits)})"
    return f"{line}  {_verdict(record, digits, dropped=dropped)}"


def xfail_note(record: SuiteRecord | CaseRecord, limit: int | None) -> str:
    """What follows the line of a suite or case pytest reported as an expected failure:
    `` (xfail)``, or `` (xfail: <reason>)`` with the reason ``-rx`` shows."""
    reason = record.xfail_reason.strip().splitlines()[0] if record.xfail_reason else ""
    return f" (xfail: {_clip(reason, limit) if limit else reason})" if reason else " (xfail)"


def _scores(scores: list[float]) -> str:
    return ", ".join(f"{score:g}" for score in scores)


def flaky_line(record: SuiteRecord) -> str | None:
    """``flaky rows (2 of 4): row 1 [1, 0, 1], row 3 [1, 0, 0]`` (None when there is none)."""
    flaky = record.result.flaky_rows
    if not flaky:
        return None
    shown = ", ".join(f"row {row.index} [{_scores(row.scores)}]" for row in flaky[:FLAKY_SHOWN])
    more = f", and {len(flaky) - FLAKY_SHOWN} more" if len(flaky) > FLAKY_SHOWN else ""
    return f"flaky rows ({len(flaky)} of {record.result.rows_total}): {shown}{more}"


def rerun_lines(records: Collection[SuiteRecord]) -> list[str]:
    """``--kedi-rerun``'s account: rows rerun and carried over, and the suites that had no
    previous run (every row of those ran)."""
    reruns = [record for record in records if record.rerun is not None]
    if not reruns:
        return []
    mode = reruns[0].rerun.mode if reruns[0].rerun is not None else ""
    carried = sum(1 for record in reruns for row in record.rows if row.carried_over)
    total = sum(len(record.rows) for record in reruns)
    lines = [
        f"kedi rerun ({mode}): {total - carried} row{'s' if total - carried != 1 else ''} "
        f"rerun, {carried} carried over from the previous run"
    ]
    # (a suite that failed before scoring ran no row: nothing to say of it)
    fresh = [
        r for r in reruns if r.rerun is not None and not r.rerun.previous_run and r.result.completed
    ]
    if fresh:
        suites = "suite" if len(fresh) == 1 else "suites"
        lines.append(f"kedi rerun: no previous run of {len(fresh)} {suites}: all their rows ran")
    return lines


def case_line(record: CaseRecord, *, feedback_limit: int | None) -> str:
    """Kedi's ``--test`` line: ``- suite::case: OK`` or ``- suite::case: FAIL | <message>``
    (``SKIPPED | <reason>``: pytest's skip reason)."""
    line = f"- {record.procedure}::{record.case}: {_case_status(record.outcome)}"
    message = record.message
    if record.outcome in ("skipped", "xfailed") and not message:
        message = record.skip_reason or record.xfail_reason  # pytest's, as `-rs`/`-rx` show it
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


def usage_line(suites: Collection[SuiteRecord]) -> str | None:
    """The run's model usage and retries over every suite's rows:
    ``usage: 7 requests, 812 input tokens, 64 output tokens; 1 retry`` (None: nothing)."""
    from pytest_kedi.evals.usage import Usage

    usage = Usage.total(suite.result.usage for suite in suites)
    retries = sum(suite.result.retries for suite in suites)
    if not usage and not retries:
        return None
    parts = []
    if usage:
        parts.append(
            f"{counted(usage.requests, 'request')}, {counted(usage.input_tokens, 'input token')}, "
            f"{counted(usage.output_tokens, 'output token')}"
        )
    if retries:
        parts.append(counted(retries, "retry", "retries"))
    return "usage: " + "; ".join(parts)
