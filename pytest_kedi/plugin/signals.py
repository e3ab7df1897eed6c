"""SIGTERM ends a pytest-kedi run like Ctrl-C (pytest finishes the session and the reports
are written, marked interrupted)."""

from __future__ import annotations

import signal
import threading

import pytest

__all__ = ["interrupted", "stop_on_sigterm", "stopped"]


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
    then says "stopping after N failures", not "... received keyboard-interrupt"), nor the
    one of a run a plugin stopped (``--stepwise``: see `stopped`)."""
    if exitstatus != pytest.ExitCode.INTERRUPTED:
        return False
    if isinstance(session.shouldstop, str) and session.shouldstop:  # e.g. --stepwise's stop
        return False
    stop = getattr(session.config.pluginmanager.get_plugin("dsession"), "shouldstop", False)
    return not (isinstance(stop, str) and "keyboard-interrupt" not in stop)


def stopped(session: pytest.Session, exitstatus: int) -> str | None:
    """Why pytest stopped the run before every collected item ran, as it printed it
    (``stopping after 2 failures`` under ``-x``/``--maxfail``, ``--stepwise``'s message):
    the session's reason, or under pytest-xdist the controller's. None when the run went
    to its end, and when Ctrl-C or SIGTERM ended it (`interrupted`)."""
    if interrupted(session, exitstatus):
        return None
    dsession = session.config.pluginmanager.get_plugin("dsession")
    for holder in (dsession, session) if dsession is not None else (session,):
        for name in ("shouldfail", "shouldstop"):
            reason = getattr(holder, name, False)
            if isinstance(reason, str) and reason:
                from pytest_kedi.evals.safetext import clean_text

                return clean_text(reason)  # a plugin's text, cleaned like every other
    return None
