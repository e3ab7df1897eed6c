"""The command line of ``python -m pytest_kedi`` / ``pytest-kedi``: the options the CLI owns
(argparse), FILE, and the program's ``args`` (docs/language.md#program-runs).

Owned options are recognised anywhere on the line (``parse_known_args``); the first other
token is FILE and the tokens after it fill ``args``. Misuse raises `CliUsageError`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from pytest_kedi.constants import ENV_ADAPTER
from pytest_kedi.errors import KediUsageError
from pytest_kedi.text import printable

__all__ = [
    "PROG",
    "SCRIPT",
    "CliUsageError",
    "CommandParser",
    "Invocation",
    "build_parse_parser",
    "build_parser",
    "parse_invocation",
    "parse_program_args",
    "program_name",
]

PROG = "python -m pytest_kedi"
SCRIPT = "pytest-kedi"
USAGE = """\
%(prog)s FILE [--model MODEL] [--adapter pydantic] [--test] [--eval] [program options]
       %(prog)s parse FILE...
       %(prog)s html REPORT.json [REPORT2.json ...] -o OUT.html
       %(prog)s compare OLD.json NEW.json [--max-drop D]
       %(prog)s merge A.json B.json ... [-o ALL.json]"""
DESCRIPTION = "Run a Kedi program, or its @test: cases (--test) and @eval: suites (--eval)."
EPILOG = """\
Other options after FILE fill the program's `args`: `--key value` sets args.key to
"value", a bare `--flag` sets args.flag to True."""

SUPPORTED_ADAPTER = "pydantic"
ADAPTER_ENV = ENV_ADAPTER
_VALUE_NEEDED = {
    "--model": "--model needs a model name, e.g. --model openai:gpt-4o",
    "--adapter-model": "--adapter-model needs a model name, e.g. --adapter-model openai:gpt-4o",
    "--adapter": f"--adapter needs an adapter name: --adapter {SUPPORTED_ADAPTER}",
}


class CliUsageError(KediUsageError):
    """Command-line misuse (exit status 2)."""

    #: the usage line shown under the error: a subcommand's (``parse``), else the run's
    usage: str | None = None


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


def program_name(argv0: str | None = None) -> str:
    """How the user started us: ``pytest-kedi`` (the console script) or ``python -m
    pytest_kedi`` (anything else, including a call of `main` from Python)."""
    name = Path(sys.argv[0] if argv0 is None else argv0).name.lower()
    return SCRIPT if name.removesuffix(".exe") == SCRIPT else PROG


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser (``html``, ``compare``, ``merge``): its usage errors and help
    show control characters (an ESC in an unknown argument) as escapes, as the CLI's other
    lines do. A failed write of the help to standard output (a full disk, ``| head``) is
    the command's, as for the CLI's other output: argparse would drop it and exit 0."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message and file is not None and file is sys.stdout:  # `--help`
            file.write(printable(message))
            return
        super()._print_message(printable(message) if message else message, file)


class _Parser(argparse.ArgumentParser):
    """Misuse raises `CliUsageError` (which `main` reports, exit 2) instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise CliUsageError(message)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The options the CLI owns; everything else on the command line is FILE and the
    program's options (see `parse_invocation`)."""
    parser = _Parser(
        prog=prog,
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,  # `-h` means help only before FILE: see `parse_invocation`
        allow_abbrev=False,  # `--mod` is a program option, not `--model`
        exit_on_error=False,
    )
    add = parser.add_argument
    add(
        "--model",
        action="append",
        metavar="MODEL",
        help="default pydantic-ai model (e.g. openai:gpt-4o); a source `> model:` still "
        "applies. Default: $KEDI_ADAPTER_MODEL, else the offline `test` model.",
    )
    add("--adapter-model", action="append", metavar="MODEL", help="the same as --model")
    add(
        "--adapter",
        action="append",
        metavar="NAME",
        help=f"only `{SUPPORTED_ADAPTER}` is supported (also ${ADAPTER_ENV})",
    )
    add("--test", action="store_true", help="run the @test: cases and print `Tests:`")
    add(
        "--eval",
        action="store_true",
        help="score the @eval: suites and print `Evals:` (with --test, only the tests run, "
        "as in Kedi)",
    )
    add("--help", action="store_true", help="show this help")
    add("--version", action="store_true", help="show pytest-kedi's version")
    return parser


def _is_option(token: str) -> bool:
    return token.startswith("--") and len(token) > 2


