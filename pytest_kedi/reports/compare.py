"""A run compared with a baseline run: per-suite score deltas, regressed and improved rows,
and the max-drop gate. Used by ``--kedi-baseline`` (the ``kedi`` terminal section, the JSON
report's deltas, the eval item's verdict) and by ``pytest-kedi compare OLD.json NEW.json``.

Suites are matched by node id, rows by index AND input (a row whose input changed is a
different row). A suite is compared only when it was scored in both runs (no suite error,
not skipped); suites and rows present on one side only are listed, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_kedi.evals.scoring import beyond, change, fell, rose, score_digits, threshold_text
from pytest_kedi.plugin.records import SuiteRecord, source_order
from pytest_kedi.reports.deltas import RowDelta, SuiteDelta

__all__ = [
    "ROW_LIMIT",
    "Comparison",
    "RowChange",
    "SuiteComparison",
    "compare_runs",
    "compare_suites",
    "comparison_lines",
    "drop_reason",
]

#: Regressed (and, separately, improved) rows listed per suite; the rest are counted.
ROW_LIMIT = 10
#: One-side-only suites named before the rest are counted.
SUITE_LIMIT = 10
_DIGITS = 4


def _scored(record: SuiteRecord | None) -> bool:
    return record is not None and record.result.error is None and record.outcome != "skipped"


def _interval(record: SuiteRecord) -> tuple[float, float] | None:
    """The suite's confidence interval where its summary line shows one: with repeats or
    under the lower-bound gate (a plain run's comparison reads as it always did)."""
    result = record.result
    if result.error is not None or not (result.repeats > 1 or record.gate == "lower"):
        return None
    return result.stats.ci


def _label(record: SuiteRecord) -> str:
    metric = record.result.metric
    return f"{record.procedure}::{metric}" if metric else record.procedure


@dataclass(frozen=True, slots=True)
class RowChange:
    """A row matched in both runs whose score changed."""

    index: int
    input: str | None
    old: float
    new: float

    @property
    def delta(self) -> float:
        return self.new - self.old

    def line(self) -> str:
        shown = f" input {self.input}" if self.input is not None else ""
        return f"row {self.index}{shown}: {self.old:.{_DIGITS}f} -> {self.new:.{_DIGITS}f}"


@dataclass(frozen=True, slots=True)
class SuiteComparison:
    """One node id in either run."""

    nodeid: str
    old: SuiteRecord | None
    new: SuiteRecord | None
    regressed: tuple[RowChange, ...] = ()  # worst first
    improved: tuple[RowChange, ...] = ()  # best first
    only_old_rows: int = 0
    only_new_rows: int = 0
    matched: tuple[RowDelta, ...] = ()  # every row found in both runs (for the report)

    @property
    def compared(self) -> bool:
        return _scored(self.old) and _scored(self.new)

    @property
    def delta(self) -> float | None:
        if not self.compared:
            return None
        assert self.old is not None and self.new is not None
        return change(self.new.result.score, self.old.result.score)

    def suite_delta(self) -> SuiteDelta | None:
        """What the new run's JSON report records about the baseline."""
        delta = self.delta
        if delta is None:
            return None
        assert self.old is not None
        return SuiteDelta(self.old.result.score, delta, self.matched)

    def dropped_beyond(self, max_drop: float) -> bool:
        """The score fell by more than ``max_drop`` (float noise such as 0.8 -> 0.7 being
        0.10000000000000009 does not count as more than 0.1; a drop of exactly ``max_drop``
        passes)."""
        delta = self.delta
        return delta is not None and beyond(-delta, max_drop)


def compare_suites(
    nodeid: str, old: SuiteRecord | None, new: SuiteRecord | None
) -> SuiteComparison:
    if not (_scored(old) and _scored(new)):
        return SuiteComparison(nodeid, old, new)
    assert old is not None and new is not None
    before = {(row.index, row.input): row for row in old.rows}
    matched: list[RowDelta] = []
    changes: list[RowChange] = []
    for row in new.rows:
        previous = before.pop((row.index, row.input), None)
        if previous is None:
            continue
        delta = change(row.score, previous.score)
        matched.append(RowDelta(row.index, delta))
        if fell(delta) or rose(delta):
            changes.append(RowChange(row.index, row.input, previous.score, row.score))
    regressed = sorted((c for c in changes if fell(c.delta)), key=lambda c: (c.delta, c.index))
    improved = sorted((c for c in changes if rose(c.delta)), key=lambda c: (-c.delta, c.index))
    return SuiteComparison(
        nodeid,
        old,
        new,
        regressed=tuple(regressed),
        improved=tuple(improved),
        only_old_rows=len(before),
        only_new_rows=len(new.rows) - len(matched),
        matched=tuple(matched),
    )


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every suite of either run: the new run's in source order, then the baseline-only ones."""

    suites: tuple[SuiteComparison, ...]

    def deltas(self) -> dict[str, SuiteDelta]:
        """The suite deltas the new run's report records, by node id."""
        found = {suite.nodeid: suite.suite_delta() for suite in self.suites}
        return {nodeid: delta for nodeid, delta in found.items() if delta is not None}

    def dropped(self, max_drop: float) -> list[SuiteComparison]:
        return [suite for suite in self.suites if suite.dropped_beyond(max_drop)]


def compare_runs(old: Iterable[SuiteRecord], new: Iterable[SuiteRecord]) -> Comparison:
    before = {record.nodeid: record for record in old}
    now = source_order(new)
    seen = {record.nodeid for record in now}
    suites = [compare_suites(r.nodeid, before.get(r.nodeid), r) for r in now]
    gone = source_order(record for nodeid, record in before.items() if nodeid not in seen)
    suites += [compare_suites(record.nodeid, record, None) for record in gone]
    return Comparison(tuple(suites))


# --------------------------------------------------------------------------- text


def _score(record: SuiteRecord, digits: int = _DIGITS) -> str:
    text = f"{record.result.score:.{digits}f}"
    interval = _interval(record)
    if interval is not None:
        text += f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
    return text


def _state(record: SuiteRecord) -> str:
    """An unscored suite's state: ``ERROR`` or ``not run``."""
    return "ERROR" if record.result.error is not None else "not run"


def drop_reason(suite: SuiteComparison, max_drop: float) -> str | None:
    """The failure reason of a suite whose score fell by more than ``max_drop``."""
    if not suite.dropped_beyond(max_drop):
        return None
    assert suite.old is not None and suite.new is not None and suite.delta is not None
    digits = score_digits(-suite.delta, max_drop)  # the drop told apart from the max drop
    return (
        f"score fell from {suite.old.result.score:.{digits}f} (baseline) to "
        f"{suite.new.result.score:.{digits}f}, a drop of {-suite.delta:.{digits}f}; "
        f"the max drop is {threshold_text(max_drop, digits)}"
    )


def _suite_line(suite: SuiteComparison, label: str, max_drop: float | None) -> str:
    old, new = suite.old, suite.new
    if new is None:
        assert old is not None
        shown = _score(old) if _scored(old) else _state(old)
        return f"- {label}: only in the baseline ({shown})"
    if old is None:
        shown = _score(new) if _scored(new) else _state(new)
        return f"- {label}: {shown} (new: not in the baseline)"
    if not suite.compared:
        before = _score(old) if _scored(old) else _state(old)
        after = _score(new) if _scored(new) else _state(new)
        return f"- {label}: {before} -> {after} (not compared: not scored in both runs)"
    assert suite.delta is not None
    if max_drop is None or not suite.dropped_beyond(max_drop):
        return f"- {label}: {_score(old)} -> {_score(new)} ({suite.delta:+.{_DIGITS}f})"
    digits = score_digits(-suite.delta, max_drop)  # the drop told apart from the max drop
    return (
        f"- {label}: {_score(old, digits)} -> {_score(new, digits)} ({suite.delta:+.{digits}f})"
        f"  [FAILED, dropped more than {threshold_text(max_drop, digits)}]"
    )


def _row_lines(kind: str, changes: Sequence[RowChange], limit: int) -> list[str]:
    if not changes:
        return []
    lines = [f"    {kind} rows ({len(changes)}):"]
    lines += [f"      {change.line()}" for change in changes[:limit]]
    if len(changes) > limit:
        lines.append(f"      ... and {len(changes) - limit} more")
    return lines


def _labels(comparison: Comparison) -> dict[str, str]:
    """``procedure::metric``, with the file added where two compared suites share one."""
    records = {s.nodeid: s.new or s.old for s in comparison.suites}
    plain = {nodeid: _label(r) for nodeid, r in records.items() if r is not None}
    counts: dict[str, int] = {}
    for label in plain.values():
        counts[label] = counts.get(label, 0) + 1
    return {
        nodeid: label if counts[label] == 1 else f"{label} ({nodeid.split('::', 1)[0]})"
        for nodeid, label in plain.items()
    }


def comparison_lines(
    comparison: Comparison, *, max_drop: float | None = None, row_limit: int = ROW_LIMIT
) -> list[str]:
    """The comparison as text: one line per suite, its changed rows, one-side-only counts."""
    labels = _labels(comparison)
    compared = [s for s in comparison.suites if s.compared]
    new_only = [s for s in comparison.suites if s.old is None]
    old_only = [s for s in comparison.suites if s.new is None]
    head = f"{len(compared)} suite{'s' if len(compared) != 1 else ''} compared"
    if new_only:
        head += f", {len(new_only)} new"
    if old_only:
        head += f", {len(old_only)} only in the baseline"
    lines = [head]
    hidden = {s.nodeid for s in (*new_only[SUITE_LIMIT:], *old_only[SUITE_LIMIT:])}
    for suite in comparison.suites:
        if suite.nodeid in hidden:
            continue
        lines.append(_suite_line(suite, labels[suite.nodeid], max_drop))
        lines += _row_lines("regressed", suite.regressed, row_limit)
        lines += _row_lines("improved", suite.improved, row_limit)
        sides = []
        if suite.only_old_rows:
            sides.append(f"{suite.only_old_rows} only in the baseline")
        if suite.only_new_rows:
            sides.append(f"{suite.only_new_rows} new")
        if sides:
            lines.append(f"    rows not matched by index and input: {', '.join(sides)}")
    for kind, suites in (("new suites", new_only), ("suites only in the baseline", old_only)):
        if len(suites) > SUITE_LIMIT:
            lines.append(f"... and {len(suites) - SUITE_LIMIT} more {kind}")
    return lines
