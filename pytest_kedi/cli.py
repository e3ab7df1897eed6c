"""``python -m pytest_kedi`` (or ``pytest-kedi``): run a Kedi program, its ``@test:`` cases
or ``@eval:`` suites (docs/language.md#program-runs).

Forms::

    python -m pytest_kedi FILE [--model M] [--test] [--eval] [program options]
    python -m pytest_kedi parse FILE...
    python -m pytest_kedi html REPORT.json [REPORT2.json ...] -o OUT.html
    python -m pytest_kedi compare OLD.json NEW.json [--max-drop D]
    python -m pytest_kedi merge A.json B.json ... [-o ALL.json]

stdout carries only program output (or the ``Tests:``/``Evals:`` blocks and parse
summaries); every diagnostic goes to stderr. Exit status: 0 success, 1 any parse,
compile, execution, test or data-loading failure, 2 command-line misuse.
"""

from __future__ import annotations

import argparse
import errno
import os
import stat
import sys
from collections.abc import Sequence

from pytest_kedi import __version__
from pytest_kedi.cliargs import (
    PROG,
    CliUsageError,
    Invocation,
    build_parse_parser,
    build_parser,
    parse_invocation,
    parse_program_args,
    program_name,
)
from pytest_kedi.cliout import (
    FAILED,
    OK,
    USAGE_ERROR,
    Console,
    OutputError,
    drop_stdout,
    finish,
    flush,
    release_detached,
    render_error,
    stdout_reader_gone,
)
from pytest_kedi.clirun import original_error, reraise_interrupt, run
from pytest_kedi.errors import KediError

__all__ = [
    "PROG",
    "CliUsageError",
    "Invocation",
    "build_parser",
    "main",
    "parse_invocation",
    "parse_program_args",
    "program_name",
]


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """Entry point; returns the exit status. ``prog`` names us in help and errors
    (default: `program_name`)."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    prog = prog or program_name()
    parser = build_parser(prog)
    for name in ("stdout", "stderr"):  # started with it closed (`>&-`, `2>&-`): as Python's
        if getattr(sys, name) is None:  # print() does, write nowhere (not to the other stream)
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 -- for the process
    console = Console(sys.stdout, sys.stderr)
    try:
        status = _dispatch(tokens, prog, parser, console)
        finish(console.out)  # what is still buffered: a full disk is met here too
        return status
    except OutputError as exc:  # `> full-disk/out.txt`: the output is incomplete
        console.error(f"{prog}: error: cannot write to standard output: {exc}")
        return FAILED
    except CliUsageError as exc:
        usage = (exc.usage or parser.format_usage()).splitlines()[0]
        console.error(f"{prog}: error: {exc}\n{usage}")
        return USAGE_ERROR
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    except BrokenPipeError:  # `... | head` stopped reading: stop quietly, as Unix tools do
        drop_stdout()
        return FAILED
    finally:
        flush(sys.stdout)
        release_detached()


_COMMANDS = frozenset({"parse", "html", "compare", "merge"})


def _dispatch(
    tokens: list[str], prog: str, parser: argparse.ArgumentParser, console: Console
) -> int:
    """Run the command ``tokens`` name; `OutputError`, `CliUsageError`, `BrokenPipeError`
    and `KeyboardInterrupt` are `main`'s."""
    if tokens[:1] == ["parse"]:
        files_parser = build_parse_parser(prog)
        try:
            command = files_parser.parse_args(tokens[1:])
            if command.help:
                console.print(files_parser.format_help().rstrip("\n"))
                return OK
            from pytest_kedi.cliparse import parse_command

            return parse_command(command.files, console)
        except CliUsageError as exc:  # shown with `parse`'s usage line, not the run's
            exc.usage = files_parser.format_usage()
            raise
    if tokens[:1] in (["html"], ["compare"], ["merge"]):
        return _report_command(tokens, prog, console)
    invocation = parse_invocation(tokens, parser)
    if invocation.help:
        console.print(parser.format_help().rstrip("\n"))
        return OK
    if invocation.version:
        console.print(f"pytest-kedi {__version__}")
        return OK
    try:
        mode = os.stat(invocation.file).st_mode
    except OSError as exc:  # missing; or unreadable, a name too long, a link loop
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            hint = (
                f" (a command comes before any option: `{prog} {invocation.file} ...`)"
                if invocation.file in _COMMANDS
                else ""
            )
            raise CliUsageError(f"no such file: {invocation.file}{hint}") from None
        console.error(f"cannot read {invocation.file}: {exc.strerror or exc}")
        return FAILED
    if stat.S_ISDIR(mode):
        raise CliUsageError(
            f"{invocation.file} is a directory, not a .kedi file "
            f"(`{prog} parse` accepts directories)"
        )
    if not stat.S_ISREG(mode):  # a named pipe, socket or device
        raise CliUsageError(f"{invocation.file} is not a regular file")
    return _run_file(invocation, console)


def _report_command(tokens: list[str], prog: str, console: Console) -> int:
    """``html``, ``compare`` or ``merge``: they read and write their files themselves, so an
    `OSError` they let out is their standard output's (or error's) write."""
    if tokens[0] == "html":
        from pytest_kedi.viewer.command import html_command as command
    elif tokens[0] == "compare":
        from pytest_kedi.reports.command import compare_command as command
    else:
        from pytest_kedi.reports.command import merge_command as command
    try:
        return command(tokens[1:], prog=prog, out=console.out, err=console.err)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc) from exc


def _run_file(invocation: Invocation, console: Console) -> int:
    try:
        return run(invocation, console)
    except KediError as exc:  # user code's OSError (a missing data file) is one too
        if isinstance(original_error(exc), BrokenPipeError) and stdout_reader_gone():
            raise BrokenPipeError from None  # the program's print met `| head`'s exit
        console.error(render_error(exc))
        return FAILED
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):  # our output's reader left: not the file
            raise
        console.error(f"cannot read {exc.filename or invocation.file}: {exc.strerror or exc}")
        return FAILED
    except (KeyboardInterrupt, OutputError):
        raise
    except BaseException as exc:
        reraise_interrupt(exc)  # an exception group carrying a KeyboardInterrupt
        # A bug of ours is still one line on stderr, never a traceback; a pytest outcome
        # (pytest.skip, ...) raised by the program means nothing here: it is the
        # program's error, shown with its Kedi stack trace as any other.
        ours = isinstance(exc, Exception) and not isinstance(exc, KediError)
        if not ours and not isinstance(exc, KediError):
            from pytest_kedi.runtime.pyerrors import python_error

            exc = python_error(exc)
        console.error(("pytest-kedi internal error: " if ours else "") + render_error(exc))
        return FAILED
