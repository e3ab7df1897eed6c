"""`EvalOptions`: how a suite is run (split, row concurrency, time limit, row limit)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_kedi.constants import DEFAULT_MAX_ROWS, SPLITS, Split

__all__ = ["DEFAULT_MAX_ROWS", "SPLITS", "EvalOptions", "Split"]


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """Options for `run_suite`.

    * ``split``: ``"auto"`` scores ``test_data: N`` when the suite defines it and
      ``data: N`` otherwise (Kedi's ``--eval``); ``"data"``/``"test_data"`` force one kind.
    * ``concurrency``: how many rows may run at once (``1`` = sequential, Kedi's semantics).
    * ``timeout``: seconds a single row may take (``None`` = unbounded). Loading the
      dataset (running its body and materializing its rows) gets the same budget.
    * ``max_rows``: a dataset with more rows fails the suite (a data-loading failure);
      materialization stops at the limit, so an endless generator cannot eat memory.
    """

    split: Split = "auto"
    concurrency: int = 1
    timeout: float | None = None
    max_rows: int = DEFAULT_MAX_ROWS

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {self.split!r}")
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int):
            raise ValueError(f"concurrency must be a positive integer, not {self.concurrency!r}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be a positive integer, not {self.concurrency!r}")
        if self.timeout is not None:
            if isinstance(self.timeout, bool) or not isinstance(self.timeout, int | float):
                raise ValueError(
                    f"timeout must be a positive number of seconds, not {self.timeout!r}"
                )
            if not math.isfinite(self.timeout) or self.timeout <= 0:
                raise ValueError(
                    f"timeout must be a positive number of seconds, not {self.timeout!r}"
                )
        if isinstance(self.max_rows, bool) or not isinstance(self.max_rows, int):
            raise ValueError(f"max_rows must be a positive integer, not {self.max_rows!r}")
        if self.max_rows < 1:
            raise ValueError(f"max_rows must be a positive integer, not {self.max_rows!r}")
