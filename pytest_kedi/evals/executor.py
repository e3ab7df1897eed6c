"""Row scheduling: inline, or on a pool of daemon worker threads, with per-row deadlines.

* Concurrency 1: rows run inline in the calling thread (so code that needs the main
  thread, such as ``signal.signal``, behaves the same with and without a timeout). With
  a timeout, one watchdog thread per suite cancels a row that passes its deadline.
* Otherwise ``concurrency`` daemon worker threads take rows in order. Workers persist for
  the whole suite; afterwards each thread waits, idle, for the next suite's rows for a few
  seconds (`WorkerThreads`), so a session of suites does not start threads per suite.
* A row running longer than ``timeout`` seconds is recorded through ``on_timeout`` and
  cancelled (`pytest_kedi.runtime.cancel`): it stops at its next Kedi statement,
  procedure call or model call, and its in-flight model request is cancelled. In the
  pool its worker is also abandoned (its late result is ignored) and a fresh worker takes
  its place; workers are daemon threads, so a row that never returns can never keep the
  process from exiting. Inline, a row that never returns to the interpreter (one long C
  call) cannot be interrupted: use pytest-timeout for a hard stop.
* Results are delivered to ``on_row`` strictly in row order, as soon as every earlier
  row is done, in the calling thread; ``on_progress`` sees them in strides (`run_rows`).

``run_row`` must catch ordinary exceptions itself; a ``BaseException`` escaping it in a
worker (``KeyboardInterrupt``, ``SystemExit``) is re-raised in the calling thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pytest_kedi.runtime.cancel import Cancelled, CancelToken, bound

__all__ = [
    "WORKERS",
    "DeadlineExceeded",
    "WorkerThreads",
    "call_with_deadline",
    "each_row",
    "run_rows",
]

R = TypeVar("R")

_START = 0
_DONE = 1
#: seconds an idle worker thread waits for more work before it ends
IDLE_SECONDS = 5.0
IDLE_NAME = "kedi-idle-worker"


class WorkerThreads:
    """Daemon threads that run jobs and then stay idle for ``idle`` seconds, ready for the next.

    Starting a thread waits until the new thread runs, which under a contended GIL costs
    milliseconds per thread: a suite at concurrency 100 would wait for its last workers
    long after its first rows are done. `start` hands a job to an idle thread when there
    is one. A thread carries the name of the job it runs and `IDLE_NAME` while idle.
    """

    def __init__(self, idle: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], object], str]] = queue.SimpleQueue()
        self._idle = 0

    def start(self, job: Callable[[], object], name: str) -> None:
        """Run ``job()`` on an idle thread (renamed ``name``), or on a new one."""
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._jobs.put((job, name))
                return
        threading.Thread(target=self._serve, args=(job,), name=name, daemon=True).start()

    @property
    def idle(self) -> int:
        return self._idle

    def _serve(self, job: Callable[[], object]) -> None:
        me = threading.current_thread()
        while True:
            job()
            me.name = IDLE_NAME
            with self._lock:
                self._idle += 1
            try:
                job, name = self._jobs.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:  # a job handed over as the wait ended is still ours
                    try:
                        job, name = self._jobs.get_nowait()
                    except queue.Empty:
                        self._idle -= 1
                        return
            me.name = name


#: The worker threads of every suite in the process. Owner: this module.
WORKERS = WorkerThreads()


def run_rows(
    count: int,
    run_row: Callable[[int], R],
    *,
    concurrency: int = 1,
    timeout: float | None = None,
    on_timeout: Callable[[int, float], R],
    on_row: Callable[[R], object] | None = None,
    on_progress: Callable[[list[R]], int] | None = None,
) -> list[R]:
    """Run rows ``0..count-1`` and return their results in row order.

    ``on_progress`` is given the results so far (in row order) before the first row, every
    few rows and after the last: as many rows as its previous call returned (inline,
    without a time limit), or every row."""
    if count == 0:
        return []
    if concurrency <= 1 and timeout is None:
        if on_progress is None and on_row is None:
            return [run_row(index) for index in range(count)]
        return _run_strides(count, run_row, on_row, on_progress or (lambda done: count))
    on_row = each_row(on_row, on_progress)
    if concurrency > 1:
        return _Pool(count, run_row, timeout, on_timeout, on_row).run(min(concurrency, count))
    assert timeout is not None  # (inline without a time limit: above)
    return _run_watched(count, run_row, timeout, on_timeout, on_row)


def each_row(
    on_row: Callable[[R], object] | None, on_progress: Callable[[list[R]], int] | None
) -> Callable[[R], object] | None:
    """``on_row``, then ``on_progress`` with the rows so far, as one callback for each row."""
    if on_progress is None:
        return on_row
    done: list[R] = []
    on_progress(done)

    def each(result: R) -> None:
        if on_row is not None:
            on_row(result)
        done.append(result)
        on_progress(done)

    return each


def _run_strides(
    count: int,
    run_row: Callable[[int], R],
    on_row: Callable[[R], object] | None,
    on_progress: Callable[[list[R]], int],
) -> list[R]:
    """Rows inline, ``on_progress`` between strides of the length it asks for."""
    results: list[R] = []
    index = 0
    while index < count:
        end = min(count, index + max(1, on_progress(results)))
        if on_row is None:
            results.extend(map(run_row, range(index, end)))
        else:
            for at in range(index, end):
                result = run_row(at)
                results.append(result)
                on_row(result)
        index = end
    on_progress(results)
    return results


def _reason(timeout: float) -> str:
    return f"row exceeded {timeout:g}s"


def _run_watched(
    count: int,
    run_row: Callable[[int], R],
    timeout: float,
    on_timeout: Callable[[int, float], R],
    on_row: Callable[[R], object] | None,
) -> list[R]:
    """Rows inline in the calling thread; a watchdog thread cancels overrunning rows."""
    results: list[R] = []
    with _Watchdog(timeout) as watchdog:
        for index in range(count):
            token = CancelToken()
            start = time.monotonic()
            watchdog.arm(token, start + timeout)
            try:
                with bound(token):
                    result = run_row(index)
            except Cancelled:
                if not token.cancelled:
                    raise
            finally:
                watchdog.disarm()
            if token.cancelled:
                result = on_timeout(index, time.monotonic() - start)
            results.append(result)
            if on_row is not None:
                on_row(result)
    return results


class _Watchdog:
    """One thread that cancels the armed token when its deadline passes."""

    def __init__(self, timeout: float) -> None:
        self.reason = _reason(timeout)
        self.cond = threading.Condition()
        self.token: CancelToken | None = None
        self.deadline = 0.0
        self.closed = False
        self.thread = threading.Thread(target=self._watch, name="kedi-row-watchdog", daemon=True)

    def __enter__(self) -> _Watchdog:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify()
        self.thread.join()

    def arm(self, token: CancelToken, deadline: float) -> None:
        with self.cond:
            self.token, self.deadline = token, deadline
            self.cond.notify()

    def disarm(self) -> None:
        with self.cond:
            self.token = None

    def _watch(self) -> None:
        with self.cond:
            while not self.closed:
                token = self.token
                if token is None:
                    self.cond.wait()
                    continue
                remaining = self.deadline - time.monotonic()
                if remaining > 0:
                    self.cond.wait(remaining)
                    continue
                token.cancel(self.reason)
                self.token = None


class DeadlineExceeded(Exception):
    """`call_with_deadline`: the call did not finish in time (it was cancelled)."""


def call_with_deadline(func: Callable[[], R], timeout: float | None) -> R:
    """``func()`` bounded by ``timeout`` seconds (None: inline, unbounded).

    With a timeout the call runs on a daemon thread with a `CancelToken`; past the
    deadline the token is cancelled, the thread abandoned and `DeadlineExceeded` raised.
    Exceptions of ``func`` are re-raised in the calling thread.
    """
    if timeout is None:
        return func()
    token = CancelToken()
    outcome: list[Any] = []
    done = threading.Event()

    def target() -> None:
        try:
            with bound(token):
                outcome.append((True, func()))
        except BaseException as exc:  # re-raised in the caller below
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=target, name="kedi-data-loader", daemon=True).start()
    if not done.wait(timeout):
        token.cancel(f"exceeded {timeout:g}s")
        raise DeadlineExceeded(f"exceeded {timeout:g}s")
    ok, value = outcome[0]
    if ok:
        return value
    raise value


class _Worker:
    __slots__ = ("abandoned", "token")

    def __init__(self) -> None:
        self.abandoned = False
        self.token = CancelToken()  # the token of the row this worker runs (or ran last)


@dataclass(eq=False)
class _Pool(Generic[R]):
    count: int
    run_row: Callable[[int], R]
    timeout: float | None
    on_timeout: Callable[[int, float], R]
    on_row: Callable[[R], object] | None
    tasks: queue.SimpleQueue[int] = field(default_factory=queue.SimpleQueue)
    events: queue.SimpleQueue[tuple[int, int, Any, Any]] = field(default_factory=queue.SimpleQueue)
    closed: bool = False
    in_flight: dict[int, tuple[float, tuple[_Worker, CancelToken]]] = field(default_factory=dict)
    workers: list[_Worker] = field(default_factory=list)
    spawned: int = 0

    def __post_init__(self) -> None:
        self.results: list[Any] = [None] * self.count
        self.finished = [False] * self.count

    # ------------------------------------------------------------------ workers
    def _spawn(self) -> None:
        state = _Worker()
        self.workers.append(state)
        self.spawned += 1
        WORKERS.start(lambda: self._work(state), f"kedi-eval-{self.spawned}")

    def _work(self, state: _Worker) -> None:
        tasks, events, timed = self.tasks, self.events, self.timeout is not None
        while not self.closed:
            try:
                index = tasks.get_nowait()
            except queue.Empty:
                return
            if self.closed:
                return
            token = state.token = CancelToken()
            if timed:
                events.put((_START, index, time.monotonic(), (state, token)))
            try:
                with bound(token):
                    result = self.run_row(index)
                events.put((_DONE, index, result, None))
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
            for worker in self.workers:  # an interrupted run stops its rows too
                worker.token.cancel("the run ended")
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
        for index, (start, (state, token)) in list(self.in_flight.items()):
            if now - start >= self.timeout:
                del self.in_flight[index]
                state.abandoned = True
                token.cancel(_reason(self.timeout))
                self.results[index] = self.on_timeout(index, now - start)
                self.finished[index] = True
                self._spawn()
