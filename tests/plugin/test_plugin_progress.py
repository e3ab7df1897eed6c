"""Live progress of a running eval suite: rendering and throttling (fake screen and clock),
the choice between a live line and plain lines, and the plain lines in real runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from kedi_plugin_helpers import Kedi

from pytest_kedi.evals import RowResult
from pytest_kedi.plugin.progress import MAX_STRIDE, Progress, Screen, choose_style, status_text


@dataclass
class FakeScreen:
    """Records what progress writes; ``column`` is where pytest's current line ends."""

    column: int = 0
    width: int = 80
    written: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def screen(self) -> Screen:
        return Screen(
            write=self.written.append,
            write_line=self.lines.append,
            width=lambda: self.width,
            column=lambda: self.column,
        )


@dataclass
class FakeClock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def row(index: int, score: float, error: bool = False) -> RowResult:
    return RowResult(
        index, None, None, score, None, "boom" if error else None, "metric" if error else None, 0.0
    )


def feed(progress: Progress, row: RowResult) -> int:
    """One more row scored: the runner hands `Progress.seen` the rows so far."""
    done = SEEN.setdefault(progress, [])
    done.append(row)
    return progress.seen(done)


SEEN: dict[Progress, list[RowResult]] = {}  # each progress's rows so far


def test_status_text() -> None:
    assert (
        status_text("label", 0, 500, 0, 0.0, 0.0)
        == "kedi label: 0/500 rows | 0 errored | 0.0s elapsed"
    )
    assert status_text("label", 120, 500, 2, 96.0, 12.0) == (
        "kedi label: 120/500 rows | 2 errored | mean 0.8000 | 12.0s elapsed | ETA 38.0s"
    )
    assert status_text("label", 500, 500, 2, 400.0, 3725.0) == (
        "kedi label: 500/500 rows | 2 errored | mean 0.8000 | 1:02:05 elapsed"
    )
    assert status_text("x", 1, 3, 0, 1.0, 90.0).endswith("1:30 elapsed | ETA 3:00")


def test_live_line_is_throttled_to_ten_updates_a_second() -> None:
    fake, clock = FakeScreen(), FakeClock()
    progress = Progress(fake.screen(), "live", interval=10.0, clock=clock)
    progress.start("label", 10)
    for index, at in enumerate([100.05, 100.09, 100.12, 100.15, 100.21, 100.30, 100.31]):
        clock.now = at
        feed(progress, row(index, 1.0 if index % 2 else 0.0, error=index == 0))
    # drawn at 100.12 (3 rows), 100.30 (6 rows); 100.21 is less than 0.1 s after 100.12
    assert fake.written == [
        "\rkedi label: 3/10 rows | 1 errored | mean 0.3333 | 0.1s elapsed | ETA 0.3s\x1b[K",
        "\rkedi label: 6/10 rows | 1 errored | mean 0.5000 | 0.3s elapsed | ETA 0.2s\x1b[K",
    ]
    assert fake.lines == []
    progress.stop()
    assert fake.written[-1] == "\r\x1b[K"  # erased: nothing left on the line
    progress.stop()
    assert len(fake.written) == 3  # erased once


def test_live_line_below_pytests_current_line_puts_the_cursor_back() -> None:
    fake, clock = FakeScreen(column=12), FakeClock()
    progress = Progress(fake.screen(), "live", interval=10.0, clock=clock)
    progress.start("label", 2)
    clock.now = 100.5
    feed(progress, row(0, 1.0))
    assert fake.written == [
        "\nkedi label: 1/2 rows | 0 errored | mean 1.0000 | 0.5s elapsed | ETA 0.5s\x1b[K"
    ]
    clock.now = 101.0
    feed(progress, row(1, 1.0))
    assert fake.written[-1].startswith("\rkedi label: 2/2 rows")  # redrawn in place
    progress.stop()
    # erase the status line, go up to pytest's line, and back to its column 12
    assert fake.written[-1] == "\r\x1b[K\x1b[1A\r\x1b[12C"


