"""What a suite record carries about its baseline: the baseline's score, the change, and
the change of every row matched in the baseline (by index and input).

These are the JSON report's ``baseline_score``/``delta`` (suite) and ``delta``/``regressed``
(row) fields; `pytest_kedi.reports.compare` computes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_kedi.evals.scoring import fell

__all__ = ["RowDelta", "SuiteDelta", "row_fields"]


@dataclass(frozen=True, slots=True)
class RowDelta:
    """A row found in the baseline: its index and its score change (new minus old)."""

    index: int
    delta: float

    @property
    def regressed(self) -> bool:
        """The score fell (float noise aside, as for ``--kedi-max-drop``)."""
        return fell(self.delta)


@dataclass(frozen=True, slots=True)
class SuiteDelta:
    """A suite scored in both runs: the baseline's score and the change (new minus old)."""

    baseline_score: float
    delta: float
    rows: tuple[RowDelta, ...] = ()

    def by_index(self) -> dict[int, RowDelta]:
        return {row.index: row for row in self.rows}

    @classmethod
    def from_json(cls, suite: Mapping[str, Any]) -> SuiteDelta | None:
        """The delta a suite's JSON form carries (``None`` without a baseline score)."""
        baseline, delta = suite.get("baseline_score"), suite.get("delta")
        if baseline is None or delta is None:
            return None
        rows = tuple(
            RowDelta(int(row["index"]), float(row["delta"]))
            for row in suite.get("rows", ())
            if row.get("delta") is not None
        )
        return cls(float(baseline), float(delta), rows)


def row_fields(rows: Mapping[int, RowDelta], index: int) -> dict[str, Any]:
    """A row's ``delta``/``regressed`` JSON fields (``None`` when it has no baseline row);
    ``rows`` is `SuiteDelta.by_index` (empty without a baseline)."""
    row = rows.get(index)
    if row is None:
        return {"delta": None, "regressed": None}
    return {"delta": row.delta, "regressed": row.regressed}