def parse_program_args(tokens: Sequence[str]) -> dict[str, Any]:
    """Fill ``args`` from the options after FILE (docs/language.md#program-runs).

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


def _check_adapter(name: str, where: str) -> None:
    if name.strip() != SUPPORTED_ADAPTER:
        raise CliUsageError(
            f"unsupported adapter {name.strip()!r} ({where}): "
            f"pytest-kedi supports only the {SUPPORTED_ADAPTER!r} adapter"
        )


#: Kedi's environment variables the CLI checks as Kedi does (docs/language.md#program-runs).
AGENT_ENV = "KEDI_AGENT"
PARALLEL_ENV = "KEDI_PARALLEL"
_PARALLEL_WORDS = frozenset({"1", "0", "true", "false", "yes", "no", "on", "off"})


def _check_kedi_environment(adapter_flag: bool) -> None:
    """``KEDI_AGENT`` (an agent harness) together with an adapter (``KEDI_ADAPTER`` or
    ``--adapter``, its flag) is misuse, as is a ``KEDI_PARALLEL`` that is neither a boolean word
    nor a worker count (programs run sequentially whatever it says, which Kedi allows)."""
    if os.environ.get(AGENT_ENV, "").strip():
        both = (
            f"environment variable {AGENT_ENV} and --adapter are both set"
            if adapter_flag
            else f"environment variables {AGENT_ENV} and {ADAPTER_ENV} are both set"
            if os.environ.get(ADAPTER_ENV, "").strip()
            else None
        )
        if both:
            raise CliUsageError(
                f"{both}: Kedi takes an agent harness or an adapter, not both "
                f"(pytest-kedi runs the {SUPPORTED_ADAPTER!r} adapter)"
            )
    parallel = os.environ.get(PARALLEL_ENV, "").strip()
    if (
        parallel
        and parallel.lower() not in _PARALLEL_WORDS
        and not (parallel.isdecimal() and int(parallel) > 0)  # ("²" is a digit, no int)
    ):
        raise CliUsageError(
            f"environment variable {PARALLEL_ENV}: expected a boolean word (1/0, true/false, "
            f"yes/no, on/off) or a worker count, not {parallel!r}"
        )


def _values(option: str, given: list[str] | None) -> list[str]:
    """The stripped values of a repeatable option, in order; a blank one is misuse."""
    values = [value.strip() for value in given or ()]
    if any(not value for value in values):
        raise CliUsageError(_VALUE_NEEDED[option])
    return values


def parse_invocation(
    argv: Sequence[str], parser: argparse.ArgumentParser | None = None
) -> Invocation:
    """Split CLI-owned options from FILE and the program's options.

    The CLI owns ``--model``, ``--adapter``, ``--adapter-model``, ``--test``, ``--eval``,
    ``--help`` and ``--version``, anywhere on the line (``--`` included, which is dropped);
    none of them reaches ``args``. The first other token is FILE, and the tokens after it
    fill ``args``. ``--adapter-model`` means ``--model`` (the first of each wins); the two
    given with any different values are misuse, as is any adapter but ``pydantic``.
    """
    # `--` ends nothing: the CLI's options are its own anywhere (and `--` is no value)
    tokens = [token for token in argv if token != "--"]
    try:
        owned, rest = (parser or build_parser()).parse_known_args(tokens)
    except argparse.ArgumentError as exc:  # an owned option without its value
        raise CliUsageError(_VALUE_NEEDED.get(exc.argument_name or "", str(exc))) from None
    given = {
        option: values
        for option, values in (
            ("--model", _values("--model", owned.model)),
            ("--adapter-model", _values("--adapter-model", owned.adapter_model)),
        )
        if values
    }
    models = {option: values[0] for option, values in given.items()}
    conflict = None
    if len(given) == 2:  # --adapter-model means --model: every value of both must agree
        first = given["--model"][0]
        conflict = next(
            (
                f"--model {first} and {option} {value}"
                for option, values in given.items()
                for value in values
                if value != first
            ),
            None,
        )
    adapters = _values("--adapter", owned.adapter)
    for adapter in adapters:
        _check_adapter(adapter, "--adapter")
    file = rest[0] if rest else None
    if owned.help or file == "-h":
        return Invocation(file="" if file == "-h" else file or "", help=True)
    if owned.version:
        return Invocation(file=file or "", version=True)
    if conflict is not None:
        raise CliUsageError(f"conflicting models: {conflict} (--adapter-model means --model)")
    if not adapters and os.environ.get(ADAPTER_ENV, "").strip():
        _check_adapter(os.environ[ADAPTER_ENV], f"environment variable {ADAPTER_ENV}")
    _check_kedi_environment(bool(adapters))
    if file is None:
        raise CliUsageError("missing FILE")
    if file == "-":
        raise CliUsageError("FILE cannot be '-': a program is read from a file, not standard input")
    if file.startswith("-"):
        raise CliUsageError(f"unknown option before FILE: {file}")
    return Invocation(
        file=file,
        model=next(iter(models.values()), None),
        test=owned.test,
        eval=owned.eval,
        args=parse_program_args(rest[1:]),
    )


def build_parse_parser(prog: str) -> argparse.ArgumentParser:
    """The ``parse FILE...`` subcommand's parser."""
    parser = _Parser(
        prog=f"{prog} parse",
        description="Parse-check .kedi files (a directory: its .kedi programs) and print one "
        "summary line per file.",
        add_help=False,
        allow_abbrev=False,
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="a .kedi file or a directory")
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    return parser
