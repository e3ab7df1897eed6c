"""Which exceptions escaping user code are that code's own errors (docs/language.md#errors).

Every `Exception` is, and so is anything else user code can raise: `SystemExit`,
`GeneratorExit`, a class deriving from `BaseException` directly. Such an error fails only its
own unit (a case, a row, a dataset, a model call), located at its `.kedi` line; an
`asyncio.CancelledError` user code raises, too (user code runs in threads, not as tasks: the
model loop's own cancellations are told apart where they happen). Signals for the run are not:
`KeyboardInterrupt`, a cancelled row (`Cancelled`) and pytest's outcomes (skip, xfail, fail),
which keep their meaning for the run and for pytest, nor is an exception group carrying one.

Catch sites read ``except BaseException as exc:`` and re-raise what `user_error` rejects.
"""

from __future__ import annotations

import signal
import sys

from pytest_kedi.runtime.cancel import Cancelled

__all__ = ["carried_interrupt", "failed_outcome", "user_error"]

_SIGNALS: tuple[type[BaseException], ...] = (KeyboardInterrupt, Cancelled)


def user_error(exc: BaseException, *, outcomes: bool = False) -> bool:
    """Whether ``exc``, escaping user code, is that code's own error (not a run signal).

    ``outcomes``: pytest's outcomes are errors too. An eval row is scored so: a
    ``pytest.skip()``, ``pytest.xfail()`` or ``pytest.fail()`` in a metric (or a procedure
    it calls) is that row's error, ``error: Skipped: <reason>`` and so on, while one in a
    dataset skips (or fails) the item. An outcome a signal handler raised (pytest-timeout's
    ``signal`` method) is the item's, never a row's."""
    if isinstance(exc, Exception):
        return True
    if isinstance(exc, _SIGNALS):
        return False
    pytest_outcomes = sys.modules.get("_pytest.outcomes")
    if pytest_outcomes is not None and isinstance(exc, pytest_outcomes.OutcomeException):
        return outcomes and not _from_signal_handler(exc)
    if isinstance(exc, BaseExceptionGroup):
        return all(user_error(member, outcomes=outcomes) for member in exc.exceptions)
    return True


def carried_interrupt(exc: BaseException) -> KeyboardInterrupt | None:
    """The `KeyboardInterrupt` that ``exc`` is or that an exception group ``exc`` carries
    (at any depth): such a group interrupts a run as the interrupt itself does
    (docs/language.md#pytest-mapping); None for anything else."""
    if isinstance(exc, KeyboardInterrupt):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            found = carried_interrupt(member)
            if found is not None:
                return found
    return None


def _from_signal_handler(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by a Python signal handler, as pytest-timeout's ``signal``
    method fails an item that overran ``--timeout`` from its ``SIGALRM`` handler: that
    ``pytest.fail()`` ends the item, whatever row it interrupted."""
    handlers = set()
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):  # pragma: no cover - a signal Python cannot query
            continue
        code = getattr(handler, "__code__", None)
        if code is not None:
            handlers.add(code)
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in handlers:
            return True
        tb = tb.tb_next
    return False


def failed_outcome(exc: BaseException) -> bool:
    """Whether ``exc`` is pytest's ``pytest.fail()`` outcome. Raised while a suite's dataset
    loads, it is that dataset's loading failure like any other error (a Kedi stack trace, the
    dataset named), where ``pytest.skip()`` and ``pytest.xfail()`` keep their meaning for the
    item (docs/language.md#datasets)."""
    pytest_outcomes = sys.modules.get("_pytest.outcomes")
    if pytest_outcomes is None or not isinstance(exc, pytest_outcomes.Failed):
        return False
    return not isinstance(exc, pytest_outcomes.XFailed)  # (an `XFailed` is a `Failed`)
