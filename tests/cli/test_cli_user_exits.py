"""User code that raises SystemExit, GeneratorExit or a pytest outcome, and unreadable input.

`cli.main` runs in-process here (the real runtime), except where the process's own exit
status is what is checked.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from pytest_kedi import cli

SUITES = """
    @test: t:
      > case: exit_zero:
        `import sys; sys.exit(0)`
      > case: exit_three:
        `raise SystemExit(3)`
      > case: generator_exit:
        `raise GeneratorExit("closed")`
      > case: skipped:
        `import pytest; pytest.skip("not here")`
      > case: fine:
        `assert True`

    @eval: rows:
      > data: d:
        = `[1, 2, 3]`
      > metric: m(d):
        = `(_ for _ in ()).throw(SystemExit(3)) if d == 2 else 1.0`

    @eval: bad_data:
      > data: d:
        = `(_ for _ in ()).throw(GeneratorExit())`
      > metric: m(d):
        = `1.0`

    @eval: skipped_data:
      > data: d:
        = `__import__("pytest").skip("no data today")`
      > metric: m(d):
        = `1.0`

    @eval: later:
      > data: d:
        = `[1]`
      > metric: m(d):
        = `1.0`
    """


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KEDI_ADAPTER_MODEL", raising=False)
    monkeypatch.delenv("KEDI_ADAPTER", raising=False)

    def write(text: str, name: str = "prog.kedi") -> str:
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return name

    return write


def test_cases_that_exit_fail_and_later_cases_run(write, capsys) -> None:
    assert cli.main([write(SUITES), "--test"]) == 1
    out, err = capsys.readouterr()
    assert out == (
        "Tests:\n"
        "- t::exit_zero: FAIL | SystemExit: 0\n"
        "- t::exit_three: FAIL | SystemExit: 3\n"
        "- t::generator_exit: FAIL | GeneratorExit: closed\n"
        "- t::skipped: FAIL | Skipped: not here\n"
        "- t::fine: OK\n"
    )
    assert err == ""


def test_rows_and_datasets_that_exit_are_their_own_errors(write, capsys) -> None:
    assert cli.main([write(SUITES), "--eval"]) == 1
    out, err = capsys.readouterr()
    assert out == ("Evals:\n- rows::m: 0.6667 | error: SystemExit: 3\n- later::m: 1.0000\n")
    lines = err.splitlines()
    assert lines[0].startswith("Kedi eval error: bad_data::m: data-loading failed for data 'd'")
    assert lines[0].endswith(": GeneratorExit: ")
    assert lines[1] == "Kedi stack trace:"  # then the failure's frames
    skipped = (
        "Kedi eval error: skipped_data::m: data-loading failed for data 'd' at prog.kedi:27: "
        "Skipped: no data today"
    )
    assert skipped in lines
    assert lines[-1] == "Skipped: no data today"  # the end of its Kedi stack trace


def test_pytest_fail_in_a_dataset_is_a_located_data_loading_failure(write, capsys) -> None:
    """The CLI printed ``Kedi eval error: failing_data: Failed: bad data``: no metric, no
    dataset, no line, unlike any other data-loading failure."""
    name = write("""
        @eval: failing_data:
          > data: d:
            = `__import__("pytest").fail("bad data")`
          > metric: m(d):
            = `1.0`

        @eval: later:
          > data: d:
            = `[1]`
          > metric: m(d):
            = `1.0`
        """)
    assert cli.main([name, "--eval"]) == 1
    out, err = capsys.readouterr()
    assert out == "Evals:\n- later::m: 1.0000\n"
    assert err.splitlines() == [
        "Kedi eval error: failing_data::m: data-loading failed for data 'd' at prog.kedi:3: "
        "Failed: bad data",
        "Kedi stack trace:",
        '  File "prog.kedi", line 2, in data d',
        "    > data: d:",
        '  File "prog.kedi", line 3, in data d (Python)',
        '    = `__import__("pytest").fail("bad data")`',
        "Failed: bad data",
    ]


@pytest.mark.parametrize(
    ("body", "outcome"),
    [
        ('= `__import__("pytest").skip("no data")`', "Skipped: no data"),
        ('= `__import__("pytest").xfail("no data")`', "XFailed: no data"),
        ('= `__import__("pytest").importorskip("no_such_module_q")`', "Skipped: could not"),
        (  # raised while the rows are iterated (a lazy dataset)
            '= `(__import__("pytest").skip("no data") for _ in [1])`',
            "Skipped: no data",
        ),
    ],
)
def test_pytest_skip_in_a_dataset_is_a_located_data_loading_failure(
    write, capsys, body: str, outcome: str
) -> None:
    """With no pytest item to skip, the CLI printed ``Kedi eval error: s: Skipped: no data``:
    no metric, no dataset, no line, unlike any other data-loading failure."""
    name = write(f"""
        @eval: s:
          > data: d:
            {body}
          > metric: m(d):
            = `1.0`

        @eval: later:
          > data: d:
            = `[1]`
          > metric: m(d):
            = `1.0`
        """)
    assert cli.main([name, "--eval"]) == 1
    out, err = capsys.readouterr()
    assert out == "Evals:\n- later::m: 1.0000\n"
    lines = err.splitlines()
    assert lines[0].startswith(
        f"Kedi eval error: s::m: data-loading failed for data 'd' at prog.kedi:3: {outcome}"
    )
    assert lines[1:4] == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 2, in data d',
        "    > data: d:",
    ]
    assert '  File "prog.kedi", line 3, in data d (Python)' in lines
    assert lines[-1].startswith(outcome)


@pytest.mark.parametrize("flags", [[], ["--test"], ["--eval"]])
def test_a_pytest_outcome_in_the_prelude_is_located(write, capsys, flags: list[str]) -> None:
    """The CLI printed ``Failed: prelude fail`` alone, with no line, where any other error
    of the prelude shows its Kedi stack trace."""
    name = write("""
        ```
        import pytest
        pytest.fail("prelude fail")
        ```

        @eval: e:
          > data: d:
            = `[1]`
          > metric: m(d):
            = `1.0`
        """)
    assert cli.main([name, *flags]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 3, in <prelude> (Python)',
        '    pytest.fail("prelude fail")',
        "Failed: prelude fail",
    ]


@pytest.mark.parametrize(
    ("code", "status", "stderr"),
    [("", 0, ""), ("0", 0, ""), ("4", 4, ""), ("'bye'", 1, "bye\n")],
)
def test_a_plain_run_ends_like_a_python_script(
    write, capsys, code: str, status: int, stderr: str
) -> None:
    name = write(f"""
        > show: started
        `print("printed")`
        `__import__("sys").exit({code})`
        = never
        """)
    assert cli.main([name]) == status
    out, err = capsys.readouterr()
    assert out == "started\nprinted\n"
    assert err == stderr


def test_an_exit_code_whose_str_fails_ends_the_run_with_1_and_nothing_printed(
    write, capsys
) -> None:
    """``sys.exit(code)`` with a code whose ``__str__`` raises ended in ``pytest-kedi
    internal error: ValueError: no str``; Python exits 1 printing nothing."""
    name = write("""
        ```
        class Code:
            def __str__(self):
                raise ValueError("no str")
        ```
        `__import__("sys").exit(Code())`
        """)
    assert cli.main([name]) == 1
    assert capsys.readouterr() == ("", "")


def test_a_result_whose_str_exits_ends_the_run_with_its_status(write, capsys) -> None:
    """``print(result)`` in a script whose ``__str__`` calls ``sys.exit(6)`` ends with 6;
    the CLI printed a Kedi stack trace ending ``SystemExit: 6`` and exited 1."""
    name = write("""
        = `type("X", (), {"__str__": lambda self: __import__("sys").exit(6)})()`
        """)
    assert cli.main([name]) == 6
    assert capsys.readouterr() == ("", "")


def test_a_plain_run_exit_from_a_procedure(write, capsys) -> None:
    name = write("""
        @stop(code: int) -> int:
          ```
          raise SystemExit(code)
          ```

        = `stop(5)`
        """)
    assert cli.main([name]) == 5
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(
    ("statement", "last_line"),
    [
        ('`raise GeneratorExit("gone")`', "GeneratorExit: gone"),
        ('`__import__("pytest").skip("why")`', "Skipped: why"),
    ],
)
def test_a_plain_run_other_exits_are_kedi_errors(
    write, capsys, statement: str, last_line: str
) -> None:
    assert cli.main([write(statement + "\n")]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == last_line
    assert "internal error" not in err
    assert "Traceback" not in err


def test_the_process_exits_with_the_programs_status(kedi_file, run_cli) -> None:
    result = run_cli(kedi_file('`print("bye")`\n`raise SystemExit(7)`\n'))
    assert (result.out, result.err, result.code) == ("bye\n", "", 7)
    suites = run_cli(
        kedi_file("@test: t:\n  > case: c:\n    `raise SystemExit(7)`\n", "t.kedi"), "--test"
    )
    assert (suites.out, suites.code) == ("Tests:\n- t::c: FAIL | SystemExit: 7\n", 1)


def test_a_directory_as_file_says_so(write, capsys, tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    assert cli.main(["suite", "--eval"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("python -m pytest_kedi: error: suite is a directory, not a .kedi file")


def test_parse_a_directory_without_kedi_files(write, capsys, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    assert cli.main(["parse", "empty"]) == 1
    assert capsys.readouterr() == ("", "empty: no .kedi files in this directory\n")
    write("= `1`\n", "empty/one.kedi")
    assert cli.main(["parse", "empty"]) == 0


def _deny(monkeypatch: pytest.MonkeyPatch, denied: str) -> None:
    """Reading ``denied`` fails with EACCES (a chmod 000 file is still readable by root)."""
    from pytest_kedi.lang import files as parser  # where program files are read

    real_read = parser.read_bytes

    def fake_read(file):
        if Path(file).name == denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_read(file)

    monkeypatch.setattr(parser, "read_bytes", fake_read)


@pytest.mark.parametrize("mode", [[], ["--test"], ["--eval"]])
def test_an_unreadable_file_says_cannot_read(write, capsys, monkeypatch, mode) -> None:
    name = write("= `1`\n")
    _deny(monkeypatch, name)
    assert cli.main([name, *mode]) == 1
    assert capsys.readouterr() == ("", "cannot read prog.kedi: Permission denied\n")
    assert cli.main(["parse", name]) == 1
    assert capsys.readouterr() == ("", "cannot read prog.kedi: Permission denied\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_as_file_is_not_called_missing(write, capsys, tmp_path: Path) -> None:
    """A FIFO given as FILE (``/dev/stdin`` in a pipeline) was reported as ``no such file``."""
    os.mkfifo(tmp_path / "pipe.kedi")
    assert cli.main(["pipe.kedi", "--test"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("python -m pytest_kedi: error: pipe.kedi is not a regular file\n")


@pytest.mark.parametrize("mode", ["--test", "--eval", None])
def test_an_exception_group_carrying_a_keyboard_interrupt_interrupts_the_run(
    write, capsys, mode
) -> None:
    """It failed its case (`FAIL | BaseExceptionGroup: ...`), its suite (`Kedi eval error`)
    or the program (a stack trace, exit 1), and the run went on: a plain KeyboardInterrupt
    ends it with `interrupted` and status 130."""
    name = write("""
        [x] = `(_ for _ in ()).throw(BaseExceptionGroup("g", [ValueError(), KeyboardInterrupt()]))`

        @test: t:
          > case: grouped:
            `raise BaseExceptionGroup("g", [KeyboardInterrupt()])`
          > case: later:
            `assert True`

        @eval: grouped:
          > data: d:
            = `[1, 2]`
          > metric: m(d):
            = `(_ for _ in ()).throw(BaseExceptionGroup("g", [KeyboardInterrupt()]))`

        @eval: later:
          > data: d:
            = `[1]`
          > metric: m(d):
            = `1.0`
        """)
    assert cli.main([name] + ([mode] if mode else [])) == 130
    out, err = capsys.readouterr()
    assert "later" not in out and "OK" not in out
    assert err == "interrupted\n"
