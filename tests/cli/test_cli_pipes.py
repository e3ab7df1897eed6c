"""``python -m pytest_kedi FILE | head``: once the reader of stdout has gone, the run ends
quietly with status 1 (README "Command line"), whoever was writing. With stderr closed
(``2>&-``), diagnostics are dropped, never written to stdout; with stdout closed (``>&-``),
output is dropped as Python's ``print`` drops it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")


def _run_unread(tmp_path: Path, source: str, *argv: str) -> tuple[str, int]:
    """Run the CLI on ``source`` with a stdout pipe whose reader is gone before it starts."""
    (tmp_path / "prog.kedi").write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KEDI_ADAPTER_MODEL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest_kedi", "prog.kedi", *argv],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the first line
    with process.stderr:
        err = process.stderr.read().decode()
    return err, process.wait(timeout=120)


@pytest.mark.parametrize(
    "source",
    [
        "```\nfor i in range(100000):\n    print('line', i)\n```\n= done\n",
        "> loop [i]: `range(9000)`:\n  > show: <i>\n",
    ],
    ids=["print", "show"],
)
def test_a_program_printing_into_a_gone_reader_ends_quietly(tmp_path: Path, source: str) -> None:
    """The program's own ``print`` (or ``> show:``) meeting the closed pipe was rendered as
    the program's error: a ``Kedi stack trace`` ending in ``BrokenPipeError``."""
    assert _run_unread(tmp_path, source) == ("", 1)


def test_output_for_a_gone_reader_exits_1(tmp_path: Path) -> None:
    """The result written into the closed pipe ends the run quietly too."""
    assert _run_unread(tmp_path, "= done\n") == ("", 1)


def test_a_program_own_broken_pipe_is_still_its_error(kedi_file, run_cli) -> None:
    """A `BrokenPipeError` that is not about stdout (a pipe the program opened) stays the
    program's located error."""
    name = kedi_file("""
        ```
        import os
        read, write = os.pipe()
        os.close(read)
        ```
        `os.write(write, b"x")`
        """)
    result = run_cli(name)
    assert result.code == 1
    assert result.err.splitlines()[-1] == "BrokenPipeError: [Errno 32] Broken pipe"
    assert 'File "prog.kedi", line 6, in <program>' in result.err


@pytest.mark.parametrize("flag", ["--test", "--eval"])
def test_a_prelude_printing_into_a_gone_reader_ends_quietly(tmp_path: Path, flag: str) -> None:
    """The same for the prelude of a ``--test``/``--eval`` run."""
    source = "```\nfor i in range(100000):\n    print('line', i)\n```\n"
    assert _run_unread(tmp_path, source, flag) == ("", 1)


@pytest.mark.parametrize(
    ("source", "argv", "expected"),
    [
        ("[x] << say hi\n= <x>\n", [], ("success (no tool calls)\n", 0)),
        ("= done\n", ["--bogus-before-file"], ("", 2)),
    ],
    ids=["notice", "misuse"],
)
def test_a_closed_stderr_drops_diagnostics(
    tmp_path: Path, source: str, argv: list[str], expected: tuple[str, int]
) -> None:
    """Started with stderr closed (``2>&-``), the offline model's notice went to stdout,
    and a misuse message failed as ``pytest-kedi internal error: AttributeError: ...`` on
    stdout with status 1."""
    (tmp_path / "prog.kedi").write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KEDI_ADAPTER_MODEL", None)
    command = [sys.executable, "-m", "pytest_kedi", *argv, "prog.kedi"]
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", *command],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.stdout, done.returncode) == expected


@pytest.mark.parametrize(
    ("argv", "code"),
    [([], 0), (["--test"], 0), (["parse"], 0), (["--eval", "--name", "x"], 0)],
    ids=["run", "test", "parse", "eval"],
)
def test_a_closed_stdout_drops_output(tmp_path: Path, argv: list[str], code: int) -> None:
    """Started with stdout closed (``>&-``), every run ended in ``pytest-kedi internal error:
    AttributeError: 'NoneType' object has no attribute 'write'`` (``parse``: a Python
    traceback), status 1."""
    source = "`print('hi')`\n= done\n@test: s:\n  > case: c:\n    `print('x')`\n"
    (tmp_path / "prog.kedi").write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KEDI_ADAPTER_MODEL", None)
    command = [sys.executable, "-m", "pytest_kedi", *argv[:1], "prog.kedi", *argv[1:]]
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *command],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.stderr, done.returncode) == ("", code)


_CLOSING = """
    ```
    import io, os, sys
    print("before", flush=True)
    {close}
    ```

    @test: t:
      > case: c:
        `assert {passes}, "no"`

    @eval: s:
      > data: d:
        = `[1]`
      > metric: m(d):
        = `1.0 if {passes} else 1 / 0`

    = `"result" if {passes} else 1 / 0`
    """


