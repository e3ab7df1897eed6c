"""Rows run more than once (``--kedi-repeat``) and rows kept from an earlier run
(``--kedi-rerun``): how the suite runner turns them into one `RowResult` per row."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from pytest_kedi.evals.datasets import NO_EXPECTED, Row
from pytest_kedi.evals.executor import run_rows
from pytest_kedi.evals.results import REPR_LIMIT, RowResult, Usage, short_repr
from pytest_kedi.evals.scoring import mean

__all__ = ["CarryOver", "carried", "combine", "run_repeated"]

#: ``carry(index, input, expected)``: a row's result from an earlier run to keep instead of
#: running the row again (``None``: run it). ``input``/``expected`` are the row's short
#: reprs as `RowResult` has them, so a changed dataset can be told apart; a row whose short
#: repr cannot tell (cut, or its ``repr()`` failed) always runs, without asking ``carry``.
CarryOver = Callable[[int, str | None, str | None], RowResult | None]


def carried(rows: list[Row], name: str | None, carry: CarryOver | None) -> list[RowResult | None]:
    """For each row, the result ``carry`` keeps from an earlier run (``None``: run it)."""
    if carry is None:
        return [None] * len(rows)
    kept: list[RowResult | None] = []
    for index, (value, expected) in enumerate(rows):
        shown = None if name is None else short_repr(value)
        wanted = None if expected is NO_EXPECTED else short_repr(expected)
        if _unsure(shown) or _unsure(wanted):  # a change may hide past what was kept: run it
            kept.append(None)
            continue
        previous = carry(index, shown, wanted)
        if previous is not None:
            previous = dataclasses.replace(previous, index=index, carried_over=True)
        kept.append(previous)
    return kept


def _unsure(text: str | None) -> bool:
    """A row's short repr that cannot tell whether its value changed since the earlier
    run: it was cut to `REPR_LIMIT` characters (the values may differ past the cut), or
    the value's ``repr()`` failed (``<unrepresentable ...>``)."""
    return text is not None and (len(text) >= REPR_LIMIT or text.startswith("<unrepresentable "))


def combine(parts: list[RowResult]) -> RowResult:
    """One row's result from its repeats (in repeat order).

    The score is the mean of the repeats' scores (``scores`` keeps each); the duration is
    their sum; ``calls``, ``retries`` and ``usage`` add up every repeat's. Feedback, output,
    error and error class are those of the first repeat that errored (so a row that errored
    in any repeat counts as errored, that repeat scoring 0.0), else of the lowest-scoring
    repeat (the first among equals). A single repeat is kept as is.
    """
    if len(parts) == 1:
        return parts[0]
    scores = [part.score for part in parts]
    shown = next((part for part in parts if part.errored), None)
    if shown is None:
        shown = min(parts, key=lambda part: part.score)
    return dataclasses.replace(
        shown,
        input=parts[0].input,  # the row's text before its first run changed it, if it did
        expected=parts[0].expected,
        score=mean(scores),
        scores=scores,
        duration_s=math.fsum(part.duration_s for part in parts),
        calls=tuple(call for part in parts for call in part.calls),
        retries=sum(part.retries for part in parts),
        usage=Usage.total(part.usage for part in parts),
    )


def run_repeated(
    rows: list[Row],
    name: str | None,
    carry: CarryOver | None,
    repeats: int,
    run_row: Callable[[int, int], RowResult],
    on_timeout: Callable[[int, float, int], RowResult],
    concurrency: int,
    timeout: float | None,
    on_row: Callable[[RowResult], object] | None,
) -> list[RowResult]:
    """Run every row not ``carry``-kept ``repeats`` times (``run_row(index, repeat)``) and
    give each row's result (`combine`, or the kept one), in row order; ``on_row`` gets each
    row as soon as it and every row before it are known.

    Each repeat of a row is one unit of work (for the pool and the time limit); unit u is
    repeat u % repeats of row todo[u // repeats] (``on_timeout(index, elapsed, repeat)``).
    """
    kept_rows = carried(rows, name, carry)
    todo = [index for index, kept in enumerate(kept_rows) if kept is None]
    results: list[RowResult | None] = list(kept_rows)
    parts: list[RowResult] = []
    emitted = 0

    def run_unit(unit: int) -> RowResult:
        row, repeat = divmod(unit, repeats)
        return run_row(todo[row], repeat)

    def unit_timeout(unit: int, elapsed: float) -> RowResult:
        row, repeat = divmod(unit, repeats)
        return on_timeout(todo[row], elapsed, repeat)

    def emit_until(index: int) -> None:
        nonlocal emitted
        while emitted < index:
            row = results[emitted]
            if on_row is not None and row is not None:
                on_row(row)
            emitted += 1

    def on_unit(part: RowResult) -> None:
        parts.append(part)
        if len(parts) < repeats:
            return
        index = part.index
        results[index] = combine(parts)
        parts.clear()
        emit_until(index + 1)

    run_rows(
        len(todo) * repeats,
        run_unit,
        concurrency=concurrency,
        timeout=timeout,
        on_timeout=unit_timeout,
        on_row=on_unit,
    )
    emit_until(len(rows))
    return [row for row in results if row is not None]
