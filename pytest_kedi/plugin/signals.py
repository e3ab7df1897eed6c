"""SIGTERM ends a pytest-kedi run like Ctrl-C (pytest finishes the session and the reports
are written, marked interrupted)."""

from __future__ import annotations

import signal
import threading

import pytest

__all__ = ["interrupted", "stop_on_sigterm"]


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


def interrupted(session: pytest.Session, exitstatus: int) -> bool:
    """Whether Ctrl-C or SIGTERM ended the run: pytest's ``INTERRUPTED`` status, but not
    the one pytest-xdist also gives a run that ``-x``/``--maxfail`` stopped (its controller
    then says "stopping after N failures", not "... received keyboard-interrupt")."""
    if exitstatus != pytest.ExitCode.INTERRUPTED:
        return False
    stop = getattr(session.config.pluginmanager.get_plugin("dsession"), "shouldstop", False)
    return not (isinstance(stop, str) and "keyboard-interrupt" not in stop)
