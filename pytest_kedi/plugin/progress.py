"""Live progress of a running ``@eval:`` suite (``--kedi-progress``).

While an eval item runs, its rows drive a `Progress` through the runner's ``on_progress``
callback (`Progress.seen`: every few rows, as many as score in about 10 ms):

* **live** (a terminal): one status line, redrawn in place at most `LIVE_EVERY` seconds
  apart, ``kedi label: 120/500 rows | 2 errored | mean 0.8123 | 12.0s elapsed | ETA 38.0s``.
  When pytest's current line already holds text (``label.kedi `` and its result letters),
  the status is drawn on the line below and erasing it moves the cursor back to where pytest
  left it, so pytest's own output continues exactly as without progress. The line is erased
  when the suite ends (also on an error or Ctrl-C) and before the debugger prompts;
* **lines** (not a terminal: CI logs; or output that could interleave with a redrawn line:
  ``-s``, ``--capture=tee-sys``, live logging): a plain status line every ``interval``
  seconds, only for suites that run longer than that.

`Progress` holds the rendering and throttling logic; it writes through a `Screen` and reads
time from an injected clock, so it is tested without a terminal and without sleeping.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult

__all__ = [
    "CHECK_EVERY",
    "LIVE_EVERY",
    "MAX_STRIDE",
    "Progress",
    "Screen",
    "choose_style",
    "progress_for",
    "status_text",
]

#: the live line is redrawn at most this often (seconds): ~10 updates a second
LIVE_EVERY = 0.1
#: how often (seconds) the runner hands a suite's rows to `Progress.seen`, about
CHECK_EVERY = 0.01
#: the most rows scored between two calls of `Progress.seen`: enough to make its cost per
#: deterministic row negligible, few enough that when rows turn slow (replayed model calls
#: then live ones) the status is at most this many rows late
MAX_STRIDE = 16
Style = Literal["live", "lines"]


def duration_text(seconds: float) -> str:
    """``4.2s`` under a minute, then ``12:30`` and ``1:02:03``."""
    if seconds < 59.95:
        return f"{max(0.0, seconds):.1f}s"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def status_text(
    label: str, done: int, total: int, errored: int, score_sum: float, elapsed: float
) -> str:
    """The status of a running suite; the mean and ETA once a row is done."""
    parts = [f"kedi {label}: {done}/{total} rows", f"{errored} errored"]
    if done:
        parts.append(f"mean {score_sum / done:.4f}")
    parts.append(f"{duration_text(elapsed)} elapsed")
    if done and total > done:
        parts.append(f"ETA {duration_text(elapsed / done * (total - done))}")
    return " | ".join(parts)


@dataclass(frozen=True, slots=True)
class Screen:
    """Where progress is written: pytest's terminal reporter, or a test's fake."""

    write: Callable[[str], None]  # raw text (escape sequences included), flushed
    write_line: Callable[[str], None]  # one whole line of pytest's output
    width: Callable[[], int]  # the terminal's width
    column: Callable[[], int]  # how much of pytest's current line is already written


class Progress:
    """The progress of the suite that is running (one at a time per process)."""

    def __init__(
        self,
        screen: Screen,
        style: Style,
        *,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.screen = screen
        self.style = style
        self.interval = interval
        self.clock = clock
        self._label = ""
        self._total = 0
        self._done = 0
        self._errored = 0
        self._score_sum = 0.0
        self._started = 0.0
        self._last = 0.0  # when the status was last drawn (or the suite started)
        self._checked = 0.0  # when the rows were last seen
        self._seen = 0  # how many rows were scored then
        self._stride = 1  # rows to score before they are seen again
        self._running = False
        self._drawn: int | None = None  # live: pytest's column under the drawn status line

    def start(self, label: str, total: int) -> None:
        """A suite of ``total`` rows starts scoring."""
        self.stop()
        self._label, self._total = label, total
        self._done = self._errored = self._seen = 0
        self._score_sum = 0.0
        self._started = self._last = self._checked = self.clock()
        self._stride = 1
        self._running = True

    def seen(self, done: Sequence[RowResult]) -> int:
        """The suite's rows scored so far (``done``, in row order: the runner's
        ``on_progress``); returns how many more rows to score before the next call.

        The runner calls this every few rows, not every row: as many rows as score in
        about `CHECK_EVERY` seconds (one row, for rows that call a model, up to
        `MAX_STRIDE` deterministic ones), so a fast suite does not pay a call per row."""
        if not self._running:
            return MAX_STRIDE
        rows = len(done) - self._seen
        if not rows:  # no row scored since the last call (the first call)
            return self._stride
        self._seen += rows
        now = self.clock()
        elapsed, self._checked = now - self._checked, now
        # (or as often as the status is written, if that is sooner: with plain lines
        # every `0` seconds, after every row); twice as many rows at most, as few at once
        every = min(CHECK_EVERY, LIVE_EVERY if self.style == "live" else self.interval)
        fit = int(every * rows / elapsed) if elapsed > 0 else MAX_STRIDE
        self._stride = max(1, min(fit, 2 * self._stride, MAX_STRIDE))
        if self.style == "live":
            if now - self._last >= LIVE_EVERY:
                self._count(done)
                self._draw(now)
        elif now - self._last >= self.interval and len(done) < self._total:
            self._last = now
            self._count(done)
            self.screen.write_line(self._status(now))
        return self._stride

    def _count(self, done: Sequence[RowResult]) -> None:
        """Add the rows scored since the last count to the status's figures."""
        new = done[self._done :]
        self._done += len(new)
        self._errored += sum(row.errored for row in new)
        self._score_sum += sum(row.score for row in new)

    def stop(self) -> None:
        """The suite ended: erase the live line (nothing is left on the screen)."""
        self._running = False
        self.erase()

    def erase(self) -> None:
        """Remove the live line and put the cursor back where pytest left it."""
        column = self._drawn
        if column is None:
            return
        self._drawn = None
        if column:  # the status was drawn on the line below pytest's current line
            self.screen.write(f"\r\x1b[K\x1b[1A\r\x1b[{column}C")
        else:
            self.screen.write("\r\x1b[K")

    def _status(self, now: float) -> str:
        return status_text(
            self._label,
            self._done,
            self._total,
            self._errored,
            self._score_sum,
            now - self._started,
        )

    def _draw(self, now: float) -> None:
        self._last = now
        width = max(self.screen.width(), 10)
        text = self._status(now)
        if len(text) > width - 1:  # never reach the last column: the terminal would wrap
            text = text[: width - 4] + "..."
        if self._drawn is None:
            column = self.screen.column() % width
            self._drawn = column
            self.screen.write(("\n" if column else "\r") + text + "\x1b[K")
        else:
            self.screen.write("\r" + text + "\x1b[K")


