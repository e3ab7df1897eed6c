"""Row worker threads outlive their suite for a while, so the next suite does not start
threads again (starting a thread waits for it to run: milliseconds each under a busy GIL)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kedi_evals_fakes import FakeProgram, make_suite

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.evals.executor import IDLE_NAME, WORKERS, WorkerThreads


def wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in 30s"
        time.sleep(0.005)


def test_an_idle_worker_takes_the_next_job_under_its_name() -> None:
    workers = WorkerThreads(idle=60)
    seen: list[tuple[threading.Thread, str]] = []
    done = threading.Semaphore(0)

    def job() -> None:
        me = threading.current_thread()
        seen.append((me, me.name))
        done.release()

    workers.start(job, "kedi-eval-first")
    assert done.acquire(timeout=30)
    wait_for(lambda: workers.idle == 1)
    assert seen[0][0].name == IDLE_NAME
    workers.start(job, "kedi-eval-second")
    assert done.acquire(timeout=30)
    assert seen[1] == (seen[0][0], "kedi-eval-second")
    assert seen[0][1] == "kedi-eval-first"


def test_an_idle_worker_ends_after_its_idle_time() -> None:
    workers = WorkerThreads(idle=0.01)
    threads: list[threading.Thread] = []
    workers.start(lambda: threads.append(threading.current_thread()), "kedi-eval-once")
    wait_for(lambda: bool(threads))
    threads[0].join(30)
    assert not threads[0].is_alive()
    assert workers.idle == 0


def test_the_next_suite_runs_on_the_previous_suites_threads() -> None:
    def rows() -> set[threading.Thread]:
        program = FakeProgram({("data", "samples"): list(range(9))}, lambda b: True)
        result = run_suite(program, make_suite(), EvalOptions(concurrency=3))
        assert result.score == 1.0
        return set(program.threads)

    first = rows()
    assert threading.current_thread() not in first
    wait_for(lambda: all(thread.name == IDLE_NAME for thread in first))
    idle = {thread for thread in threading.enumerate() if thread.name == IDLE_NAME}
    assert rows() <= idle
    assert WORKERS.idle_seconds > 0
