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

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TextIO

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
from pytest_kedi.errors import KediError
from pytest_kedi.evals.safetext import clean_text
from pytest_kedi.text import is_kedi_program, message_text, printable

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes
    from pytest_kedi.runtime import Program
    from pytest_kedi.runtime.errors import KediExecutionError

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

OK, FAILED, USAGE_ERROR = 0, 1, 2


# --------------------------------------------------------------------------- output


def _lenient(stream: TextIO) -> TextIO:
    """``stream``, writing what its encoding cannot hold (``ü`` on an ASCII or cp1252
    console) as escapes (``\\xfc``), as pytest's terminal writer does, instead of failing."""
    if getattr(stream, "errors", None) == "strict":
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]
    return stream


class _Console:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = _lenient(out)
        self.err = _lenient(err)

    # Everything the CLI itself prints passes `clean_text` (surrogates escaped, credential
    # values redacted); what the program prints with `print()` is the program's own output.
    # Its own lines and diagnostics also show control characters as escapes (`printable`),
    # as pytest's summary does; the program's result and `sys.exit("text")` are as they are.

    def print(self, text: str) -> None:
        self.out.write(printable(clean_text(text)) + "\n")

    def result(self, text: str) -> None:
        self.out.write(clean_text(text) + "\n")

    def error(self, text: str, *, raw: bool = False) -> None:
        _flush(self.out)
        text = clean_text(text.rstrip("\n"))
        self.err.write((text if raw else printable(text)) + "\n")
        self.err.flush()


def _flush(stream: object) -> None:
    """Flush ``stream``, which the program may have closed or replaced (even with ``None``),
    as Python leaves such a stream at exit: no traceback of ours."""
    try:
        stream.flush()  # type: ignore[attr-defined]
    except BrokenPipeError:
        _drop_stdout()
    except Exception:
        pass


def _stdout_reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has gone (``| head`` stopped reading):
    a `BrokenPipeError` the program's own ``print`` met then ends the run quietly."""
    try:
        fd = sys.__stdout__.fileno()  # type: ignore[union-attr]
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        import select

        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poller.poll(0))
    except Exception:  # no poll (Windows), no descriptor: not known to be gone
        return False


def _drop_stdout() -> None:
    """Point standard output at the null device once its reader has gone (``| head``), so
    Python's own flush at exit does not fail again."""
    with contextlib.suppress(Exception):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _render_error(exc: BaseException) -> str:
    """A located Kedi rendering when the error has one, else ``Type: message``."""
    if isinstance(exc.__cause__, OSError) and not getattr(exc, "frames", True):
        return str(getattr(exc, "message", exc))  # the file itself: "cannot read F: reason"
    from pytest_kedi.lang.diagnostics import KediParseError, debug_from_env

    if isinstance(exc, KediParseError):  # KEDI_DEBUG=1: an internal error's traceback too
        return exc.render(debug=debug_from_env())
    render = getattr(exc, "render", None)
    if callable(render):
        return str(render())
    return f"{type(exc).__name__}: {message_text(exc)}"


def _is_kedi_error(exc: BaseException) -> bool:
    """Parse, execution and model-boundary errors (reported as Kedi diagnostics)."""
    return isinstance(exc, KediError)


# --------------------------------------------------------------------------- commands


def _expand_paths(paths: Sequence[str], console: _Console) -> tuple[list[str], bool]:
    """Files as given; directories expand to their ``.kedi`` programs, sorted
    (``*.cache.kedi`` and ``package.kedi`` are not programs and are left out).
    The flag is False when a directory held no program (reported on stderr)."""
    out: list[str] = []
    complete = True
    for name in paths:
        if os.path.isdir(name):
            unreadable: list[OSError] = []  # a directory that cannot be listed is not empty
            found = [
                path
                for root, _dirs, names in os.walk(name, onerror=unreadable.append)
                for file in names
                if is_kedi_program(file) and not _special(path := os.path.join(root, file))
            ]
            for error in unreadable:
                console.error(f"cannot read {error.filename or name}: {error.strerror or error}")
                complete = False
            if not found and not unreadable:
                console.error(f"{name}: no .kedi files in this directory")
                complete = False
            out.extend(sorted(found))
        else:
            out.append(name)
    return out, complete


