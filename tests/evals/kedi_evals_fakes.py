"""Duck-typed stand-ins for a loaded Kedi program, so eval-engine tests need no parser/runtime."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any

from pytest_kedi.lang.nodes import Dataset, EvalSuite, Metric, Span
from pytest_kedi.runtime.errors import KediTraceFrame

PATH = "suite.kedi"


def span(line: int, path: str = PATH) -> Span:
    return Span(path, line, 1, line, 20, 0, 0)


def frame(kind: str, line: int, label: str = "x") -> KediTraceFrame:
    return KediTraceFrame(kind=kind, label=label, span=span(line))


def make_suite(
    datasets: Iterable[tuple[str, str]] = (("data", "samples"),),
    metric: tuple[str, str | None] | None = ("exact", "samples"),
    name: str = "word_count",
) -> EvalSuite:
    """A suite at line 10; datasets at lines 11, 13, ...; the metric after them."""
    nodes = tuple(
        Dataset(span=span(11 + 2 * i), kind=kind, name=dname, body=())  # type: ignore[arg-type]
        for i, (kind, dname) in enumerate(datasets)
    )
    metric_node = None
    if metric is not None:
        metric_node = Metric(
            span=span(11 + 2 * len(nodes)), name=metric[0], dataset=metric[1], body=()
        )
    return EvalSuite(span=span(10), name=name, datasets=nodes, metric=metric_node)


class FakeProgram:
    """`load_dataset` returns (or raises, or calls) the value registered for ``(kind, name)``;
    `run_metric` (what `metric_runner` returns) calls ``metric(bindings)`` and records every
    bindings dict it received."""

    def __init__(
        self, datasets: dict[tuple[str, str], Any], metric: Callable[[dict[str, Any]], Any]
    ):
        self.datasets = datasets
        self.metric = metric
        self.loaded: list[tuple[str, str]] = []
        self.calls: list[dict[str, Any]] = []
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def load_dataset(self, suite: EvalSuite, dataset: Dataset) -> Any:
        self.loaded.append((dataset.kind, dataset.name))
        value = self.datasets[(dataset.kind, dataset.name)]
        if isinstance(value, BaseException):
            raise value
        if callable(value):
            return value()
        return value

    def metric_runner(self, suite: EvalSuite, metric: Metric) -> Callable[[dict[str, Any]], Any]:
        return functools.partial(self.run_metric, suite, metric)

    def run_metric(self, suite: EvalSuite, metric: Metric, bindings: dict[str, Any]) -> Any:
        with self._lock:
            self.calls.append(bindings)
            self.threads.append(threading.current_thread())
        return self.metric(bindings)
