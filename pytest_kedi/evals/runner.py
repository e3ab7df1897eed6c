"""`run_suite`: select and load the dataset, score every row, aggregate
(docs/language.md#dataset-selection, #aggregation).

A suite-level failure (no metric, a missing dataset reference, a forced split the suite
lacks, a data-loading failure or a dataset that is not a non-string iterable) never
raises: the result carries ``error`` (located, user-facing text), ``score`` 0.0 and no
rows. Row failures score 0.0 with ``error: ...`` feedback and an error class (see
`pytest_kedi.evals.classify`) while the remaining rows still run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from pytest_kedi.errors import KediSuiteError
from pytest_kedi.evals.datasets import (
    NO_EXPECTED,
    Row,
    loading_failure,
    locate,
    materialize_rows,
    select_dataset,
)
from pytest_kedi.evals.evaloptions import EvalOptions
from pytest_kedi.evals.executor import DeadlineExceeded, call_with_deadline, each_row, run_rows
from pytest_kedi.evals.repeats import CarryOver, run_repeated
from pytest_kedi.evals.results import (
    REPR_LIMIT,
    RowResult,
    SuiteResult,
    join_feedback,
    join_outputs,
    reclean_rows,
    short_repr,
)
from pytest_kedi.evals.rowfailures import errored_row, failed_row, row_usage
from pytest_kedi.evals.safetext import SecretsHeld, current_secrets
from pytest_kedi.evals.scoring import mean, normalize_score
from pytest_kedi.evals.usage import NO_USAGE
from pytest_kedi.lang.nodes import Dataset, EvalSuite, Metric
from pytest_kedi.runtime.heap import freeze_if_few_young, older_objects_frozen
from pytest_kedi.runtime.rowscope import RowScope, enter, leave
from pytest_kedi.runtime.usererrors import failed_outcome, user_error
from pytest_kedi.text import truncate

__all__ = [
    "CarryOver",
    "EvalProgram",
    "ProgressCallback",
    "RowCallback",
    "RowsCallback",
    "run_suite",
]

RowCallback = Callable[[RowResult], object]
RowsCallback = Callable[[int], object]
ProgressCallback = Callable[[list[RowResult]], int]
_DEFAULT_OPTIONS = EvalOptions()


class EvalProgram(Protocol):
    """What `run_suite` needs from a loaded program (`pytest_kedi.runtime.Program`).

    A program may also offer ``metric_function(suite, metric, params)``: the metric as a
    function of a row's values in the order of ``params`` (the dataset's name, then
    ``"expected"`` when the row has one), or None. A suite of many rows calls it instead
    of ``metric_runner``'s function where it gives one. And ``prepare_models()``: build the
    models it may call, called before the rows when they have a time limit."""

    def load_dataset(self, suite: EvalSuite, dataset: Dataset) -> Any: ...

    def metric_runner(
        self, suite: EvalSuite, metric: Metric
    ) -> Callable[[dict[str, Any]], Any]: ...


#: Every `_FREEZE_EVERY` rows (a power of two), the objects the rows made and kept (their
#: results: two objects a row, three with the usage of a row that called a model) are
#: frozen with the suite's older objects, unless the young generation holds more than
#: `_YOUNG_PER_ROW` objects a row (`freeze_if_few_young`): the collector's young-generation
#: passes would walk the results, and its middle-generation passes walk them again, about a
#: tenth of a deterministic row's cost.
_FREEZE_EVERY = 64
_FREEZE_EVERY_MASK = _FREEZE_EVERY - 1
_YOUNG_PER_ROW = 4
_YOUNG_LIMIT = _FREEZE_EVERY * _YOUNG_PER_ROW


def run_suite(
    program: EvalProgram,
    suite: EvalSuite,
    options: EvalOptions = _DEFAULT_OPTIONS,
    *,
    on_row: RowCallback | None = None,
    carry: CarryOver | None = None,
    on_rows: RowsCallback | None = None,
    on_progress: ProgressCallback | None = None,
) -> SuiteResult:
    """Score one ``@eval:`` suite of a program loaded in validate mode.

    Every row runs ``options.repeat`` times (see `repeats.combine` for the row's result); rows
    for which ``carry`` returns a result are not run: that result (marked
    ``carried_over``) stands in for them. ``on_rows`` is called with the number of rows
    once they are known, before the first is scored; ``on_row`` with each scored row
    (see `run_rows`); ``on_progress`` with the rows scored so far, every few rows: as
    many as its previous call returned (`run_rows`).
    """
    # A full garbage collection triggered by the suite's objects (its dataset's rows
    # included) walks only what the suite made, not the whole process.
    with older_objects_frozen():
        return _run_suite(program, suite, options, on_row, carry, on_rows, on_progress)


def _run_suite(
    program: EvalProgram,
    suite: EvalSuite,
    options: EvalOptions,
    on_row: RowCallback | None,
    carry: CarryOver | None,
    on_rows: RowsCallback | None,
    on_progress: ProgressCallback | None,
) -> SuiteResult:
    started = time.perf_counter()
    metric = suite.metric
    if metric is None:
        where = locate(suite.span)
        at = f" at {where}" if where else ""
        message = f"suite {suite.name!r}{at} has no metric (add `> metric: NAME(DATASET):`)"
        return _failed(suite, None, None, None, message, started)
    prepare = getattr(program, "prepare_models", None)
    if options.timeout is not None and prepare is not None:
        prepare()  # a one-time cost (imports, clients) is not charged to a row's deadline
    if metric.dataset is None:
        rows: list[Row] = [(None, NO_EXPECTED)]
        if on_rows is not None:
            on_rows(len(rows))
        rows_result = _score_rows(
            program, suite, metric, None, rows, options, on_row, carry, on_progress
        )
        return _scored(suite, metric, None, None, rows_result, started, options.repeat)
    try:
        dataset = select_dataset(suite, metric, options.split)
    except KediSuiteError as exc:
        return _failed(suite, metric.name, metric.dataset, None, exc.message, started)
    try:
        rows = call_with_deadline(
            lambda: _load_rows(program, suite, dataset, options), options.timeout
        )
    except KediSuiteError as exc:
        return _failed(
            suite, metric.name, dataset.name, dataset.kind, exc.message, started, exc.cause
        )
    except DeadlineExceeded:
        message = (
            f"data-loading failed for {dataset.kind} {dataset.name!r}{_at(dataset)}: it took "
            f"longer than the time limit of {options.timeout:g}s (--kedi-timeout also bounds "
            "loading a dataset)"
        )
        return _failed(suite, metric.name, dataset.name, dataset.kind, message, started)
    if on_rows is not None:
        on_rows(len(rows))
    rows_result = _score_rows(
        program, suite, metric, dataset.name, rows, options, on_row, carry, on_progress
    )
    return _scored(suite, metric, dataset.name, dataset.kind, rows_result, started, options.repeat)


def _at(dataset: Dataset) -> str:
    where = locate(dataset.span)
    return f" at {where}" if where else ""


def _load_rows(
    program: EvalProgram, suite: EvalSuite, dataset: Dataset, options: EvalOptions
) -> list[Row]:
    """Run the dataset body and materialize its rows; failures are `KediSuiteError`s."""
    try:
        value = program.load_dataset(suite, dataset)
    except BaseException as exc:
        # pytest.skip() and pytest.xfail() propagate: they skip (xfail) the item (unless
        # `options.outcomes`: no item); a pytest.fail() is this dataset's failure like any
        # other error (with its trace)
        if not user_error(exc, outcomes=options.outcomes) and not failed_outcome(exc):
            raise
        raise loading_failure(exc, dataset) from exc
    return materialize_rows(value, dataset, options.max_rows, outcomes=options.outcomes)


def _score_rows(
    program: EvalProgram,
    suite: EvalSuite,
    metric: Metric,
    name: str | None,
    rows: list[Row],
    options: EvalOptions,
    on_row: RowCallback | None,
    carry: CarryOver | None = None,
    on_progress: ProgressCallback | None = None,
) -> list[RowResult]:
    """Score every row; each row's text is cleaned of the credentials set when the rows
    began, and every row again if the credentials changed while they ran."""
    with SecretsHeld() as held:
        scored = _run_scored(
            program, suite, metric, name, rows, options, on_row, carry, on_progress
        )
    if held.changed:
        reclean_rows(scored)
    return scored


def _run_scored(
    program: EvalProgram,
    suite: EvalSuite,
    metric: Metric,
    name: str | None,
    rows: list[Row],
    options: EvalOptions,
    on_row: RowCallback | None,
    carry: CarryOver | None,
    on_progress: ProgressCallback | None,
) -> list[RowResult]:
    run_metric = program.metric_runner(suite, metric)
    perf_counter = time.perf_counter
    trace = options.trace
    scored_row = RowResult.scored
    # The credentials every row's text is cleaned of: fixed while the rows run (they run
    # in `_score_rows`'s `SecretsHeld` block, which cleans them again if these changed).
    found = current_secrets()

    one, two = _metric_functions(program, suite, metric, name, rows)
    texts: list[tuple[str | None, str | None] | None] | None = (
        None if options.timeout is None else [None] * len(rows)
    )
    # With a time limit, each running repeat's scope by (row, repeat): a row that times out
    # keeps the usage, retries and traced calls of the model calls it made before.
    scopes: dict[tuple[int, int], RowScope] | None = None if texts is None else {}
    # The dataset's rows, made in the suite's block and kept while it runs, join the frozen
    # objects first (with what else its load left, up to as many objects a row as rows may
    # keep), so that the young generation holds what the rows make.
    freeze_if_few_young(_YOUNG_LIMIT + _YOUNG_PER_ROW * len(rows))

    def run_row(index: int, repeat: int = 0) -> RowResult:
        # What the row's model calls report (retries, usage, traces) is collected in its
        # scope, made current with `enter`/`leave` (no context manager on this hot path).
        scope = RowScope(repeat, trace)
        value, expected = rows[index]
        # The row's text, made before the metric runs (it may change the values in place):
        # `short_repr`, inline (the cheapest code on this per-row path); a repr that
        # raises is made again by `short_repr`, which describes the failure.
        try:
            shown = None if name is None else repr(value)
            wanted = None if expected is NO_EXPECTED else repr(expected)
        except BaseException as exc:
            if not user_error(exc):
                raise
            shown = None if name is None else short_repr(value)
            wanted = None if expected is NO_EXPECTED else short_repr(expected)
        if shown is not None and len(shown) > REPR_LIMIT:
            shown = truncate(shown, REPR_LIMIT)
        if wanted is not None and len(wanted) > REPR_LIMIT:
            wanted = truncate(wanted, REPR_LIMIT)
        if texts is not None:  # for `on_timeout`, which may run while the row still does
            texts[index] = (shown, wanted)
        if scopes is not None:
            scopes[index, repeat] = scope
        start = perf_counter()
        scored_at = None
        try:
            token = enter(scope)
            try:
                if expected is NO_EXPECTED:
                    if one is not None:
                        raw = one(value)
                    else:
                        raw = run_metric({} if name is None else {name: value})
                elif two is not None:
                    raw = two(value, expected)
                else:
                    raw = run_metric({name: value, "expected": expected})  # type: ignore[dict-item]
            finally:
                leave(token)
            if raw is True:
                score, feedback = 1.0, None
            elif raw is False:
                score, feedback = 0.0, None
            else:
                try:
                    score, feedback = normalize_score(raw)
                except BaseException:
                    scored_at = locate(metric.span)  # its value is no score: from there
                    raise
        except BaseException as exc:
            if not user_error(exc, outcomes=True):  # a row's `pytest.skip()` is its error
                raise
            if scopes is not None:
                scopes.pop((index, repeat), None)
            elapsed = perf_counter() - start
            return errored_row(index, shown, wanted, exc, scope, elapsed, scored_at)
        duration = perf_counter() - start
        if scopes is not None:
            scopes.pop((index, repeat), None)
        outputs, calls = scope.outputs, scope.calls
        row = scored_row(
            index,
            shown,
            wanted,
            score,
            feedback,
            duration,
            outputs[0] if len(outputs) == 1 else join_outputs(outputs),
            tuple(calls) if calls else (),
            scope.retries,
            # (`row_usage`, inline for a row that made no model request: most rows)
            row_usage(scope)
            if scope.requests or scope.input_tokens or scope.output_tokens
            else NO_USAGE,
            found,
        )
        if not index & _FREEZE_EVERY_MASK:
            freeze_if_few_young(_YOUNG_LIMIT)
        return row

    def on_timeout(index: int, elapsed: float, repeat: int = 0) -> RowResult:
        assert texts is not None and scopes is not None
        known = texts[index]
        if known is None:  # (it timed out before it began)
            value, expected = rows[index]
            known = (
                None if name is None else short_repr(value),
                None if expected is NO_EXPECTED else short_repr(expected),
            )
        text = f"timeout: row exceeded {options.timeout:g}s"
        scope = scopes.pop((index, repeat), None)
        if scope is None:  # (it timed out before it began)
            return failed_row(index, *known, f"error: {text}", text, "timeout", elapsed)
        return failed_row(
            index, *known, f"error: {text}", text, "timeout", elapsed,
            output=join_outputs(list(scope.outputs)), calls=tuple(scope.calls),
            retries=scope.retries, usage=row_usage(scope),
        )  # fmt: skip

    repeats = options.repeat
    if repeats == 1 and carry is None:  # every row runs once: a row is a unit of work
        return run_rows(
            len(rows),
            run_row,
            concurrency=options.concurrency,
            timeout=options.timeout,
            on_timeout=on_timeout,
            on_row=on_row,
            on_progress=on_progress,
        )
    return run_repeated(
        rows, name, carry, repeats, run_row, on_timeout, options.concurrency, options.timeout,
        each_row(on_row, on_progress),
    )  # fmt: skip


#: A suite with at least this many rows runs its metric as a function of the row's values
#: when the program offers one (`EvalProgram`): compiling it (about 30 µs) costs as much
#: as the dictionaries of bindings and `eval` calls it saves over about a hundred rows.
_FUNCTION_ROWS = 256

MetricFunction = Callable[..., Any]


def _metric_functions(
    program: EvalProgram, suite: EvalSuite, metric: Metric, name: str | None, rows: list[Row]
) -> tuple[MetricFunction | None, MetricFunction | None]:
    """The metric as a function of a row's value, and of its value and expected value,
    from the program's optional ``metric_function`` (`EvalProgram`), for a suite of many
    rows: the one its first row needs (rows of the other shape are given bindings)."""
    make = getattr(program, "metric_function", None)
    if make is None or name is None or name == "expected" or len(rows) < _FUNCTION_ROWS:
        return None, None
    if rows[0][1] is NO_EXPECTED:
        return make(suite, metric, (name,)), None
    return None, make(suite, metric, (name, "expected"))


def _scored(
    suite: EvalSuite,
    metric: Metric,
    dataset: str | None,
    split: str | None,
    rows: list[RowResult],
    started: float,
    repeats: int = 1,
) -> SuiteResult:
    errors: dict[str, int] = {}
    for row in rows:
        if row.error_class is not None:
            errors[row.error_class] = errors.get(row.error_class, 0) + 1
    feedback = join_feedback([row.feedback for row in rows]) if rows else "no examples"
    return SuiteResult(
        suite=suite.name,
        metric=metric.name,
        dataset=dataset,
        split=split,
        score=mean([row.score for row in rows]),
        rows=rows,
        rows_total=len(rows),
        rows_errored=sum(errors.values()),
        errors_by_class=dict(sorted(errors.items())),
        feedback=feedback,
        error=None,
        duration_s=time.perf_counter() - started,
        repeats=repeats,
    )


def _failed(
    suite: EvalSuite,
    metric: str | None,
    dataset: str | None,
    split: str | None,
    message: str,
    started: float,
    exc: BaseException | None = None,
) -> SuiteResult:
    return SuiteResult.failed(
        suite.name,
        metric,
        dataset,
        message,
        time.perf_counter() - started,
        split=split,
        exception=exc,
    )
