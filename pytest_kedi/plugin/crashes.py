"""Records for items whose process died (an xdist worker crashed while running them).

xdist reports such an item as failed with ``when == "???"`` and no Kedi record (the
worker never got to build one). The controller rebuilds the record from the node id and
the ``.kedi`` source, so the suite or case still appears in the ``kedi`` summary and the
JSON report with every schema key, outcome ``failed`` and the crash as its error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pytest_kedi.plugin.records import CaseRecord, SuiteRecord

__all__ = ["after_crash", "crash_record"]

R = TypeVar("R", SuiteRecord, CaseRecord)


def _module(path: Path) -> Any:
    from pytest_kedi.lang import KediParseError, parse_file

    try:
        return parse_file(path)
    except (KediParseError, OSError, UnicodeDecodeError):
        return None  # changed since collection: the node id alone still names the item


def _by_name(suites: list[Any], wanted: str) -> Any:
    from pytest_kedi.plugin.collect import _safe, unique_names

    names = unique_names(_safe(suite.name) for suite in suites)
    return next((s for s, name in zip(suites, names, strict=True) if name == wanted), None)


def crash_record(
    rootpath: Path,
    nodeid: str,
    error: str,
    threshold_for: Callable[[str], float | None],
) -> SuiteRecord | CaseRecord | None:
    """The record of the Kedi item ``nodeid`` that crashed, or ``None`` (not a Kedi item)."""
    file_part, _, rest = nodeid.partition("::")
    parts = rest.split("::")
    if not file_part.endswith(".kedi") or not parts[0].startswith(("eval:", "test:")):
        return None
    module = _module(rootpath / file_part)
    kind, _, name = parts[0].partition(":")
    if kind == "eval" and len(parts) == 1:
        suite = _by_name(module.eval_suites, name) if module is not None else None
        metric = suite.metric if suite is not None else None
        return SuiteRecord.unscored(
            nodeid,
            line=suite.span.start_line if suite is not None else 0,
            procedure=suite.name if suite is not None else name,
            metric=metric.name if metric is not None else None,
            dataset=metric.dataset if metric is not None else None,
            threshold=threshold_for(nodeid),
            outcome="failed",
            error=error,
        )
    if kind == "test" and len(parts) == 2:
        suite = _by_name(module.test_suites, name) if module is not None else None
        case = _by_name(list(suite.cases), parts[1]) if suite is not None else None
        return CaseRecord(
            nodeid,
            line=case.span.start_line if case is not None else 0,
            procedure=suite.name if suite is not None else name,
            case=case.name if case is not None else parts[1],
            outcome="failed",
            message=error,
        )
    return None


def after_crash(recorded: R | None, crashed: R) -> R:
    """What the reports keep for an item whose worker crashed: its crash record, or when
    the item had already reported (the worker died in its teardown), that record failed
    (pytest reports the crash as the item's failure); a case's message is the crash."""
    if recorded is None:
        return crashed
    if recorded.outcome == "failed":
        return recorded
    if isinstance(recorded, CaseRecord) and isinstance(crashed, CaseRecord):
        return dataclasses.replace(recorded, outcome="failed", message=crashed.message)
    return dataclasses.replace(recorded, outcome="failed")