@pytest.mark.parametrize(
    "close",
    [
        "sys.stdout.close()",
        "os.close(1)",
        "sys.stdout.close(); sys.stderr.close()",
        "os.close(1); os.close(2)",
        "sys.stdout.detach()",
        "sys.stdout.detach(); sys.stderr.detach()",
    ],
)
@pytest.mark.parametrize("flags", [[], ["--test"], ["--eval"]], ids=["run", "test", "eval"])
@pytest.mark.parametrize("passes", [True, False], ids=["passing", "failing"])
def test_a_prelude_closing_stdout_drops_what_follows(
    kedi_file, run_cli, close: str, flags: list[str], passes: bool
) -> None:
    """A prelude's ``sys.stdout.close()`` ended the run in ``pytest-kedi internal error:
    ValueError: I/O operation on closed file.`` (``os.close(1)``: ``cannot read prog.kedi:
    Bad file descriptor``; both streams closed: Python's fatal ``lost sys.stderr``;
    ``sys.stdout.detach()``: an internal error, then Python's ``Exception ignored``), status
    1 (120).
    As in a Python script, what is written after the close is dropped; the status is the
    run's own."""
    name = kedi_file(_CLOSING.format(close=close, passes=passes))
    result = run_cli(name, *flags)
    assert result.out == "before\n"
    if "sys.stderr" in close or "os.close(2)" in close:
        assert result.err == ""
    assert "Exception ignored" not in result.err and "internal error" not in result.err
    # a failing case (its line dropped), or the program's error (on stderr); --eval
    # completes with its row errors
    assert result.code == (0 if passes or flags == ["--eval"] else 1)
    if not passes and not flags and "stderr" not in close and "(2)" not in close:
        assert result.err.splitlines()[-1] in (
            "ZeroDivisionError: division by zero",
            "AssertionError: no",
        )


@pytest.mark.parametrize("flags", [[], ["--test"], ["--eval"]], ids=["run", "test", "eval"])
def test_a_prelude_closing_stderr_drops_diagnostics(kedi_file, run_cli, flags: list[str]) -> None:
    """The run's report still reaches stdout; its diagnostics are dropped, status 1."""
    name = kedi_file(_CLOSING.format(close="sys.stderr.close()", passes=False))
    result = run_cli(name, *flags)
    assert (result.err, result.code) == ("", 0 if flags == ["--eval"] else 1)
    assert (
        result.out
        == {
            "": "before\n",
            "--test": "before\nTests:\n- t::c: FAIL | AssertionError: no\n",
            "--eval": (
                "before\nEvals:\n- s::m: 0.0000 | error: ZeroDivisionError: division by zero\n"
            ),
        }[(flags or [""])[0]]
    )


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A program with a case and a suite, and the JSON report of its pytest run."""
    folder = tmp_path_factory.mktemp("full")
    source = "@test: s:\n  > case: c:\n    `assert True`\n"
    source += "@eval: e:\n  > data: d:\n    = `[1]`\n  > metric: m(d):\n    = `1.0`\n= done\n"
    (folder / "prog.kedi").write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KEDI_ADAPTER_MODEL", None)
    pytest_args = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--kedi-eval"]
    subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, "prog.kedi", "--kedi-report", "r.json"],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert (folder / "r.json").is_file()
    return folder


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize(
    "argv",
    [
        ["prog.kedi"],
        ["prog.kedi", "--test"],
        ["prog.kedi", "--eval"],
        ["parse", "prog.kedi"],
        ["--version"],
        ["compare", "r.json", "r.json"],
        ["merge", "r.json"],
        ["html", "r.json", "-o", "r.html"],
        ["--help"],
        ["parse", "--help"],
        ["html", "--help"],  # argparse's help: its write error was dropped, exit 0
        ["compare", "-h"],
        ["merge", "--help"],
    ],
    ids=lambda argv: "-".join(argv[:2]),
)
def test_a_full_disk_under_stdout_is_one_line_and_exit_1(report_dir: Path, argv: list[str]) -> None:
    """``> /dev/full`` (a full disk) said ``cannot read prog.kedi: No space left on device``
    for a run, and ended `parse`, `compare` and `merge` in a Python traceback: the output
    is incomplete, which one line on stderr says."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KEDI_ADAPTER_MODEL", None)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_kedi", *argv],
            cwd=report_dir,
            env=env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.stderr == (
        "python -m pytest_kedi: error: cannot write to standard output: No space left on device\n"
    )
    assert done.returncode == 1