def test_live_line_fits_the_terminal_width() -> None:
    fake, clock = FakeScreen(width=30), FakeClock()
    progress = Progress(fake.screen(), "live", interval=10.0, clock=clock)
    progress.start("a_suite_with_a_long_name", 5)
    clock.now = 101.0
    feed(progress, row(0, 1.0))
    (drawn,) = fake.written
    text = drawn.removeprefix("\r").removesuffix("\x1b[K")
    assert text == "kedi a_suite_with_a_long_n..." and len(text) == 29


def test_a_fast_suite_draws_nothing() -> None:
    fake, clock = FakeScreen(), FakeClock()
    progress = Progress(fake.screen(), "live", interval=10.0, clock=clock)
    progress.start("label", 3)
    for index in range(3):
        clock.now += 0.01
        feed(progress, row(index, 1.0))
    progress.stop()
    assert (fake.written, fake.lines) == ([], [])


def test_erase_before_the_debugger_then_redraw() -> None:
    fake, clock = FakeScreen(), FakeClock()
    progress = Progress(fake.screen(), "live", interval=10.0, clock=clock)
    progress.start("label", 3)
    clock.now = 100.2
    feed(progress, row(0, 1.0))
    progress.erase()
    assert fake.written[-1] == "\r\x1b[K"
    clock.now = 100.4
    feed(progress, row(1, 1.0))
    assert fake.written[-1].startswith("\rkedi label: 2/3 rows")


def test_plain_lines_every_interval_only_for_long_suites() -> None:
    fake, clock = FakeScreen(), FakeClock()
    progress = Progress(fake.screen(), "lines", interval=10.0, clock=clock)
    progress.start("label", 6)
    for index, at in enumerate([105.0, 110.5, 115.0, 119.0, 121.0]):
        clock.now = at
        feed(progress, row(index, 1.0))
    assert fake.lines == [
        "kedi label: 2/6 rows | 0 errored | mean 1.0000 | 10.5s elapsed | ETA 21.0s",
        "kedi label: 5/6 rows | 0 errored | mean 1.0000 | 21.0s elapsed | ETA 4.2s",
    ]
    clock.now = 140.0
    feed(progress, row(5, 1.0))  # the last row: the suite's own result follows
    progress.stop()
    assert len(fake.lines) == 2 and fake.written == []
    short = FakeScreen()
    quick = Progress(short.screen(), "lines", interval=10.0, clock=FakeClock())
    quick.start("label", 3)
    for index in range(3):
        feed(quick, row(index, 1.0))
    assert short.lines == []


@pytest.mark.parametrize(
    ("style", "interval", "per_row", "strides"),
    [
        # deterministic rows: the runner hands them over every 2, 4 ... MAX_STRIDE rows
        ("live", 10.0, 0.0001, [1, 2, 4, 8, 16, 16, 16]),
        ("lines", 10.0, 0.0001, [1, 2, 4, 8, 16, 16, 16]),
        # rows calling a model: after every row
        ("live", 10.0, 0.5, [1, 1, 1, 1]),
        # plain lines after every row (interval 0): every row, however fast
        ("lines", 0.0, 0.0001, [1, 1, 1, 1]),
    ],
)
def test_rows_are_seen_in_strides_as_long_as_about_ten_milliseconds(
    style: Literal["live", "lines"], interval: float, per_row: float, strides: list[int]
) -> None:
    fake, clock = FakeScreen(), FakeClock()
    progress = Progress(fake.screen(), style, interval=interval, clock=clock)
    progress.start("label", 1000)
    done: list[RowResult] = []
    assert progress.seen(done) == 1  # before the first row: one row, then look again
    asked = [1]
    for _ in range(len(strides) - 1):
        stride = asked[-1]
        for _ in range(stride):
            done.append(row(len(done), 1.0))
        clock.now += per_row * stride
        asked.append(progress.seen(done))
    assert asked == strides
    assert MAX_STRIDE == 16


def test_rows_turning_slow_are_seen_every_row_again() -> None:
    fake, clock = FakeScreen(), FakeClock()
    progress = Progress(fake.screen(), "live", interval=10.0, clock=clock)
    progress.start("label", 1000)
    done: list[RowResult] = []
    for stride in (1, 2, 4, 8, 16):
        done += [row(len(done) + index, 1.0) for index in range(stride)]
        clock.now += 0.0001 * stride
        progress.seen(done)
    done += [row(len(done) + index, 0.0, error=index == 0) for index in range(16)]
    clock.now += 16 * 1.0  # slow rows: drawn, every row counted, and one row at a time
    assert progress.seen(done) == 1
    assert fake.written[-1].startswith("\rkedi label: 47/1000 rows | 1 errored | mean 0.6596")


