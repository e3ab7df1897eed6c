"""``python -m pytest_kedi``: run a Kedi program, its ``@test:`` cases or ``@eval:`` suites.

Forms (`KEDI.md` §10.1, §5.1, §5.6)::

    python -m pytest_kedi FILE [--model M] [--test] [--eval] [program options]
    python -m pytest_kedi parse FILE...
    python -m pytest_kedi html REPORT.json [REPORT2.json ...] -o OUT.html

stdout carries only program output (or the ``Tests:``/``Evals:`` blocks and parse
summaries); every diagnostic goes to stderr. Exit status: 0 success, 1 any parse,
compile, execution, test or data-loading failure, 2 command-line misuse.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from pytest_kedi import __version__
from pytest_kedi.evals.safetext import clean_text

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes
    from pytest_kedi.runtime import Program
    from pytest_kedi.runtime.errors import KediExecutionError

__all__ = ["CliUsageError", "Invocation", "main", "parse_invocation", "parse_program_args"]

PROG = "python -m pytest_kedi"
USAGE = f"""\
usage: {PROG} FILE [--model MODEL] [--adapter pydantic] [--test] [--eval] [program options]
       {PROG} parse FILE...
       {PROG} html REPORT.json [REPORT2.json ...] -o OUT.html

Run a Kedi program, or its @test: cases (--test) and @eval: suites (--eval).

