"""Dataset selection and row shapes (docs/language.md#dataset-selection, #datasets).

Selection: with split ``auto`` the metric's dataset ``N`` is ``test_data: N`` when the
suite defines it, else ``data: N``; a forced split uses that kind only. A name matching
no dataset of either kind is a *missing dataset reference*.

Rows (direct eval): the dataset value is materialized to a list (``str``/``bytes``/
non-iterables are errors). A mapping (a dict, any other ``Mapping``, or a dict
``.items()`` view) yields ``(key, value)`` items: a dict value splits into
``N = key, expected = value``; any other value stays one raw row ``N = (key, value)``.
Other iterables: a 2-tuple (tuple subclasses included) is ``(input, expected)`` and
``(input, None)`` creates no ``expected``; every other row binds ``N`` only.
"""

from __future__ import annotations

import linecache
from collections.abc import ItemsView, Mapping
from itertools import islice
from typing import Any, Final

from pytest_kedi.errors import KediExecutionError, KediSuiteError, KediTraceFrame
from pytest_kedi.evals.classify import describe_exception, exception_location
from pytest_kedi.lang.nodes import Dataset, EvalSuite, Metric, Span
from pytest_kedi.runtime.cancel import STATE as CANCEL
from pytest_kedi.runtime.cancel import check_current
from pytest_kedi.runtime.pyerrors import python_error
from pytest_kedi.runtime.usererrors import failed_outcome, user_error
from pytest_kedi.text import display_path

__all__ = [
    "NO_EXPECTED",
    "Row",
    "loading_failure",
    "locate",
    "materialize_rows",
    "select_dataset",
]


class _NoExpected:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_EXPECTED"


NO_EXPECTED: Final = _NoExpected()
"""Marks a row that creates no ``expected`` binding."""

Row = tuple[Any, Any]  # (input, expected | NO_EXPECTED)


def locate(span: Span | None) -> str | None:
    """``path:line`` of a span (None when unknown)."""
    if span is None:
        return None
    return f"{display_path(span.path)}:{span.start_line}"


def _at(span: Span | None) -> str:
    where = locate(span)
    return f" at {where}" if where else ""


def select_dataset(suite: EvalSuite, metric: Metric, split: str) -> Dataset:
    """The dataset `metric` scores under `split` (``auto``/``data``/``test_data``)."""
    name = metric.dataset
    found: dict[str, Dataset] = {}
    for dataset in suite.datasets:
        if dataset.name == name and dataset.kind not in found:
            found[dataset.kind] = dataset
    if not found:
        raise KediSuiteError(
            f"missing dataset reference{_at(metric.span)}: metric {metric.name!r} names "
            f"dataset {name!r}, which this suite does not define"
        )
    if split == "auto":
        return found.get("test_data") or found["data"]
    chosen = found.get(split)
    if chosen is None:
        (other,) = found.values()
        raise KediSuiteError(
            f"split {split!r} requested{_at(metric.span)}: suite {suite.name!r} defines no "
            f"'{split}: {name}' dataset (only '{other.kind}: {name}')"
        )
    return chosen


def _describe(dataset: Dataset) -> str:
    return f"{dataset.kind} {dataset.name!r}"