@pytest.mark.parametrize(
    ("mode", "verbosity", "isatty", "capture", "live_logging", "worker", "style"),
    [
        ("auto", 0, True, "fd", False, False, "live"),
        ("auto", 0, False, "fd", False, False, "lines"),
        ("auto", -1, True, "fd", False, False, None),  # -q
        ("on", -1, True, "fd", False, False, "live"),
        ("on", -2, False, "fd", False, False, "lines"),
        ("off", 0, True, "fd", False, False, None),
        ("auto", 0, True, "no", False, False, "lines"),  # -s: prints would interleave
        ("auto", 0, True, "tee-sys", False, False, "lines"),
        ("auto", 0, True, "sys", True, False, "lines"),  # live logging
        ("on", 0, True, "fd", False, True, None),  # an xdist worker has no terminal
    ],
)
def test_choose_style(
    mode: str,
    verbosity: int,
    isatty: bool,
    capture: str,
    live_logging: bool,
    worker: bool,
    style: str | None,
) -> None:
    assert (
        choose_style(
            mode,
            verbosity=verbosity,
            isatty=isatty,
            capture=capture,
            live_logging=live_logging,
            worker=worker,
        )
        == style
    )


LABEL = """\
@label(text: str) -> str:
  = `"billing" if "bill" in text else "account"`

@eval: label:
  > data: tickets:
    = `[("my bill", "account"), ("hello", "account"), ("x", "account")]`
  > metric: exact(tickets):
    = `label(tickets) == expected`
"""


def _progress_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("kedi label: ")]


@pytest.mark.parametrize(
    ("args", "env", "ini", "shown"),
    [
        ((), None, "kedi_progress_interval = 0", True),
        (("--kedi-progress", "off"), None, "kedi_progress_interval = 0", False),
        (("-q",), None, "kedi_progress_interval = 0", False),
        (("-q",), "on", "kedi_progress_interval = 0", True),
        (("-q",), None, "kedi_progress = on\nkedi_progress_interval = 0", True),
        ((), None, "", False),  # default interval 10 s: a quick suite prints nothing
    ],
)
def test_plain_progress_lines_when_not_on_a_terminal(
    kedi: Kedi,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    env: str | None,
    ini: str,
    shown: bool,
) -> None:
    kedi.write("label.kedi", LABEL)
    kedi.write("pytest.ini", f"[pytest]\n{ini}\n")
    if env is not None:
        monkeypatch.setenv("KEDI_PROGRESS", env)
    result = kedi.run("--kedi-eval", *args)
    result.assert_outcomes(passed=1)
    expected = [
        "kedi label: 1/3 rows | 0 errored | mean 0.0000 | * elapsed | ETA *",
        "kedi label: 2/3 rows | 0 errored | mean 0.5000 | * elapsed | ETA *",
    ]
    if shown and kedi.workers is None:
        result.stdout.fnmatch_lines(expected)
        assert len(_progress_lines(result)) == 2  # none after the last row
    else:  # off, or an xdist worker: no terminal to write on
        assert _progress_lines(result) == []


def test_bad_progress_values_are_usage_errors(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    kedi.write("label.kedi", LABEL)
    result = kedi.run("--kedi-eval", "--kedi-progress", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--kedi-progress (command line): expected one of auto, on, off, got 'sometimes'"]
    )
    monkeypatch.setenv("KEDI_PROGRESS_INTERVAL", "-1")
    result = kedi.run("--kedi-eval")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*KEDI_PROGRESS_INTERVAL (environment): expected a number of seconds >= 0, got '-1'"]
    )


PTY_CONFTEST = """\
import pytest_kedi.plugin.progress as progress

progress.LIVE_EVERY = 0.0  # redraw after every row: the test needs no slow rows
"""


