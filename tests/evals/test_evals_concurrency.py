"""Row concurrency, result order, `on_row` and per-row timeouts (issue 4 item 2)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from kedi_evals_fakes import FakeProgram, make_suite

from pytest_kedi.evals import EvalOptions, RowResult, run_suite
from pytest_kedi.runtime import cancel

REPO = Path(__file__).resolve().parents[2]


class InFlight:
    """Counts concurrently running metric calls."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def __enter__(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.now -= 1


def test_concurrent_rows_report_in_dataset_order() -> None:
    gauge = InFlight()
    count, width = 12, 4
    # The first `width` rows meet at a barrier, which they pass only with all of them in
    # flight at once; a broken barrier (timeout) errors the rows instead of hanging.
    barrier = threading.Barrier(width, timeout=30)
    done = [threading.Event() for _ in range(count)]
    finished: list[int] = []

    def metric(b: dict[str, Any]) -> float:
        index = b["samples"]
        with gauge:
            if index < width:
                barrier.wait()
            # later rows finish first: each row of a group of `width` waits for the next one
            if (index + 1) % width and not done[index + 1].wait(30):
                raise TimeoutError(f"row {index + 1} never finished")
            finished.append(index)
            done[index].set()
            return index / 10

    seen: list[int] = []
    program = FakeProgram({("data", "samples"): list(range(count))}, metric)
    result = run_suite(
        program,
        make_suite(),
        EvalOptions(concurrency=width),
        on_row=lambda row: seen.append(row.index),
    )
    assert finished[:width] == [3, 2, 1, 0]  # the rows did complete out of order
    assert seen == list(range(count))
    assert [r.index for r in result.rows] == list(range(count))
    assert [r.score for r in result.rows] == [i / 10 for i in range(count)]
    assert gauge.peak == width


def test_concurrent_scores_equal_sequential_scores() -> None:
    rows = [(f"word {i} " * (i % 4), i % 4 * 2) for i in range(40)]

    def metric(b: dict[str, Any]) -> Any:
        words = len(b["samples"].split())
        if words == 6:
            raise KeyError("six")
        return (words == b["expected"], f"{words} words") if words else 0.5

    sequential = run_suite(FakeProgram({("data", "samples"): rows}, metric), make_suite())
    concurrent = run_suite(
        FakeProgram({("data", "samples"): rows}, metric), make_suite(), EvalOptions(concurrency=8)
    )
    strip = [(r.index, r.input, r.expected, r.score, r.feedback, r.error, r.error_class)
             for r in sequential.rows]  # fmt: skip
    assert strip == [(r.index, r.input, r.expected, r.score, r.feedback, r.error, r.error_class)
                     for r in concurrent.rows]  # fmt: skip
    assert (sequential.score, sequential.feedback, sequential.errors_by_class) == (
        concurrent.score, concurrent.feedback, concurrent.errors_by_class,
    )  # fmt: skip


def test_sequential_without_timeout_runs_inline() -> None:
    program = FakeProgram({("data", "samples"): [1, 2, 3]}, lambda b: True)
    run_suite(program, make_suite())
    assert set(program.threads) == {threading.current_thread()}


def test_sequential_with_timeout_still_runs_inline() -> None:
    program = FakeProgram({("data", "samples"): [1, 2, 3]}, lambda b: True)
    result = run_suite(program, make_suite(), EvalOptions(timeout=30))
    assert result.score == 1.0
    assert set(program.threads) == {threading.current_thread()}


def test_concurrent_rows_run_in_worker_threads() -> None:
    program = FakeProgram({("data", "samples"): [1, 2]}, lambda b: True)
    result = run_suite(program, make_suite(), EvalOptions(concurrency=2))
    assert result.score == 1.0
    assert threading.current_thread() not in program.threads


def wait_until_cancelled() -> bool:
    """What a cancellable row does: block until its deadline cancels it (True)."""
    token = cancel.current()
    assert token is not None
    return token.wait(60)


def blocking_metric(blocked: dict[int, threading.Event]) -> Any:
    """Rows in `blocked` wait for their cancellation and then set their event."""

    def metric(b: dict[str, Any]) -> bool:
        if b["samples"] in blocked and wait_until_cancelled():
            blocked[b["samples"]].set()
        return True

    return metric