def choose_style(
    mode: str, *, verbosity: int, isatty: bool, capture: str, live_logging: bool, worker: bool
) -> Style | None:
    """How progress is shown (``None``: not at all).

    ``off`` shows nothing; ``auto`` shows nothing under ``-q``; an xdist worker has no
    terminal to draw on. The live line needs a terminal and output that cannot interleave
    with it (captured, no live logging); otherwise plain lines are written.
    """
    if mode == "off" or worker or (mode == "auto" and verbosity < 0):
        return None
    if isatty and capture in ("fd", "sys") and not live_logging:
        return "live"
    return "lines"


def _live_logging(config: pytest.Config) -> bool:
    """pytest's live logging is on (never under ``-p no:logging``, which takes its options)."""
    if not config.pluginmanager.has_plugin("logging-plugin"):
        return False
    return bool(config.getini("log_cli") or config.getoption("log_cli_level", None))


def progress_for(
    config: pytest.Config, mode: str, interval: float, worker: bool
) -> Progress | None:
    """The process's `Progress`, drawn on pytest's terminal reporter (``None``: off)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return None
    capman = config.pluginmanager.get_plugin("capturemanager")
    style = choose_style(
        mode,
        verbosity=config.get_verbosity(),
        # a terminal that moves no cursor (`TERM=dumb`: Emacs, some CI consoles) gets lines
        isatty=bool(reporter.isatty()) and os.environ.get("TERM") != "dumb",
        # `-p no:capture` captures nothing, as `-s` does
        capture=str(config.getoption("capture", "fd")) if capman is not None else "no",
        live_logging=_live_logging(config),
        worker=worker,
    )
    if style is None:
        return None
    writer = config.get_terminal_writer()

    def uncaptured() -> AbstractContextManager[object]:
        # The item's output is being captured (the terminal's file descriptor too): let
        # the status through, while the item's own output stays captured.
        return capman.global_and_fixture_disabled() if capman is not None else nullcontext()

    def write(text: str) -> None:
        with uncaptured():
            reporter.write_raw(text, flush=True)

    def write_line(text: str) -> None:
        with uncaptured():
            reporter.write_line(text)
            reporter.flush()

    screen = Screen(
        write=write,
        write_line=write_line,
        width=lambda: writer.fullwidth,
        column=lambda: writer.width_of_current_line,
    )
    return Progress(screen, style, interval=interval)