def _special(path: str) -> bool:
    """Whether ``path`` is a named pipe, socket or device: reading one may wait forever, so a
    directory's walk leaves it out, as pytest's collection does."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # a dangling link: reported as unreadable when read
        return False


def _parse_command(files: Sequence[str], console: _Console) -> int:
    from pytest_kedi.lang import KediParseError, check_python, parse_file

    if not files:
        raise CliUsageError("parse needs at least one FILE")
    expanded, complete = _expand_paths(files, console)
    status = OK if complete else FAILED
    for name in expanded:
        try:
            module = check_python(parse_file(name))
        except KediParseError as exc:
            console.error(_render_error(exc))
            status = FAILED
            continue
        except OSError as exc:
            console.error(f"cannot read {name}: {exc.strerror or exc}")
            status = FAILED
            continue
        cases = sum(len(suite.cases) for suite in module.test_suites)
        console.print(
            f"{name}: {len(module.procedures)} procedures, "
            f"{len(module.eval_suites)} eval suites, {cases} test cases"
        )
    return status


def _load(invocation: Invocation, mode: Literal["run", "validate"]) -> Program:
    from pytest_kedi.runtime import load

    program = load(invocation.file, mode=mode, default_model=invocation.model)
    program.args = dict(invocation.args)
    return program


def _original(exc: BaseException) -> BaseException:
    """What user code raised, when ``exc`` wraps it."""
    from pytest_kedi.runtime.errors import KediExecutionError

    while isinstance(exc, KediExecutionError) and exc.original is not None:
        exc = exc.original
    return exc


def _user_exit(exc: BaseException) -> SystemExit | None:
    """The `SystemExit` user code raised, when that is what ``exc`` wraps."""
    exc = _original(exc)
    return exc if isinstance(exc, SystemExit) else None


def _exit_status(stop: SystemExit, console: _Console) -> int:
    """The status a Python script ends with on ``stop``: its int code, 0 for ``None``,
    else 1 after printing the code to stderr."""
    code = stop.code
    if code is None:
        return OK
    if isinstance(code, int):
        return code
    console.error(str(code), raw=True)
    return FAILED


def _run_program(invocation: Invocation, console: _Console) -> int:
    from pytest_kedi.runtime.errors import KediExecutionError

    try:
        program = _load(invocation, "run")
        result = program.run()
    except KediExecutionError as exc:
        # A plain run ends like a Python script: sys.exit(n) in user code exits with n.
        stop = _user_exit(exc)
        if stop is None:
            raise
        return _exit_status(stop, console)
    if program.returned:
        from pytest_kedi.runtime.pyerrors import python_error
        from pytest_kedi.runtime.usererrors import user_error

        try:
            text = str(result)
        except BaseException as exc:  # the value's own __str__ failed: located in its code
            if isinstance(exc, SystemExit):  # as `print(result)` in a script would end
                return _exit_status(exc, console)
            if not user_error(exc):
                raise
            console.error(_render_error(python_error(exc)))
            return FAILED
        console.result(text)
    return OK


def _failure_text(exc: KediExecutionError) -> str:
    """``<ExcType>: <msg>`` for a failed case (``<ExcType>: `` when there is no message),
    the message as written, as a row error's (docs/language.md#scoring)."""
    from pytest_kedi.runtime.errors import KediExecutionError

    original = exc.original
    if original is not None and not isinstance(original, KediExecutionError):
        text = message_text(original)
    else:
        text = exc.message
    return f"{exc.kind_name}: {text}"


def _case_line(suite: nodes.TestSuite, case: nodes.Case, program: Program) -> tuple[str, bool]:
    from pytest_kedi.runtime.errors import KediExecutionError

    label = f"- {suite.name}::{case.name}"
    try:
        program.run_case(suite, case)
    except KediExecutionError as exc:
        return f"{label}: FAIL | {_failure_text(exc)}", False
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a pytest outcome (pytest.skip, ...) fails the case here
        return f"{label}: FAIL | {_render_error(exc)}", False
    return f"{label}: OK", True


def _run_tests(invocation: Invocation, console: _Console) -> int:
    program = _load(invocation, "validate")
    console.print("Tests:")
    status = OK
    from pytest_kedi.lang import KediParseError

    try:  # the file's own suites, then those its `> auto:` cache generated (§4.5)
        generated = program.generated_test_suites()
    except KediParseError as exc:
        console.error(_render_error(exc))
        generated, status = (), FAILED
    for suite in (*program.module.test_suites, *generated):
        for case in suite.cases:
            line, passed = _case_line(suite, case, program)
            console.print(line)
            if not passed:
                status = FAILED
    return status


