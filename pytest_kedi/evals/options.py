"""`EvalOptions`: how a suite is run (split, row concurrency, per-row time limit)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["SPLITS", "EvalOptions", "Split"]

Split = Literal["auto", "data", "test_data"]
SPLITS: tuple[Split, ...] = ("auto", "data", "test_data")


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """Options for `run_suite`.

    * ``split``: ``"auto"`` scores ``test_data: N`` when the suite defines it and
      ``data: N`` otherwise (Kedi's ``--eval``); ``"data"``/``"test_data"`` force one kind.
    * ``concurrency``: how many rows may run at once (``1`` = sequential, Kedi's semantics).
    * ``timeout``: seconds a single row may take (``None`` = unbounded).
    """

    split: Split = "auto"
    concurrency: int = 1
    timeout: float | None = None

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
