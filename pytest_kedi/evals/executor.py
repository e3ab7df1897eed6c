"""Row scheduling: inline, or on a pool of daemon worker threads with per-row deadlines.

* No timeout and concurrency 1: rows run inline in the calling thread (no thread overhead).
* Otherwise ``concurrency`` daemon worker threads take rows in order. Workers persist for
  the whole suite, so per-thread state (an event loop, cached model clients) is reused.
* A row still running ``timeout`` seconds after its worker started it is given up: it is
  recorded through ``on_timeout``, its worker is abandoned (it exits once the row returns;
  its result is ignored) and a fresh worker takes its place. Workers are daemon threads,
  so a row that never returns can never keep the process from exiting.
* Results are delivered to ``on_row`` strictly in row order, as soon as every earlier
  row is done, in the calling thread.

``run_row`` must catch ordinary exceptions itself; a ``BaseException`` escaping it in a
worker (``KeyboardInterrupt``, ``SystemExit``) is re-raised in the calling thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["run_rows"]

R = TypeVar("R")

_START = 0
_DONE = 1


def run_rows(
    count: int,
    run_row: Callable[[int], R],
    *,
    concurrency: int = 1,
    timeout: float | None = None,
    on_timeout: Callable[[int, float], R],
    on_row: Callable[[R], object] | None = None,
) -> list[R]:
    """Run rows ``0..count-1`` and return their results in row order."""
    if timeout is None and concurrency <= 1:
        results: list[R] = []
        for index in range(count):
            result = run_row(index)
            results.append(result)
            if on_row is not None:
                on_row(result)
        return results
    if count == 0:
        return []
    return _Pool(count, run_row, timeout, on_timeout, on_row).run(min(concurrency, count))


class _Worker:
    __slots__ = ("abandoned",)

    def __init__(self) -> None:
        self.abandoned = False


class _Pool(Generic[R]):
    def __init__(
        self,
        count: int,
        run_row: Callable[[int], R],
        timeout: float | None,
        on_timeout: Callable[[int, float], R],
        on_row: Callable[[R], object] | None,
    ) -> None:
        self.count = count
        self.run_row = run_row
        self.timeout = timeout
        self.on_timeout = on_timeout
        self.on_row = on_row
        self.tasks: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.events: queue.SimpleQueue[tuple[int, int, Any, Any]] = queue.SimpleQueue()
        self.closed = False
        self.results: list[Any] = [None] * count
        self.finished = [False] * count
        self.in_flight: dict[int, tuple[float, _Worker]] = {}
        self.spawned = 0

    # ------------------------------------------------------------------ workers
    def _spawn(self) -> None:
        state = _Worker()
        self.spawned += 1
        thread = threading.Thread(
            target=self._work, args=(state,), name=f"kedi-eval-{self.spawned}", daemon=True
        )
        thread.start()

    def _work(self, state: _Worker) -> None:
        tasks, events, timed = self.tasks, self.events, self.timeout is not None
        while not self.closed:
            try:
                index = tasks.get_nowait()
            except queue.Empty:
                return
            if self.closed:
                return
            if timed:
                events.put((_START, index, time.monotonic(), state))
            try:
                events.put((_DONE, index, self.run_row(index), None))
            except BaseException as exc:
                events.put((_DONE, index, None, exc))
            if state.abandoned:
                return

    # ------------------------------------------------------------------ scheduling
    def run(self, workers: int) -> list[R]:
        for index in range(self.count):
            self.tasks.put(index)
        try:
            for _ in range(workers):
                self._spawn()
            next_emit = 0
            while next_emit < self.count:
                self._wait()
                if self.timeout is not None:
                    self._expire()
                while next_emit < self.count and self.finished[next_emit]:
                    if self.on_row is not None:
                        self.on_row(self.results[next_emit])
                    next_emit += 1
        finally:
            self.closed = True
        return self.results

    def _wait(self) -> None:
        wait: float | None = None
        if self.timeout is not None and self.in_flight:
            oldest = min(start for start, _ in self.in_flight.values())
            wait = max(0.0, oldest + self.timeout - time.monotonic())
        try:
            kind, index, payload, extra = self.events.get(timeout=wait)
        except queue.Empty:
            return
        if self.finished[index]:
            return  # the late result of a row that already timed out
        if kind == _START:
            self.in_flight[index] = (payload, extra)
            return
        self.in_flight.pop(index, None)
        if extra is not None:
            raise extra
        self.results[index] = payload
        self.finished[index] = True

    def _expire(self) -> None:
        assert self.timeout is not None
        now = time.monotonic()
        for index, (start, state) in list(self.in_flight.items()):
            if now - start >= self.timeout:
                del self.in_flight[index]
                state.abandoned = True
                self.results[index] = self.on_timeout(index, now - start)
                self.finished[index] = True
                self._spawn()