def _run_evals(invocation: Invocation, console: _Console) -> int:
    from pytest_kedi.evals import EvalOptions, format_suite_line, run_suite
    from pytest_kedi.runtime.errors import KediExecutionError

    program = _load(invocation, "validate")
    console.print("Evals:")
    status = OK
    options = EvalOptions(max_rows=None)  # no row limit: pytest's --kedi-max-rows is pytest's
    for suite in program.module.eval_suites:
        try:
            result = run_suite(program, suite, options)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a pytest outcome (pytest.skip in a dataset, ...)
            status = FAILED
            console.error(f"Kedi eval error: {suite.name}: {_render_error(exc)}")
            continue
        if result.error is None:
            console.print(format_suite_line(result))
            continue
        status = FAILED
        where = f"{result.suite}::{result.metric}" if result.metric else result.suite
        console.error(f"Kedi eval error: {where}: {result.error}")
        if isinstance(result.exception, KediExecutionError):  # its stack trace, as pytest's
            console.error(result.exception.render())
    return status


def _run(invocation: Invocation, console: _Console) -> int:
    # docs/language.md#test-suites: given with --eval, --test runs and returns first (evals do not
    # run).
    if invocation.test:
        return _run_tests(invocation, console)
    if invocation.eval:
        return _run_evals(invocation, console)
    return _run_program(invocation, console)


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """Entry point; returns the exit status. ``prog`` names us in help and errors
    (default: `program_name`)."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    prog = prog or program_name()
    parser = build_parser(prog)
    for name in ("stdout", "stderr"):  # started with it closed (`>&-`, `2>&-`): as Python's
        if getattr(sys, name) is None:  # print() does, write nowhere (not to the other stream)
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 -- for the process
    console = _Console(sys.stdout, sys.stderr)
    try:
        if tokens[:1] == ["parse"]:
            files_parser = build_parse_parser(prog)
            command = files_parser.parse_args(tokens[1:])
            if command.help:
                console.print(files_parser.format_help().rstrip("\n"))
                return OK
            return _parse_command(command.files, console)
        if tokens[:1] == ["html"]:
            from pytest_kedi.viewer.command import html_command

            return html_command(tokens[1:], prog=prog, out=console.out, err=console.err)
        if tokens[:1] == ["compare"]:
            from pytest_kedi.reports.command import compare_command

            return compare_command(tokens[1:], prog=prog, out=console.out, err=console.err)
        if tokens[:1] == ["merge"]:
            from pytest_kedi.reports.command import merge_command

            return merge_command(tokens[1:], prog=prog, out=console.out, err=console.err)
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
                raise CliUsageError(f"no such file: {invocation.file}") from None
            console.error(f"cannot read {invocation.file}: {exc.strerror or exc}")
            return FAILED
        if stat.S_ISDIR(mode):
            raise CliUsageError(
                f"{invocation.file} is a directory, not a .kedi file "
                f"(`{prog} parse` accepts directories)"
            )
        if not stat.S_ISREG(mode):  # a named pipe, socket or device
            raise CliUsageError(f"{invocation.file} is not a regular file")
        try:
            return _run(invocation, console)
        except KediError as exc:  # user code's OSError (a missing data file) is one too
            if isinstance(_original(exc), BrokenPipeError) and _stdout_reader_gone():
                raise BrokenPipeError from None  # the program's print met `| head`'s exit
            console.error(_render_error(exc))
            return FAILED
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):  # our output's reader left: not the file
                raise
            console.error(f"cannot read {exc.filename or invocation.file}: {exc.strerror or exc}")
            return FAILED
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            # A bug of ours is still one line on stderr, never a traceback; a pytest outcome
            # (pytest.skip, ...) raised by the program means nothing here: it is the
            # program's error, shown with its Kedi stack trace as any other.
            ours = isinstance(exc, Exception) and not _is_kedi_error(exc)
            if not ours and not _is_kedi_error(exc):
                from pytest_kedi.runtime.pyerrors import python_error

                exc = python_error(exc)
            console.error(("pytest-kedi internal error: " if ours else "") + _render_error(exc))
            return FAILED
    except CliUsageError as exc:
        console.error(f"{prog}: error: {exc}\n{parser.format_usage().splitlines()[0]}")
        return USAGE_ERROR
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    except BrokenPipeError:  # `... | head` stopped reading: stop quietly, as Unix tools do
        _drop_stdout()
        return FAILED
    finally:
        _flush(sys.stdout)
