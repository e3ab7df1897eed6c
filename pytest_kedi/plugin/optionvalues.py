"""Value parsers for the plugin's settings, and the `MaxErrors` budget they produce.

Each parser takes the raw value (a string from the command line or environment, or a typed
value from the ini file) and the source label, and returns the setting or raises a
``pytest.UsageError`` naming the option and where it came from. The numeric rules that
`EvalOptions` also enforces (positive row counts, thread-waitable timeouts) come from
`pytest_kedi.evals.evaloptions`, so both layers accept exactly the same values.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "GATES",
    "OFF",
    "RERUN_MODES",
    "PROGRESS_MODES",
    "ROWS_MODES",
    "MaxErrors",
    "parse_bool",
    "parse_choice",
    "parse_count",
    "parse_float",
    "parse_interval",
    "parse_markdown",
    "parse_max_drop",
    "parse_max_errors",
    "parse_min_scores",
    "parse_model",
    "parse_path",
    "parse_positive_int",
    "parse_shard",
    "parse_timeout",
]


ROWS_MODES = ("auto", "subtests", "summary")
GATES = ("mean", "lower")  # what --kedi-min-score applies to
RERUN_MODES = ("errors", "failures")  # which rows --kedi-rerun runs again
PROGRESS_MODES = ("auto", "on", "off")

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class MaxErrors:
    """An error budget: a row count (``3``) or a fraction of the rows (``0.1``)."""

    count: int | None = None
    fraction: float | None = None

    def exceeded(self, errored: int, total: int) -> bool:
        if self.count is not None:
            return errored > self.count
        assert self.fraction is not None
        return total > 0 and errored / total > self.fraction

    @property
    def value(self) -> float:
        """The budget as given (and as the JSON report records it): a count or a fraction."""
        if self.count is not None:
            return self.count
        assert self.fraction is not None
        return self.fraction

    @classmethod
    def of(cls, number: float) -> MaxErrors:
        """A whole number is a row count; ``0 < number < 1`` a fraction of the rows."""
        return cls(fraction=number) if 0 < number < 1 else cls(count=int(number))

    def describe(self) -> str:
        if self.count is not None:
            return f"at most {self.count} errored row{'s' if self.count != 1 else ''}"
        return f"at most {self.fraction:g} of the rows errored"


def _bad(source: str, expected: str, value: object) -> pytest.UsageError:
    shown = f"{value:g}" if isinstance(value, float) else repr(value)  # typed ini values
    return pytest.UsageError(f"{source}: expected {expected}, got {shown}")


def parse_bool(value: object, source: str) -> bool:
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _bad(source, "a boolean (1/0, true/false, yes/no, on/off)", value)


def parse_float(value: object, source: str) -> float:
    if isinstance(value, bool):
        raise _bad(source, "a number", value)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise _bad(source, "a number", value) from None
    if not math.isfinite(number):
        raise _bad(source, "a finite number", value)
    return number


def parse_max_errors(value: object, source: str) -> MaxErrors:
    number = parse_float(value, source)
    if number < 0:
        raise _bad(source, "a count or a fraction >= 0", value)
    if number >= 1 and number != int(number):
        raise _bad(source, "a whole row count (or a fraction below 1)", value)
    return MaxErrors.of(number)


def parse_positive_int(value: object, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _bad(source, "a positive integer", value)
    try:
        number = value if isinstance(value, int) else int(value.strip())
    except ValueError:
        raise _bad(source, "a positive integer", value) from None
    from pytest_kedi.evals.evaloptions import is_positive_int  # (not imported at start-up)

    if not is_positive_int(number):
        raise _bad(source, "a positive integer", value)
    return number


def parse_max_drop(value: object, source: str) -> float:
    """A score drop: a number from 0 to 1."""
    number = parse_float(value, source)
    if not 0 <= number <= 1:
        raise _bad(source, "a score drop from 0 to 1", value)
    return number


def parse_shard(value: object, source: str) -> tuple[int, int]:
    """``K/N`` with ``1 <= K <= N``: the K-th of N shards."""
    number, sep, total = str(value).strip().partition("/")
    try:
        shard = (int(number), int(total)) if sep else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard[0] <= shard[1]:
        raise _bad(source, "K/N with 1 <= K <= N, e.g. 2/4", value)
    return shard


def parse_count(value: object, source: str) -> int:
    """A whole number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _bad(source, "a whole number >= 0", value)
    try:
        number = value if isinstance(value, int) else int(value.strip())
    except ValueError:
        raise _bad(source, "a whole number >= 0", value) from None
    if not 0 <= number <= sys.maxsize:
        raise _bad(source, "a whole number >= 0", value)
    return number


def parse_timeout(value: object, source: str) -> float:
    from pytest_kedi.evals.evaloptions import TIMEOUT_MAX, is_timeout

    number = parse_float(value, source)
    if not is_timeout(number):
        raise _bad(source, f"a positive number of seconds up to {TIMEOUT_MAX:g}", value)
    return number


def parse_interval(value: object, source: str) -> float:
    """Seconds between two progress lines: a number >= 0 (0: after every row)."""
    number = parse_float(value, source)
    if number < 0:
        raise _bad(source, "a number of seconds >= 0", value)
    return number


def parse_choice(choices: tuple[str, ...]) -> Callable[[object, str], str]:
    def parse(value: object, source: str) -> str:
        if not isinstance(value, str) or value.strip() not in choices:
            raise _bad(source, f"one of {', '.join(choices)}", value)
        return value.strip()

    return parse


def parse_model(value: object, source: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _bad(source, "a model name", value)
    return value.strip()


def parse_path(value: object, source: str) -> Path:
    """A path, relative to the invocation directory (joined in `resolve`)."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(source, "a file path", value)
    return Path(value)


OFF = "off"


def parse_markdown(value: object, source: str) -> Path | str:
    """A path, or ``off`` (also an empty ``--kedi-markdown=``): no summary at all."""
    if not isinstance(value, str):
        raise _bad(source, "a file path or 'off'", value)
    text = value.strip()
    return OFF if text.lower() in ("", OFF) else Path(text)


def parse_min_scores(value: object, source: str) -> tuple[tuple[str, float], ...]:
    lines = value.splitlines() if isinstance(value, str) else value
    if not isinstance(lines, list):
        raise _bad(source, "lines of 'NODEID-PATTERN = F'", value)
    entries: list[tuple[str, float]] = []
    for line in lines:
        text = str(line).strip()
        if not text or text.startswith("#"):
            continue
        pattern, sep, number = text.rpartition("=")
        if not sep or not pattern.strip():
            raise _bad(source, "'NODEID-PATTERN = F'", line)
        entries.append((pattern.strip(), parse_float(number.strip(), source)))
    return tuple(entries)
