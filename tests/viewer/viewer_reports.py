"""Synthetic JSON report documents for the viewer tests (imported by the test modules).

`full_report` carries every optional field the viewer reads: a version-2 top level
(``models`` call counts, ``interrupted``, ``exitstatus``), suite intervals, standard errors,
repeats and baseline deltas, and per row ``output``, a ``calls`` trace, ``flaky`` and
``delta`` -- plus rows whose strings try to inject markup and script.
"""

from __future__ import annotations

import copy
import random
from typing import Any

#: Set by any injected script that runs; the browser tests assert it never is.
PWNED = "__kedi_pwned"
SCRIPT_INPUT = "<script>alert(1)</script>"
BREAKOUT = f"</script><script>window.{PWNED}=1</script>"
IMG = f'<img src=x onerror="window.{PWNED}=1">'


def row(index: int, score: float, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "index": index,
        "input": f"'question {index}'",
        "expected": f"'answer {index}'",
        "score": score,
        "feedback": None,
        "error": None,
        "error_class": None,
        "duration_s": 0.01,
    }
    data.update(extra)
    return data


def suite(nodeid: str, score: float, rows: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    path, _, name = nodeid.partition("::eval:")
    errored = [r for r in rows if r["error_class"]]
    by_class: dict[str, int] = {}
    for r in errored:
        by_class[r["error_class"]] = by_class.get(r["error_class"], 0) + 1
    data: dict[str, Any] = {
        "nodeid": nodeid,
        "path": path,
        "line": 3,
        "procedure": name,
        "metric": "exact",
        "dataset": "samples",
        "split": "data",
        "score": score,
        "rows_total": len(rows),
        "rows_errored": len(errored),
        "errors_by_class": by_class,
        "feedback": None,
        "threshold": None,
        "outcome": "passed",
        "error": None,
        "duration_s": 0.5,
        "rows": rows,
    }
    data.update(extra)
    return data


def v1_report() -> dict[str, Any]:
    """A plain version-1 document, as today's ``--kedi-report`` writes it."""
    rows = [row(0, 1.0), row(1, 0.0, feedback="wrong"), row(2, 1.0)]
    return {
        "version": 1,
        "suites": [suite("a.kedi::eval:alpha", 2 / 3, rows)],
        "tests": [
            {
                "nodeid": "a.kedi::test:alpha::ok",
                "path": "a.kedi",
                "line": 9,
                "procedure": "alpha",
                "case": "ok",
                "outcome": "passed",
                "message": None,
            }
        ],
    }


def full_report() -> dict[str, Any]:
    calls = [
        {
            "model": "openai:gpt-4o-mini",
            "prompt": "Classify: refund please",
            "instructions": "You are a classifier.",
            "answer": "billing",
            "tokens": {"input": 12, "output": 3},
            "duration_s": 0.25,
        }
    ]
    classify_rows = [
        row(0, 1.0, output="'billing'", calls=calls, scores=[1.0, 1.0], retries=2, tokens=15),
        row(1, 0.0, input=repr(SCRIPT_INPUT), output=repr(IMG), feedback=BREAKOUT, delta=-1.0),
        row(2, 0.5, output="'bug'", flaky=True, scores=[1.0, 0.0]),
        row(
            3,
            0.0,
            output=None,
            error="KediModelError: model call failed | boom\nsecond line",
            error_class="model",
        ),
        row(4, 1.0, input="'" + "long input " * 40 + "'", output="'account'", delta=0.5),
    ]
    gated = suite(
        "classifier.kedi::eval:classify",
        0.5,
        classify_rows,
        threshold=0.9,
        outcome="failed",
        ci=[0.31, 0.69],
        stderr=0.094,
        repeats=2,
        delta=-0.25,
        feedback="wrong | category\nsecond line",
        tokens={"input": 120, "output": 30},
    )
    fine = suite(
        "text.kedi::eval:normalize", 1.0, [row(i, 1.0, output="'x'") for i in range(3)], delta=0.1
    )
    broken = suite(
        "broken.kedi::eval:load",
        0.0,
        [],
        outcome="failed",
        error="the dataset failed to load: KeyError: 'x'",
    )
    return {
        "version": 2,
        "interrupted": False,
        "exitstatus": 1,
        "tokens": {"input": 1200, "output": 300},
        "models": {"openai:gpt-4o-mini": 42, "test": {"calls": 3, "synthetic": True}},
        "suites": [gated, fine, broken],
        "tests": [],
    }


#: words for `big_report`'s long values (a pseudo-random text per row, as real answers vary)
WORDS = (
    "the",
    "app",
    "shows",
    "an",
    "error",
    "when",
    "I",
    "pay",
    "my",
    "invoice",
    "twice",
    "since",
    "the",
    "last",
    "update",
    "please",
    "refund",
    "account",
    "password",
    "login",
    "settings",
    "crash",
    "photo",
    "upload",
    "subscription",
    "card",
    "declined",
    "order",
    "delivery",
    "late",
    "missing",
    "item",
    "support",
    "reply",
    "answer",
    "customer",
    "billing",
    "bug",
    "other",
    "thanks",
)


def _text(i: int, field: str, size: int = 200) -> str:
    """A repr as the reports record it (at most 200 characters), different for every row."""
    words = random.Random(f"{field}{i}").choices(WORDS, k=60)
    return repr(f"{field} {i}: " + " ".join(words))[:size]


def big_report(rows: int = 10_000, *, long_values: bool = False) -> dict[str, Any]:
    """One suite of ``rows`` realistic rows (short reprs, some feedback and errors); with
    ``long_values``, input, expected value, output and feedback are as long as a report
    records them (200-character reprs) and differ on every row."""
    data = []
    for i in range(rows):
        extra: dict[str, Any] = {
            "input": f"'Customer ticket number {i}: the app shows an error when I pay'",
            "expected": "'billing'",
            "output": "'bug'" if i % 4 == 0 else "'billing'",
        }
        if long_values:
            extra["input"] = _text(i, "Customer ticket number")
            extra.update(expected=_text(i, "expected"), output=_text(i, "output"))
        if i % 4 == 0:
            extra["feedback"] = f"wrong category for ticket {i}"
            if long_values:
                extra["feedback"] += _text(i, "; feedback")
        if i % 97 == 0:
            extra.update(error="KediModelError: model call failed: timeout", error_class="timeout")
        data.append(row(i, 0.0 if i % 4 == 0 else 1.0, **extra))
    return {"version": 1, "suites": [suite("big.kedi::eval:big", 0.75, data)], "tests": []}


def rescored(document: dict[str, Any], scores: dict[int, float]) -> dict[str, Any]:
    """A copy of ``document`` whose first suite's rows ``index -> score`` changed."""
    clone = copy.deepcopy(document)
    first = clone["suites"][0]
    for r in first["rows"]:
        if r["index"] in scores:
            r["score"] = scores[r["index"]]
    first["score"] = sum(r["score"] for r in first["rows"]) / max(len(first["rows"]), 1)
    return clone
