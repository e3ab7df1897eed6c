"""``python -m pytest_kedi``: run a Kedi program, its ``@test:`` cases or ``@eval:`` suites.

Forms (`KEDI.md` §10.1, §5.1, §5.6)::

    python -m pytest_kedi FILE [--model M] [--test] [--eval] [program options]
    python -m pytest_kedi parse FILE...

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

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes
    from pytest_kedi.runtime import Program
    from pytest_kedi.runtime.errors import KediExecutionError

__all__ = ["CliUsageError", "Invocation", "main", "parse_invocation", "parse_program_args"]

PROG = "python -m pytest_kedi"
USAGE = f"""\
usage: {PROG} FILE [--model MODEL] [--test] [--eval] [program options]
       {PROG} parse FILE...

Run a Kedi program, or its @test: cases (--test) and @eval: suites (--eval).

options:
  --model MODEL  default pydantic-ai model (e.g. openai:gpt-4o); a source `> model:`
                 still applies. Default: $KEDI_ADAPTER_MODEL, else the offline `test` model.
  --test         run the @test: cases and print `Tests:`
  --eval         score the @eval: suites and print `Evals:` (with --test, only the
                 tests run, as in Kedi)
  --help         show this help

Other options after FILE fill the program's `args`: `--key value` sets args.key to
"value", a bare `--flag` sets args.flag to True.
"""

OK, FAILED, USAGE_ERROR = 0, 1, 2
_OWNED_FLAGS = frozenset({"--test", "--eval", "--help"})


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


def parse_invocation(argv: Sequence[str]) -> Invocation:
    """Split CLI-owned options (``--model --test --eval --help``) from program options."""
    file: str | None = None
    model: str | None = None
    flags: set[str] = set()
    rest: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if token in _OWNED_FLAGS or (token == "-h" and file is None):
            flags.add("--help" if token == "-h" else token)
        elif token == "--model" or token.startswith("--model="):
            if token == "--model":
                if index >= len(argv) or _is_option(argv[index]):
                    raise CliUsageError("--model needs a model name, e.g. --model openai:gpt-4o")
                value = argv[index]
                index += 1
            else:
                value = token.partition("=")[2]
            if not value.strip():
                raise CliUsageError("--model needs a model name, e.g. --model openai:gpt-4o")
            model = model or value
        elif file is None:
            if token.startswith("-"):
                raise CliUsageError(f"unknown option before FILE: {token}")
            file = token
        else:
            rest.append(token)
    if "--help" in flags:
        return Invocation(file=file or "", help=True)
    if file is None:
        raise CliUsageError("missing FILE")
    return Invocation(
        file=file,
        model=model,
        test="--test" in flags,
        eval="--eval" in flags,
        args=parse_program_args(rest),
    )


# --------------------------------------------------------------------------- output


class _Console:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    def print(self, text: str) -> None:
        self.out.write(text + "\n")

    def error(self, text: str) -> None:
        self.out.flush()
        self.err.write(text.rstrip("\n") + "\n")
        self.err.flush()


def _render_error(exc: BaseException) -> str:
    """A located Kedi rendering when the error has one, else ``Type: message``."""
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


def _expand_paths(paths: Sequence[str]) -> list[str]:
    """Files as given; directories expand to their ``.kedi`` programs, sorted
    (``*.cache.kedi`` and ``package.kedi`` are not programs and are left out)."""
    out: list[str] = []
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
            out.extend(sorted(found))
        else:
            out.append(name)
    return out


def _parse_command(files: Sequence[str], console: _Console) -> int:
    from pytest_kedi.lang import KediParseError, check_python, parse_file

    if not files:
        raise CliUsageError("parse needs at least one FILE")
    status = OK
    for name in _expand_paths(files):
        try:
            module = check_python(parse_file(name))
        except KediParseError as exc:
            console.error(exc.render())
            status = FAILED
            continue
        except OSError as exc:
            console.error(f"{name}: cannot read file: {exc.strerror or exc}")
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


def _run_program(invocation: Invocation, console: _Console) -> int:
    program = _load(invocation, "run")
    result = program.run()
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
        result = run_suite(program, suite, EvalOptions())
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
        invocation = parse_invocation(tokens)
        if invocation.help:
            console.print(USAGE.rstrip("\n"))
            return OK
        if not Path(invocation.file).is_file():
            raise CliUsageError(f"no such file: {invocation.file}")
        try:
            return _run(invocation, console)
        except Exception as exc:
            # A bug of ours is still one line on stderr, never a traceback.
            prefix = "" if _is_kedi_error(exc) else "pytest-kedi internal error: "
            console.error(prefix + _render_error(exc))
            return FAILED
    except CliUsageError as exc:
        console.error(f"{PROG}: error: {exc}\n{USAGE.splitlines()[0]}")
        return USAGE_ERROR
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    finally:
        sys.stdout.flush()