options:
  --model MODEL  default pydantic-ai model (e.g. openai:gpt-4o); a source `> model:`
                 still applies. Default: $KEDI_ADAPTER_MODEL, else the offline `test` model.
  --adapter-model MODEL
                 the same as --model (Kedi's spelling)
  --adapter NAME only `pydantic` is supported (also $KEDI_ADAPTER)
  --test         run the @test: cases and print `Tests:`
  --eval         score the @eval: suites and print `Evals:` (with --test, only the
                 tests run, as in Kedi)
  --help         show this help
  --version      show pytest-kedi's version

Other options after FILE fill the program's `args`: `--key value` sets args.key to
"value", a bare `--flag` sets args.flag to True.
"""

OK, FAILED, USAGE_ERROR = 0, 1, 2
_OWNED_FLAGS = frozenset({"--test", "--eval", "--help", "--version"})
_MODEL_OPTIONS = ("--model", "--adapter-model")
SUPPORTED_ADAPTER = "pydantic"
ADAPTER_ENV = "KEDI_ADAPTER"


class CliUsageError(Exception):
    """Command-line misuse (exit status 2)."""


@dataclass
class Invocation:
    """A parsed ``python -m pytest_kedi FILE ...`` command line."""

    file: str
    model: str | None = None
    test: bool = False
    eval: bool = False
    help: bool = False
    version: bool = False
    args: dict[str, Any] = field(default_factory=dict)


def _is_option(token: str) -> bool:
    return token.startswith("--") and len(token) > 2


def parse_program_args(tokens: Sequence[str]) -> dict[str, Any]:
    """Fill ``args`` from the options after FILE (§10.1).

    ``--key value`` -> ``"value"``; a bare ``--flag`` (next token absent or another
    option) -> ``True``; ``--key=value`` -> ``"value"``; hyphens become underscores;
    the first occurrence wins; non-option tokens are ignored.
    """
    values: dict[str, Any] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not _is_option(token):
            continue
        key, eq, inline = token[2:].partition("=")
        value: Any
        if eq:
            value = inline
        elif index < len(tokens) and not _is_option(tokens[index]):
            value = tokens[index]
            index += 1
        else:
            value = True
        name = key.replace("-", "_")
        if name and name not in values:
            values[name] = value
    return values


def _option_value(token: str, argv: Sequence[str], index: int) -> tuple[str | None, int]:
    """The value of ``--opt VALUE`` / ``--opt=VALUE`` at ``argv[index - 1]``, and the next index."""
    if "=" in token:
        return token.partition("=")[2], index
    if index >= len(argv) or _is_option(argv[index]):
        return None, index
    return argv[index], index + 1


def _check_adapter(name: str, where: str) -> None:
    if name.strip() != SUPPORTED_ADAPTER:
        raise CliUsageError(
            f"unsupported adapter {name.strip()!r} ({where}): "
            f"pytest-kedi supports only the {SUPPORTED_ADAPTER!r} adapter"
        )


def parse_invocation(argv: Sequence[str]) -> Invocation:
    """Split CLI-owned options from program options.

    The CLI owns ``--model``, ``--adapter``, ``--adapter-model``, ``--test``, ``--eval``,
    ``--help`` and ``--version``; none of them reaches ``args``. ``--adapter-model`` means
    ``--model``; the two with different values are misuse, as is any adapter but
    ``pydantic``.
    """
    file: str | None = None
    models: dict[str, str] = {}
    adapter: str | None = None
    flags: set[str] = set()
    rest: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        option = token.partition("=")[0]
        if token in _OWNED_FLAGS or (token == "-h" and file is None):
            flags.add("--help" if token == "-h" else token)
        elif option in _MODEL_OPTIONS:
            value, index = _option_value(token, argv, index)
            if value is None or not value.strip():
                raise CliUsageError(f"{option} needs a model name, e.g. {option} openai:gpt-4o")
            models.setdefault(option, value.strip())
        elif option == "--adapter":
            value, index = _option_value(token, argv, index)
            if value is None or not value.strip():
                raise CliUsageError(
                    f"--adapter needs an adapter name: --adapter {SUPPORTED_ADAPTER}"
                )
            _check_adapter(value, "--adapter")
            adapter = adapter or value.strip()
        elif file is None:
            if token.startswith("-"):
                raise CliUsageError(f"unknown option before FILE: {token}")
            file = token
        else:
            rest.append(token)
    if "--help" in flags:
        return Invocation(file=file or "", help=True)
    if "--version" in flags:
        return Invocation(file=file or "", version=True)
    if len(set(models.values())) > 1:
        given = " and ".join(f"{option} {value}" for option, value in models.items())
        raise CliUsageError(f"conflicting models: {given} (--adapter-model means --model)")
    if adapter is None and os.environ.get(ADAPTER_ENV, "").strip():
        _check_adapter(os.environ[ADAPTER_ENV], f"environment variable {ADAPTER_ENV}")
    if file is None:
        raise CliUsageError("missing FILE")
    return Invocation(
        file=file,
        model=next(iter(models.values()), None),
        test="--test" in flags,
        eval="--eval" in flags,
        args=parse_program_args(rest),
    )


# --------------------------------------------------------------------------- output


class _Console:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    # Everything the CLI itself prints passes `clean_text` (surrogates escaped, credential
    # values redacted); what the program prints with `print()` is the program's own output.

    def print(self, text: str) -> None:
        self.out.write(clean_text(text) + "\n")

    def error(self, text: str) -> None:
        self.out.flush()
        self.err.write(clean_text(text.rstrip("\n")) + "\n")
        self.err.flush()


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
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _is_kedi_error(exc: BaseException) -> bool:
    """Parse, execution and model-boundary errors (reported as Kedi diagnostics)."""
    from pytest_kedi.lang import KediParseError
    from pytest_kedi.runtime.errors import KediExecutionError

    if isinstance(exc, KediParseError | KediExecutionError):
        return True
    model = sys.modules.get("pytest_kedi.runtime.model")  # never import pydantic-ai here
    return model is not None and isinstance(exc, model.ModelError | model.UnsupportedFeature)


# --------------------------------------------------------------------------- commands


def _expand_paths(paths: Sequence[str], console: _Console) -> tuple[list[str], bool]:
    """Files as given; directories expand to their ``.kedi`` programs, sorted
    (``*.cache.kedi`` and ``package.kedi`` are not programs and are left out).
    The flag is False when a directory held no program (reported on stderr)."""
    out: list[str] = []
    complete = True
    for name in paths:
        if os.path.isdir(name):
            found = [
                os.path.join(root, file)
                for root, _dirs, names in os.walk(name)
                for file in names
                if file.endswith(".kedi")
                and not file.endswith(".cache.kedi")
                and file != "package.kedi"
            ]
            if not found:
                console.error(f"{name}: no .kedi files in this directory")
                complete = False
            out.extend(sorted(found))
        else:
            out.append(name)
    return out, complete


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


def _user_exit(exc: BaseException) -> SystemExit | None:
    """The `SystemExit` user code raised, when that is what ``exc`` wraps."""
    from pytest_kedi.runtime.errors import KediExecutionError

    while isinstance(exc, KediExecutionError) and exc.original is not None:
        exc = exc.original
    return exc if isinstance(exc, SystemExit) else None


def _exit_status(stop: SystemExit, console: _Console) -> int:
    """The status a Python script ends with on ``stop``: its int code, 0 for ``None``,
    else 1 after printing the code to stderr."""
    code = stop.code
    if code is None:
        return OK
    if isinstance(code, int):
        return code
    console.error(str(code))
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
        console.print(str(result))
    return OK


def _failure_text(exc: KediExecutionError) -> str:
    """``<ExcType>: <msg>`` for a failed case (just ``<ExcType>`` when there is no message)."""
    from pytest_kedi.runtime.errors import KediExecutionError

    original = exc.original
    if original is not None and not isinstance(original, KediExecutionError):
        if isinstance(original, KeyError) and original.args:
            text = repr(original.args[0])
        else:
            text = " ".join(str(original).split())
    else:
        text = exc.message
    return f"{exc.kind_name}: {text}" if text else exc.kind_name


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
    for suite in program.module.test_suites:
        for case in suite.cases:
            line, passed = _case_line(suite, case, program)
            console.print(line)
            if not passed:
                status = FAILED
    return status


def _run_evals(invocation: Invocation, console: _Console) -> int:
    from pytest_kedi.evals import EvalOptions, format_suite_line, run_suite

    program = _load(invocation, "validate")
    console.print("Evals:")
    status = OK
    for suite in program.module.eval_suites:
        try:
            result = run_suite(program, suite, EvalOptions())
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
    return status


def _run(invocation: Invocation, console: _Console) -> int:
    # KEDI.md §5.1: given with --eval, --test runs and returns first (evals do not run).
    if invocation.test:
        return _run_tests(invocation, console)
    if invocation.eval:
        return _run_evals(invocation, console)
    return _run_program(invocation, console)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    console = _Console(sys.stdout, sys.stderr)
    try:
        if tokens[:1] == ["parse"]:
            if any(token in ("--help", "-h") for token in tokens[1:]):
                console.print(USAGE.rstrip("\n"))
                return OK
            return _parse_command(tokens[1:], console)
        if tokens[:1] == ["html"]:
            from pytest_kedi.viewer.command import html_command

            return html_command(tokens[1:], prog=PROG, out=console.out, err=console.err)
        invocation = parse_invocation(tokens)
        if invocation.help:
            console.print(USAGE.rstrip("\n"))
            return OK
        if invocation.version:
            console.print(f"pytest-kedi {__version__}")
            return OK
        if Path(invocation.file).is_dir():
            raise CliUsageError(
                f"{invocation.file} is a directory, not a .kedi file "
                f"(`{PROG} parse` accepts directories)"
            )
        if not Path(invocation.file).is_file():
            raise CliUsageError(f"no such file: {invocation.file}")
        try:
            return _run(invocation, console)
        except OSError as exc:
            console.error(f"cannot read {exc.filename or invocation.file}: {exc.strerror or exc}")
            return FAILED
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            # A bug of ours is still one line on stderr, never a traceback; so is a pytest
            # outcome (pytest.skip, ...) raised by the program, which means nothing here.
            ours = isinstance(exc, Exception) and not _is_kedi_error(exc)
            console.error(("pytest-kedi internal error: " if ours else "") + _render_error(exc))
            return FAILED
    except CliUsageError as exc:
        console.error(f"{PROG}: error: {exc}\n{USAGE.splitlines()[0]}")
        return USAGE_ERROR
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    finally:
        sys.stdout.flush()
