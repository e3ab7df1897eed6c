"""`EvalOptions`: how a suite is run (split, row concurrency, time limit, row limit)."""

from __future__ import annotations

import math
import sys
import threading
from dataclasses import dataclass

from pytest_kedi.constants import DEFAULT_MAX_ROWS, SPLITS, Split

__all__ = [
    "DEFAULT_MAX_ROWS",
    "SPLITS",
    "TIMEOUT_MAX",
    "EvalOptions",
    "Split",
    "is_positive_int",
    "is_timeout",
]

#: The longest time limit a thread (and so the row pool) can wait for.
TIMEOUT_MAX: float = threading.TIMEOUT_MAX


def is_positive_int(value: object) -> bool:
    """A row count or concurrency: an ``int`` (not a ``bool``) of at least 1 and at most
    ``sys.maxsize`` (what a count of items can be)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= sys.maxsize


def is_timeout(value: object) -> bool:
    """Seconds a row may take: a finite positive number a thread can wait for."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and 0 < value <= TIMEOUT_MAX


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """Options for `run_suite`.

    * ``split``: ``"auto"`` scores ``test_data: N`` when the suite defines it and
      ``data: N`` otherwise (Kedi's ``--eval``); ``"data"``/``"test_data"`` force one kind.
    * ``concurrency``: how many rows may run at once (``1`` = sequential, Kedi's semantics).
    * ``timeout``: seconds a single row may take (``None`` = unbounded). Loading the
      dataset (running its body and materializing its rows) gets the same budget.
    * ``max_rows``: a dataset with more rows fails the suite (a data-loading failure);
      materialization stops at the limit, so an endless generator cannot eat memory
      (``None``: no limit, as Kedi's own ``--eval``).
    * ``repeat``: how many times every row runs; each repeat is one unit of work for the
      row pool and the time limit, and the row's score is the mean over its repeats.
    * ``trace``: record every model call a row makes (the row's ``calls``).
    * ``outcomes``: a ``pytest.skip()`` or ``pytest.xfail()`` while a dataset loads is its
      loading failure, as a ``pytest.fail()`` is (the CLI's ``--eval``: no pytest item for it
      to skip); otherwise it propagates, to skip (xfail) the pytest item.
    """

    split: Split = "auto"
    concurrency: int = 1
    timeout: float | None = None
    max_rows: int | None = DEFAULT_MAX_ROWS
    repeat: int = 1
    trace: bool = False
    outcomes: bool = False

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {self.split!r}")
        if not is_positive_int(self.concurrency):
            raise ValueError(f"concurrency must be a positive integer, not {self.concurrency!r}")
        if self.timeout is not None and not is_timeout(self.timeout):
            raise ValueError(
                f"timeout must be a positive number of seconds up to {TIMEOUT_MAX:g}, "
                f"not {self.timeout!r}"
            )
        if self.max_rows is not None and not is_positive_int(self.max_rows):
            raise ValueError(f"max_rows must be a positive integer, not {self.max_rows!r}")
        if not is_positive_int(self.repeat):
            raise ValueError(f"repeat must be a positive integer, not {self.repeat!r}")
