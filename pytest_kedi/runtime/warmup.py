"""Models built before a suite's rows run: a one-time cost no row's deadline pays.

The first model call of a process imports pydantic-ai and the provider's SDK and builds
its client (seconds on a loaded machine). Under ``--kedi-timeout`` that would be charged to
whichever row calls first, so the same suite could score differently with and without
xdist. `prepare_models` builds, ahead of the rows, the default model and every model a
``> model:`` directive names, for a program whose code makes model calls; failures are
left for the call itself to report, where it is located.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import ModuleUnit

__all__ = ["prepare_models"]

_CALLS = (nodes.Template, nodes.RawCapture)


def _walk(value: object) -> Iterator[nodes.Node]:
    if isinstance(value, tuple):
        for item in value:
            yield from _walk(item)
    elif isinstance(value, nodes.Node) and not isinstance(value, nodes.PyCode | nodes.Span):
        yield value
        for field in dataclasses.fields(value):
            if field.name != "span":
                yield from _walk(getattr(value, field.name))


def _model_names(modules: Iterable[nodes.Module]) -> tuple[bool, list[str]]:
    """Whether ``modules`` make model calls, and the models their directives name."""
    calls, names = False, []
    for module in modules:
        for node in _walk(module.body):
            if isinstance(node, _CALLS):
                calls = True
            elif isinstance(node, nodes.Directive) and node.name == "model" and node.value:
                names.append(node.value.strip())
    return calls, names


def prepare_models(unit: ModuleUnit) -> None:
    """Build the models a program (``unit``) and the modules it imported may call."""
    runtime = unit.runtime
    calls, names = _model_names([unit.module, *(u.module for u in runtime.modules.values())])
    if calls:
        runtime.boundary.prepare(names)
