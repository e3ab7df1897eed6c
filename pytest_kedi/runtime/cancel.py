"""Cooperative cancellation of one unit of work (an eval row, a dataset load).

Whoever owns a deadline (the row watchdog, the row pool) creates a `CancelToken`, binds it
to the thread that runs the work (`bound`) and calls `CancelToken.cancel` from any thread
when the deadline passes. The interpreter calls `checkpoint()` before every Kedi
statement, procedure call and model call, so cancelled work stops at the next one by
raising `Cancelled`; a model request in flight is cancelled through `on_cancel`.

Python code that never returns to the interpreter (one long C call, ``time.sleep``)
cannot be stopped this way; that is the documented limit of ``--kedi-timeout``.

`checkpoint()` is on the per-statement hot path: while no bound token in the process is
cancelled it costs one attribute read (``_STATE.pending``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["STATE", "CancelToken", "Cancelled", "bound", "check_current", "checkpoint", "current"]


class Cancelled(BaseException):
    """Raised inside cancelled work.

    A `BaseException` (like `asyncio.CancelledError`), so ``except Exception`` in user
    code does not swallow it.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _State:
    __slots__ = ("pending",)

    def __init__(self) -> None:
        #: bound tokens that are cancelled but whose work has not ended yet
        self.pending = 0


_STATE = _State()
#: for hot paths: ``if STATE.pending: check_current()`` inlines `checkpoint`
STATE = _STATE
_LOCK = threading.Lock()
_LOCAL = threading.local()


class CancelToken:
    """A one-way cancellation flag for one unit of work, settable from any thread."""

    __slots__ = ("_active", "_callbacks", "_counted", "_event", "reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], object]] = []
        self._active = False
        self._counted = False
        self.reason = ""

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel the work (idempotent); runs the registered callbacks once."""
        with _LOCK:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            if self._active:
                self._counted = True
                _STATE.pending += 1
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled (True) or ``timeout`` seconds passed (False)."""
        return self._event.wait(timeout)

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` when cancelled (now, if already); returns an unregister function."""
        with _LOCK:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with _LOCK:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return _noop

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled(self.reason)


def _noop() -> None:
    return None


def current() -> CancelToken | None:
    """The token bound to the calling thread (None outside cancellable work)."""
    token: CancelToken | None = getattr(_LOCAL, "token", None)
    return token


@contextmanager
def bound(token: CancelToken) -> Iterator[CancelToken]:
    """Bind ``token`` to the calling thread for the duration of the block."""
    previous = current()
    with _LOCK:
        token._active = True
        if token._event.is_set() and not token._counted:
            token._counted = True
            _STATE.pending += 1
    _LOCAL.token = token
    try:
        yield token
    finally:
        _LOCAL.token = previous
        with _LOCK:
            token._active = False
            if token._counted:
                token._counted = False
                _STATE.pending -= 1


def check_current() -> None:
    """Raise `Cancelled` if the calling thread's token is cancelled (the slow half of
    `checkpoint`)."""
    token: CancelToken | None = getattr(_LOCAL, "token", None)
    if token is not None and token._event.is_set():
        raise Cancelled(token.reason)


def checkpoint() -> None:
    """Raise `Cancelled` when the calling thread's work has been cancelled."""
    if _STATE.pending:
        check_current()