def materialize_rows(
    value: Any, dataset: Dataset, max_rows: int | None = None, *, outcomes: bool = False
) -> list[Row]:
    """Materialize a dataset value into ``(input, expected | NO_EXPECTED)`` rows.

    With ``max_rows``, a dataset yielding more rows is a `KediSuiteError` (iteration stops
    one row past the limit). ``outcomes``: a ``pytest.skip()`` or ``pytest.xfail()`` raised
    while iterating is a loading failure too (see `EvalOptions`).
    """
    if value is None:
        raise KediSuiteError(
            f"data-loading failed for {_describe(dataset)}{_at(dataset.span)}: the dataset is "
            "None; its body must return a non-string iterable, with `=` before its expression "
            "or before a fence that ends in `return rows` (a fence without `=` returns nothing)"
        )
    if isinstance(value, str | bytes):
        raise KediSuiteError(
            f"data-loading failed for {_describe(dataset)}{_at(dataset.span)}: the dataset is "
            f"{type(value).__name__}; it must be a non-string iterable (list, tuple, generator, "
            "set, dict, ...)"
        )
    try:  # a dataset's own `__iter__`, `items()` or generator code may raise: it is user code
        if isinstance(value, Mapping):
            source: Any = value.items()
            mapping = True
        else:
            source = value
            mapping = isinstance(value, ItemsView)
        try:
            iterator = iter(source)
        except TypeError as exc:
            trace = exc.__traceback__
            if trace is not None and trace.tb_next is None:  # `iter`'s own: not iterable
                raise KediSuiteError(
                    f"data-loading failed for {_describe(dataset)}{_at(dataset.span)}: the "
                    f"dataset is {type(value).__name__}, which is not iterable"
                ) from None
            raise  # raised by the dataset's `__iter__`
        items = _take(iterator, max_rows)
        if max_rows is not None and len(items) > max_rows:
            raise KediSuiteError(
                f"data-loading failed for {_describe(dataset)}{_at(dataset.span)}: the dataset "
                f"has more than {max_rows} rows, the row limit (--kedi-max-rows / KEDI_MAX_ROWS)"
            )
        # shaping rows runs user code too: a tuple subclass's own `__len__`/`__getitem__`
        return _mapping_rows(items) if mapping else _sequence_rows(items)
    except KediSuiteError:
        raise
    except BaseException as exc:
        if not user_error(exc, outcomes=outcomes) and not failed_outcome(exc):
            raise
        raise loading_failure(exc, dataset, lazy=True) from exc


def loading_failure(exc: BaseException, dataset: Dataset, *, lazy: bool = False) -> KediSuiteError:
    """The suite error of a dataset whose body (or, ``lazy``, iteration) raised ``exc``:
    located at the line that raised, with a Kedi stack trace under the dataset's frame."""
    if lazy or not isinstance(exc, KediExecutionError):  # raised by a lazy dataset's own
        # code (a procedure's failure, too: the generator's lines that called it are in its
        # traceback, the dataset's frame in none), or a `pytest.fail()`: at its `.kedi` lines
        exc = python_error(exc)
        if dataset.span is not None:  # under the dataset's frame, as an eager one is
            exc.with_outer_frame(
                KediTraceFrame(
                    kind="dataset",
                    label=_describe(dataset).replace("'", ""),
                    span=dataset.span,
                    source_snippet=linecache.getline(
                        dataset.span.path, dataset.span.start_line
                    ).strip(),
                )
            )
    where = exception_location(exc) or locate(dataset.span)
    at = f" at {where}" if where else ""
    return KediSuiteError(
        f"data-loading failed for {_describe(dataset)}{at}: {describe_exception(exc)}",
        cause=exc,
    )


def _take(iterator: Any, max_rows: int | None) -> list[Any]:
    """Up to ``max_rows + 1`` items; a cancelled load stops between items."""
    listed = type(iterator) is _LIST_ITERATOR  # a list's items: nothing runs between them
    if max_rows is not None:
        iterator = islice(iterator, max_rows + 1)
    if listed:
        return list(iterator)
    items: list[Any] = []
    append = items.append
    for item in iterator:
        if CANCEL.pending:  # the data-loading deadline passed
            check_current()
        append(item)
    return items


_LIST_ITERATOR: type[Any] = type(iter([]))


def _mapping_rows(items: list[Any]) -> list[Row]:
    rows: list[Row] = []
    for item in items:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict):
            rows.append((item[0], item[1]))
        else:
            rows.append((item, NO_EXPECTED))
    return rows


def _sequence_rows(items: list[Any]) -> list[Row]:
    # (a comprehension: an (input, expected) tuple is already a row, the rest `_row`)
    return [
        item if type(item) is tuple and len(item) == 2 and item[1] is not None else _row(item)
        for item in items
    ]


def _row(item: Any) -> Row:
    """The row of a dataset item that is not an (input, expected) tuple with an expected
    value: a 2-tuple (a subclass's own ``__len__`` and ``__getitem__`` are called) whose
    ``None`` second item means no expected value, else an input without one."""
    if isinstance(item, tuple) and len(item) == 2:
        expected = item[1]
        return (item[0], NO_EXPECTED if expected is None else expected)
    return (item, NO_EXPECTED)
