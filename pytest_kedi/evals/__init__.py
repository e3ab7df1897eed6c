"""Kedi eval engine: datasets, row shapes, scoring, the suite runner and results.

No pytest imports: the plugin and the CLI both drive suites through `run_suite`.

Row error classes (first match wins; details in `pytest_kedi.evals.classify`):

* ``timeout``: the row exceeded `EvalOptions.timeout`;
* ``invalid_score``: the metric returned NaN or an infinite score;
* ``model``: a `KediModelError` (adapter/provider/model output) or a pydantic-ai exception;
* ``type``: a `KediTypeExecutionError` with no ``.original`` (Kedi strict validation);
* ``procedure``: raised inside a procedure the metric called (a ``procedure`` frame);
* ``metric``: anything else (the metric body itself, or a result of the wrong shape).
"""

from __future__ import annotations

from pytest_kedi.errors import KediSuiteError
from pytest_kedi.evals.classify import ERROR_CLASSES, classify_exception, describe_exception
from pytest_kedi.evals.datasets import NO_EXPECTED, materialize_rows, select_dataset
from pytest_kedi.evals.evaloptions import SPLITS, EvalOptions, Split
from pytest_kedi.evals.results import (
    RowResult,
    SuiteResult,
    Usage,
    format_suite_line,
    join_feedback,
    short_repr,
    write_jsonl,
)
from pytest_kedi.evals.runner import CarryOver, EvalProgram, RowCallback, run_suite
from pytest_kedi.evals.scoring import InvalidScoreError, normalize_score
from pytest_kedi.evals.stats import SuiteStats, suite_stats

__all__ = [
    "ERROR_CLASSES",
    "NO_EXPECTED",
    "SPLITS",
    "CarryOver",
    "EvalOptions",
    "EvalProgram",
    "InvalidScoreError",
    "RowCallback",
    "RowResult",
    "Split",
    "KediSuiteError",
    "SuiteResult",
    "SuiteStats",
    "Usage",
    "classify_exception",
    "describe_exception",
    "format_suite_line",
    "join_feedback",
    "materialize_rows",
    "normalize_score",
    "run_suite",
    "select_dataset",
    "short_repr",
    "suite_stats",
    "write_jsonl",
]
