"""The result of a row that did not score: its metric raised, or it timed out (the suite
runner's `run_suite`). A row's text is made before it runs (its metric may change its
values in place), so these take the texts, not the values."""

from __future__ import annotations

from pytest_kedi.evals.classify import classify_exception, describe_exception, exception_location
from pytest_kedi.evals.results import NO_USAGE, RowResult, Usage, join_outputs
from pytest_kedi.evals.scoring import InvalidScoreError
from pytest_kedi.evals.usage import new_usage
from pytest_kedi.runtime.rowscope import ModelCallTrace, RowScope

__all__ = ["errored_row", "failed_row", "row_usage"]


def failed_row(
    index: int,
    shown: str | None,
    wanted: str | None,
    feedback: str,
    error: str,
    error_class: str,
    duration: float,
    exc: BaseException | None = None,
    *,
    output: str | None = None,
    calls: tuple[ModelCallTrace, ...] = (),
    retries: int = 0,
    usage: Usage = NO_USAGE,
) -> RowResult:
    return RowResult(
        index=index,
        input=shown,
        expected=wanted,
        score=0.0,
        feedback=feedback,
        error=error,
        error_class=error_class,
        duration_s=duration,
        exception=exc,
        output=output,
        calls=calls,
        retries=retries,
        usage=usage,
    )


def errored_row(
    index: int,
    shown: str | None,
    wanted: str | None,
    exc: BaseException,
    scope: RowScope,
    elapsed: float,
    scored_at: str | None = None,
) -> RowResult:
    """The row whose metric (or the scoring of its result) raised ``exc``; ``scored_at``
    locates the metric when its value was no score (`normalize_score` raised)."""
    if isinstance(exc, InvalidScoreError):
        text = f"invalid score: {exc.score!r}"
        error = f"{text} (at {scored_at})" if scored_at else text
        error_class = "invalid_score"
    else:
        text = describe_exception(exc)
        where = exception_location(exc) or scored_at
        # A message that names its location already (a strict type check's) is not given
        # it twice.
        error = f"{text} (at {where})" if where and f" {where}: " not in text else text
        error_class = classify_exception(exc)
    return failed_row(
        index, shown, wanted, f"error: {text}", error, error_class, elapsed, exc,
        output=join_outputs(scope.outputs), calls=tuple(scope.calls),
        retries=scope.retries, usage=row_usage(scope),
    )  # fmt: skip


def row_usage(scope: RowScope) -> Usage:
    """The model usage a row's scope collected (the shared `NO_USAGE` for none)."""
    requests, input_tokens, output_tokens = scope.requests, scope.input_tokens, scope.output_tokens
    if requests or input_tokens or output_tokens:
        return new_usage(requests, input_tokens, output_tokens)
    return NO_USAGE