@pytest.mark.parametrize("concurrency", [1, 3])
def test_overrunning_row_times_out_and_the_rest_still_run(concurrency: int) -> None:
    cancelled = {1: threading.Event(), 2: threading.Event()}
    program = FakeProgram(
        {("data", "samples"): [(0, "a"), (1, "b"), (2, "c"), (3, "d")]},
        blocking_metric(cancelled),
    )
    seen: list[RowResult] = []
    result = run_suite(
        program,
        make_suite(),
        EvalOptions(concurrency=concurrency, timeout=0.2),
        on_row=seen.append,
    )
    # the overrunning rows were stopped by their deadline, not left to wait out a minute
    assert all(event.wait(30) for event in cancelled.values())
    assert [r.index for r in seen] == [0, 1, 2, 3]
    assert [r.score for r in result.rows] == [1.0, 0.0, 0.0, 1.0]
    timed_out = result.rows[1]
    assert timed_out.feedback == "error: timeout: row exceeded 0.2s"
    assert timed_out.error == "timeout: row exceeded 0.2s"
    assert timed_out.error_class == "timeout"
    assert (timed_out.input, timed_out.expected) == ("1", "'b'")
    assert timed_out.duration_s >= 0.2
    assert result.errors_by_class == {"timeout": 2}
    assert result.score == 0.5
    assert result.feedback == "error: timeout: row exceeded 0.2s; error: timeout: row exceeded 0.2s"


def test_fast_rows_are_not_timed_out() -> None:
    program = FakeProgram({("data", "samples"): list(range(20))}, lambda b: True)
    result = run_suite(program, make_suite(), EvalOptions(concurrency=5, timeout=5))
    assert result.score == 1.0 and result.rows_errored == 0


def test_legacy_metric_honours_the_timeout() -> None:
    program = FakeProgram({}, lambda b: wait_until_cancelled())
    result = run_suite(program, make_suite([], metric=("m", None)), EvalOptions(timeout=0.1))
    assert (result.score, result.feedback) == (0.0, "error: timeout: row exceeded 0.1s")


class Abort(KeyboardInterrupt):
    """A signal for the run (a user's `BaseException` class is a row error instead)."""


@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(concurrency=2, timeout=10)])
def test_interrupts_are_not_swallowed(options: EvalOptions) -> None:
    def metric(b: dict[str, Any]) -> bool:
        raise Abort()

    with pytest.raises(Abort):
        run_suite(FakeProgram({("data", "samples"): [1, 2]}, metric), make_suite(), options)


@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(concurrency=2)])
def test_on_row_errors_propagate(options: EvalOptions) -> None:
    def on_row(row: RowResult) -> None:
        raise RuntimeError("hook failed")

    program = FakeProgram({("data", "samples"): [1, 2]}, lambda b: True)
    with pytest.raises(RuntimeError, match="hook failed"):
        run_suite(program, make_suite(), options, on_row=on_row)


def test_a_hung_row_never_keeps_the_process_alive(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, threading
            sys.path.insert(0, sys.argv[1])
            sys.path.insert(0, sys.argv[2])
            from kedi_evals_fakes import FakeProgram, make_suite
            from pytest_kedi.evals import EvalOptions, format_suite_line, run_suite

            never = threading.Event()
            program = FakeProgram(
                {("data", "samples"): [1, 2, 3]},
                lambda b: never.wait() if b["samples"] == 2 else True,
            )
            result = run_suite(program, make_suite(), EvalOptions(concurrency=2, timeout=0.2))
            print(format_suite_line(result))
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, str(script), str(REPO), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        "- word_count::exact: 0.6667 | error: timeout: row exceeded 0.2s"
    )


@pytest.mark.parametrize(
    "options",
    [
        EvalOptions(),
        EvalOptions(timeout=30),
        EvalOptions(concurrency=3),
        EvalOptions(repeat=2),
        EvalOptions(repeat=2, concurrency=2),
    ],
)
@pytest.mark.parametrize("strides", [[1], [2, 3], [5, 1, 100], [0]])
def test_on_progress_sees_the_rows_so_far_in_strides(
    options: EvalOptions, strides: list[int]
) -> None:
    """`on_progress` gets the rows scored so far, in row order: before the first row, after
    the last, and in between after as many rows as it last asked for (inline, no time
    limit; at least one) or after every row (every other way of running rows)."""
    count = 11
    calls: list[list[int]] = []
    each: list[int] = []

    def on_progress(done: list[RowResult]) -> int:
        calls.append([row.index for row in done])
        return strides[min(len(calls) - 1, len(strides) - 1)]

    program = FakeProgram({("data", "samples"): list(range(count))}, lambda b: b["samples"] % 2)
    result = run_suite(
        program,
        make_suite(),
        options,
        on_row=lambda row: each.append(row.index),
        on_progress=on_progress,
    )
    assert result.score == 5 / 11 and each == list(range(count))
    assert calls[0] == [] and calls[-1] == list(range(count))
    assert all(seen == list(range(len(seen))) for seen in calls)  # a prefix, in order
    sizes = [len(seen) for seen in calls]
    if options == EvalOptions():
        expected, done = [0], 0
        while done < count:
            done = min(count, done + max(1, strides[min(len(expected) - 1, len(strides) - 1)]))
            expected.append(done)
        assert sizes == expected
    else:
        assert sizes == list(range(count + 1))
