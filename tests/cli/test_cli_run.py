"""``python -m pytest_kedi FILE``: stdout, stderr, exit status and ``args``
(docs/language.md#program-runs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_kedi.runtime.model import SYNTHETIC_NOTICE

GREETER = """
    @greet(name: str) -> str:
      = Hello, <name>!

    `print("starting")`
    > show: `1 + 1`
    = `greet(args.name or "world")`
    """

DIVIDE = """
    @divide(a: int, b: int) -> int:
      = `a // b`

    = `divide(1, 0)`
    """

TEMPLATE = """
    >> Say hello to the user as [greeting]
    = <greeting>
    """


def test_stdout_is_program_output_then_the_result(kedi_file, run_cli) -> None:
    result = run_cli(kedi_file(GREETER), "--name", "Ada")
    assert (result.out, result.err, result.code) == ("starting\n2\nHello, Ada!\n", "", 0)


def test_no_top_level_return_prints_nothing_for_it(kedi_file, cli) -> None:
    name = kedi_file("""
        [x: int] = `6 * 7`
        `print(x)`
        """)
    result = cli(name)
    assert (result.out, result.err, result.code) == ("42\n", "", 0)


def test_explicit_none_return_is_printed(kedi_file, cli) -> None:
    result = cli(kedi_file("`print('side')`\n= `None`\n"))
    assert (result.out, result.err, result.code) == ("side\nNone\n", "", 0)


def test_a_result_whose_str_raises_is_located_in_its_code(kedi_file, cli) -> None:
    """It was ``pytest-kedi internal error: ValueError: ...``, with no file or line."""
    name = kedi_file("""
        ```
        class Ugly:
            def __str__(self):
                raise ValueError("cannot render Ugly")
        ```

        = `Ugly()`
        """)
    result = cli(name)
    assert (result.out, result.code) == ("", 1)
    assert result.err.splitlines() == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 7, in <program>',
        "    = `Ugly()`",
        '  File "prog.kedi", line 4, in <prelude> (Python)',
        '    raise ValueError("cannot render Ugly")',
        "ValueError: cannot render Ugly",
    ]


def test_a_result_that_cannot_be_printed_is_located_at_its_return(kedi_file, cli) -> None:
    """An int past Python's digit limit runs no code of its own when printed: the trace was
    its header and the error alone, with no file or line."""
    name = kedi_file("""
        [n: int] = `10 ** 5000`
        > if: `n > 0`:
          = `n`
        = none
        """)
    result = cli(name)
    assert (result.out, result.code) == ("", 1)
    assert result.err.splitlines()[:3] == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 3, in <program>',
        "    = `n`",
    ]
    assert result.err.splitlines()[3].startswith("ValueError: Exceeds the limit (4300 digits)")


def test_result_is_printed_with_str(kedi_file, cli) -> None:
    result = cli(kedi_file("= `{'a': [1, 2]}`\n"))
    assert (result.out, result.code) == ("{'a': [1, 2]}\n", 0)


def test_args_namespace(kedi_file, cli) -> None:
    name = kedi_file("= `(args.name, args.dry_run, args.level, args.missing)`\n")
    result = cli(
        name, "stray", "--name", "Ada", "--dry-run", "--level", "3", "--name", "Grace", "x"
    )
    assert (result.out, result.err, result.code) == ("('Ada', True, '3', None)\n", "", 0)


def test_the_prelude_and_its_functions_read_args(kedi_file, cli) -> None:
    """`args` is the reserved top-level namespace, filled before the prelude runs: the
    prelude and a function it defines read it (before: NameError: name 'args' ...)."""
    src = "```\ndef who():\n    return args.name\nfirst = args.name\n```\n= `(first, who())`\n"
    result = cli(kedi_file(src), "--name", "Ada")
    assert (result.out, result.err, result.code) == ("('Ada', 'Ada')\n", "", 0)


def test_args_is_empty_without_options(kedi_file, cli) -> None:
    result = cli(kedi_file("= `vars(args)`\n"))
    assert (result.out, result.code) == ("{}\n", 0)


def test_execution_error_renders_a_kedi_stack_trace_on_stderr(kedi_file, cli) -> None:
    result = cli(kedi_file(DIVIDE))
    assert result.out == ""
    assert result.code == 1
    assert result.err.startswith("Kedi stack trace:\n")
    assert '  File "prog.kedi", line 4, in <program>\n' in result.err
    assert '  File "prog.kedi", line 2, in divide' in result.err
    assert result.err.endswith("ZeroDivisionError: integer division or modulo by zero\n")
    assert "Traceback (most recent call last)" not in result.err


@pytest.mark.parametrize("flag", [[], ["--test"], ["--eval"]])
def test_user_code_raising_oserror_is_not_called_an_unreadable_file(
    kedi_file, cli, flag: list[str]
) -> None:
    """A `FileNotFoundError` of the program's own (a missing data file) was reported as
    ``cannot read prog.kedi: Kedi stack trace: ...``, blaming the `.kedi` file."""
    name = kedi_file("""
        ```
        open("missing-data.txt")
        ```
        """)
    result = cli(name, *flag)
    assert result.code == 1
    assert result.err.splitlines() == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 1, in <prelude>',
        "    ```",
        '  File "prog.kedi", line 2, in <prelude> (Python)',
        '    open("missing-data.txt")',
        "FileNotFoundError: [Errno 2] No such file or directory: 'missing-data.txt'",
    ]


def test_a_show_the_output_stream_refuses_is_located_at_its_line(kedi_file, run_cli) -> None:
    """``> show:`` of text standard output cannot encode (a lone surrogate), or a stream
    whose ``write`` raises, was ``pytest-kedi internal error: ...`` (or ``cannot read
    prog.kedi``), with no line; ``print()`` of the same text was located."""
    name = kedi_file("""
        ```
        import sys
        class Refusing:
            def write(self, text):
                raise OSError(5, "output refused")
            def flush(self):
                pass
        ```

        `sys.stdout = Refusing()`
        > show: `"hi"`
        """)
    result = run_cli(name)  # in a subprocess: the program replaces `sys.stdout`
    assert result.code == 1
    assert result.err.splitlines() == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 11, in <program>',
        '    > show: `"hi"`',
        '  File "prog.kedi", line 5, in <prelude> (Python)',
        '    raise OSError(5, "output refused")',
        "OSError: [Errno 5] output refused",
    ]


def test_a_program_that_drops_stdout_ends_without_our_traceback(kedi_file, run_cli) -> None:
    """A program setting ``sys.stdout = None`` ended in pytest-kedi's own traceback
    (``AttributeError: 'NoneType' object has no attribute 'flush'``)."""
    name = kedi_file("""
        `import sys; sys.stdout = None`
        = done
        """)
    result = run_cli(name)
    assert (result.out, result.err, result.code) == ("done\n", "", 0)


def test_parse_error_on_stderr(kedi_file, cli) -> None:
    result = cli(kedi_file("@eval: score\n"))
    assert result.out == ""
    assert result.code == 1
    assert result.err.startswith('Kedi parse error:\n\n  File "prog.kedi", line 1, column ')
    assert result.err.endswith("suite header must end with ':'\n")


def test_synthetic_notice_only_when_the_test_model_answers(kedi_file, run_cli) -> None:
    result = run_cli(kedi_file(TEMPLATE))
    assert (result.out, result.err, result.code) == ("a\n", SYNTHETIC_NOTICE + "\n", 0)
    quiet = run_cli(kedi_file("= `1`\n", "quiet.kedi"))
    assert (quiet.out, quiet.err, quiet.code) == ("1\n", "", 0)


def test_no_synthetic_notice_when_the_call_fails_before_any_answer(kedi_file, run_cli) -> None:
    """The notice was printed as a call began: an output schema that cannot be built (no
    request is sent) still said ``model: test (synthetic output)``."""
    result = run_cli(kedi_file(">> Say hi [x: `range`]\n= <x>\n"))
    assert result.code == 1
    assert "cannot build the output schema" in result.err
    assert "synthetic" not in result.err


def test_model_option_is_the_configured_default(kedi_file, cli) -> None:
    result = cli(kedi_file(TEMPLATE), "--model", "openai:gpt-4o")
    assert result.out == ""
    assert result.code == 1
    assert result.err.startswith("Kedi stack trace:\n")
    assert (
        "model 'openai:gpt-4o' is not available: UserError: Set the `OPENAI_API_KEY` "
        "environment variable" in result.err.splitlines()[-1]
    )
    assert "synthetic" not in result.err
    assert "Traceback (most recent call last)" not in result.err


def test_source_model_beats_the_model_option(kedi_file, cli) -> None:
    name = kedi_file("> model: openai/gpt-4o\n" + TEMPLATE.replace("\n    ", "\n"))
    result = cli(name, "--model", "test")
    assert result.code == 1
    assert "model 'openai:gpt-4o' is not available" in result.err


def test_environment_default_is_used_without_the_option(kedi_file, cli) -> None:
    result = cli(kedi_file(TEMPLATE), env={"KEDI_ADAPTER_MODEL": "groq:llama-3.3-70b"})
    assert result.code == 1
    assert "model 'groq:llama-3.3-70b' is not available" in result.err
    ok = cli(kedi_file(TEMPLATE), "--model", "test", env={"KEDI_ADAPTER_MODEL": "groq:x"})
    assert (ok.out, ok.code) == ("a\n", 0)


def test_help(cli) -> None:
    result = cli("--help")
    assert result.code == 0
    assert result.out.startswith("usage: python -m pytest_kedi FILE")
    assert result.err == ""


def test_misuse_exits_2(kedi_file, cli) -> None:
    name = kedi_file("= `1`\n")
    for argv in ([], ["--bogus", name], [name, "--model"], ["missing.kedi"]):
        result = cli(*argv)
        assert result.code == 2, argv
        assert result.out == ""
        assert result.err.startswith("python -m pytest_kedi: error: ")
        assert result.err.endswith(
            "usage: python -m pytest_kedi FILE [--model MODEL] [--adapter pydantic] "
            "[--test] [--eval] [program options]\n"
        )


def test_misuse_exit_status_and_stderr_end_to_end(kedi_file, run_cli) -> None:
    result = run_cli("--bogus", kedi_file("= `1`\n"))
    assert (result.out, result.code) == ("", 2)
    assert result.err == (
        "python -m pytest_kedi: error: unknown option before FILE: --bogus\n"
        "usage: python -m pytest_kedi FILE [--model MODEL] [--adapter pydantic] "
        "[--test] [--eval] [program options]\n"
    )


def test_the_console_script_names_itself(kedi_file, tmp_path) -> None:
    """Installed as ``pytest-kedi``, help and errors say ``pytest-kedi``."""
    script = shutil.which("pytest-kedi", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the pytest-kedi console script is not installed next to this interpreter")
    done = subprocess.run(
        [script, "--bogus"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert (done.stdout, done.returncode) == ("", 2)
    assert done.stderr.startswith("pytest-kedi: error: unknown option before FILE: --bogus\n")
    assert "usage: pytest-kedi FILE" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="a working directory cannot be deleted")
@pytest.mark.parametrize("flag", ["--eval", "--test"])
def test_a_deleted_working_directory_keeps_errors_located(tmp_path: Path, flag: str) -> None:
    """Run from a directory deleted meanwhile, a dataset's error read ``Kedi eval error: s:
    FileNotFoundError: [Errno 2] No such file or directory`` (the working directory asked
    for, to shorten its path): the suite's own error was lost."""
    program = tmp_path / "prog.kedi"
    program.write_text(
        "@test: t:\n  > case: c:\n    `assert 1 == 2, 'no'`\n\n"
        "@eval: s:\n  > data: rows:\n    = `1/0`\n  > metric: m(rows):\n    = `1.0`\n",
        encoding="utf-8",
    )
    gone = tmp_path / "gone"
    gone.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("KEDI_ADAPTER_MODEL", None)
    done = subprocess.run(
        [
            *["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone)],
            *[sys.executable, "-m", "pytest_kedi", str(program), flag],
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    if flag == "--test":
        assert done.stdout == "Tests:\n- t::c: FAIL | AssertionError: no\n"
    else:
        assert done.stderr.splitlines()[0] == (
            f"Kedi eval error: s::m: data-loading failed for data 'rows' at {program}:7: "
            "ZeroDivisionError: division by zero"
        )


def test_a_loop_value_whose_iteration_raises_is_the_program_s_located_error(cli, kedi_file) -> None:
    """A `> loop [x]:` value whose own `__iter__` raised was "pytest-kedi internal error:
    KeyError: 'k'" on stderr."""
    name = kedi_file(
        """
        ```
        class Items:
            def __iter__(self):
                raise KeyError("k")
        ```
        > loop [i]: `Items()`:
          `pass`
        = done
        """
    )
    result = cli(name)
    assert result.code == 1
    assert result.err.splitlines() == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 6, in <program>',
        "    > loop [i]: `Items()`:",
        '  File "prog.kedi", line 4, in <prelude> (Python)',
        '    raise KeyError("k")',
        "KeyError: 'k'",
    ]
