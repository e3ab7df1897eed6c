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

from typing import TYPE_CHECKING

from pytest_kedi.exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:  # pragma: no cover
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

#: Where each public name lives: the package imports a module on first use of one of its
#: names, so the plugin's start-up (which needs only `EvalOptions`' checks) and a
#: collection do not pay for the runner, the results and their dependencies.
_EXPORTS = {
    "KediSuiteError": "pytest_kedi.errors",
    "ERROR_CLASSES": "pytest_kedi.evals.classify",
    "classify_exception": "pytest_kedi.evals.classify",
    "describe_exception": "pytest_kedi.evals.classify",
    "NO_EXPECTED": "pytest_kedi.evals.datasets",
    "materialize_rows": "pytest_kedi.evals.datasets",
    "select_dataset": "pytest_kedi.evals.datasets",
    "SPLITS": "pytest_kedi.evals.evaloptions",
    "EvalOptions": "pytest_kedi.evals.evaloptions",
    "Split": "pytest_kedi.evals.evaloptions",
    "RowResult": "pytest_kedi.evals.results",
    "SuiteResult": "pytest_kedi.evals.results",
    "Usage": "pytest_kedi.evals.results",
    "format_suite_line": "pytest_kedi.evals.results",
    "join_feedback": "pytest_kedi.evals.results",
    "short_repr": "pytest_kedi.evals.results",
    "write_jsonl": "pytest_kedi.evals.results",
    "CarryOver": "pytest_kedi.evals.runner",
    "EvalProgram": "pytest_kedi.evals.runner",
    "RowCallback": "pytest_kedi.evals.runner",
    "run_suite": "pytest_kedi.evals.runner",
    "InvalidScoreError": "pytest_kedi.evals.scoring",
    "normalize_score": "pytest_kedi.evals.scoring",
    "SuiteStats": "pytest_kedi.evals.stats",
    "suite_stats": "pytest_kedi.evals.stats",
}

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


__getattr__ = _lazy_exports(globals(), _EXPORTS)