def _run_on_a_terminal(path: Path, *args: str, term: str = "xterm") -> str:
    """pytest's raw output when its stdout is a terminal (a pseudo-terminal, 80 columns,
    of the kind ``term`` names)."""
    import pty  # POSIX only

    master, slave = pty.openpty()
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("KEDI_", "PYTEST_", "GITHUB_")) and name != "CI"
    }
    env.update(COLUMNS="80", LINES="24", PY_COLORS="0", TERM=term)
    command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:randomly", *args]
    process = subprocess.Popen(
        command, cwd=path, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert process.wait(timeout=120) == 0
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


_TIMING = re.compile(r" in \d+\.\d+s")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_live_line_on_a_real_terminal_leaves_pytests_output_unchanged(tmp_path: Path) -> None:
    """On a terminal the status line is drawn below ``label.kedi `` and erased with the
    cursor put back after it: remove the drawn lines and the erase, and what is left is
    byte for byte the output of the same run without progress."""
    (tmp_path / "label.kedi").write_text(LABEL, encoding="utf-8")
    (tmp_path / "conftest.py").write_text(PTY_CONFTEST, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    live = _run_on_a_terminal(tmp_path, "--kedi-eval", "--kedi-rows", "summary")
    plain = _run_on_a_terminal(
        tmp_path, "--kedi-eval", "--kedi-rows", "summary", "--kedi-progress", "off"
    )
    draws = re.findall(r"(?:\n|\r)(kedi label: [^\x1b]*)\x1b\[K", live)
    assert [d.split(" | ")[0] for d in draws] == [f"kedi label: {n}/3 rows" for n in (1, 2, 3)]
    assert draws[1].startswith("kedi label: 2/3 rows | 0 errored | mean 0.5000 | ")
    assert "ETA" in draws[1] and "ETA" not in draws[2]
    column = len("label.kedi ")
    assert live.count(f"\r\x1b[K\x1b[1A\r\x1b[{column}C") == 1  # erased once, cursor back
    assert "kedi label" not in plain
    left = re.sub(r"\n(kedi label: [^\x1b]*)\x1b\[K(\r(kedi label: [^\x1b]*)\x1b\[K)*", "", live)
    left = left.replace(f"\r\x1b[K\x1b[1A\r\x1b[{column}C", "")
    # what pytest prints while collecting depends on timing: compare from the first item on
    assert _after_collection(left) == _after_collection(plain)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_dumb_terminal_gets_plain_progress_lines(tmp_path: Path) -> None:
    """Under ``TERM=dumb`` (no cursor movement) the live line wrote ``\\x1b[K`` anyway."""
    (tmp_path / "label.kedi").write_text(LABEL, encoding="utf-8")
    (tmp_path / "conftest.py").write_text(PTY_CONFTEST, encoding="utf-8")  # drawn each row
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    out = _run_on_a_terminal(tmp_path, "--kedi-eval", "--kedi-rows", "summary", term="dumb")
    assert "\x1b" not in out
    assert "- label::exact: 0.6667  [passed]" in out


def _after_collection(output: str) -> str:
    return _TIMING.sub("", output[output.index("collected 1 item") :])


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_without_the_capture_plugin_a_terminal_gets_plain_progress_lines(tmp_path: Path) -> None:
    """``-p no:capture`` captures nothing, as ``-s`` does: a redrawn line would mix with the
    suite's own output, so progress is plain lines (none for a quick suite)."""
    (tmp_path / "label.kedi").write_text(LABEL, encoding="utf-8")
    (tmp_path / "conftest.py").write_text(PTY_CONFTEST, encoding="utf-8")  # drawn each row
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    out = _run_on_a_terminal(tmp_path, "--kedi-eval", "--kedi-rows", "summary", "-p", "no:capture")
    assert "\x1b" not in out
    assert "- label::exact: 0.6667  [passed]" in out


def test_eval_suites_run_without_the_logging_plugin(kedi: Kedi) -> None:
    """``-p no:logging`` takes pytest's ``log_cli`` options away: eval suites failed with
    ``ValueError: unknown configuration value: 'log_cli'`` instead of running."""
    kedi.write("label.kedi", LABEL)
    kedi.write("pytest.ini", "[pytest]\nkedi_progress_interval = 0\n")
    result = kedi.run("--kedi-eval", "-p", "no:logging")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["- label::exact: 0.6667  [passed]"])
    result.stdout.no_fnmatch_line("*log_cli*")
    if kedi.workers is None:  # progress is shown by the process running the suite
        assert len(_progress_lines(result)) == 2
