"""How a failing Kedi item looks to pytest and to the plugins that read its reports.

An item that fails keeps two things apart:

* **what pytest sees raised**: the user's own exception with its own traceback when Kedi
  code raised one (so ``--pdb`` opens in the failing frame of the case's Python, and
  allure calls a failed ``assert`` *failed* and any other exception *broken*), a
  `KediGateFailed` (an ``AssertionError``) for a missed gate, and a `KediItemError` when
  the item could not run at all;
* **what is shown**: the Kedi-located text, with a ``reprcrash`` (``file.kedi:LINE:
  message``) that ``--tb=line``, the short test summary, JUnit and pytest-json-report read.
  It is one of pytest's own exception representations, so it survives pytest-xdist.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from _pytest._code.code import (
    ReprEntryNative,
    ReprExceptionInfo,
    ReprFileLocation,
    ReprTraceback,
)

from pytest_kedi.text import printable

__all__ = ["FAILURE", "KediFailure", "KediItemError", "failure_repr", "user_exception"]


class KediItemError(Exception):
    """A Kedi item could not run, or its suite errored without a Python exception of the
    user's (a load error, a missing dataset): an error, not a failed check."""


@dataclass(frozen=True, slots=True)
class KediFailure:
    """The rendering of one failure; ``raised`` is the exception pytest sees."""

    raised: BaseException
    path: str
    line: int
    message: str
    text: str


FAILURE = pytest.StashKey[KediFailure]()


def user_exception(error: BaseException) -> BaseException:
    """The exception raised by the user's code inside a Kedi error, else `error` itself.

    Only ordinary exceptions are unwrapped: a pytest outcome (skip, exit) raised from
    Kedi code keeps its own handling.
    """
    from pytest_kedi.runtime.errors import KediExecutionError

    if isinstance(error, KediExecutionError) and isinstance(error.original, Exception):
        return error.original
    return error


def failure_repr(failure: KediFailure, tbstyle: str) -> ReprExceptionInfo:
    """pytest's representation of `failure`: its text (nothing under ``--tb=line``, which
    prints the crash line alone) and its ``file.kedi:LINE: message`` crash location."""
    text = printable(failure.text)  # feedback and answers: no terminal control sequences
    entries = [] if tbstyle in ("line", "no") else [ReprEntryNative([text + "\n"])]
    return ReprExceptionInfo(
        reprtraceback=ReprTraceback(entries, None, "native"),
        reprcrash=ReprFileLocation(failure.path, failure.line, printable(failure.message)),
    )
