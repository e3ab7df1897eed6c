"""SIGTERM ends a pytest-kedi run like Ctrl-C (pytest finishes the session and the reports
are written, marked interrupted)."""

from __future__ import annotations

import signal
import threading

import pytest

__all__ = ["stop_on_sigterm"]


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def stop_on_sigterm(config: pytest.Config) -> None:
    """SIGTERM ends the run like Ctrl-C: pytest finishes the session, so the reports are
    written for what finished and say ``"interrupted": true``. Only when nobody else
    handles SIGTERM, from the main thread; the previous handler returns at unconfigure."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    previous = signal.signal(signal.SIGTERM, _terminate)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    config.add_cleanup(restore)
