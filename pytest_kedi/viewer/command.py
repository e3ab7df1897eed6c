"""``pytest-kedi html REPORT.json [REPORT2.json ...] -o OUT.html``: the HTML report from saved
JSON reports (oldest first; several reports add the across-runs comparison)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from pytest_kedi.atomicwrite import unsafe_output
from pytest_kedi.cliargs import CommandParser
from pytest_kedi.evals.results import write_text_atomic
from pytest_kedi.evals.safetext import clean_text
from pytest_kedi.text import printable
from pytest_kedi.viewer.html import render_html
from pytest_kedi.viewer.model import ReportError, read_report

__all__ = ["html_command"]

USAGE_ERROR = 2


def _output(text: str) -> str:
    """``-o``'s path: a blank one is misuse, as pytest's ``--kedi-report ''`` is."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file path, got {text!r}")
    return text


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog=f"{prog} html",
        description="Build one self-contained HTML page from pytest-kedi JSON reports "
        "(--kedi-report files). Give several reports oldest first to compare runs.",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument("-o", "--output", type=_output, required=True, metavar="OUT.html")
    return parser


def _line(stream: TextIO, text: str) -> None:
    """One line of ours, its control characters (a path's ESC) shown as escapes and
    credentials redacted, as the CLI's other lines."""
    stream.write(printable(clean_text(text)) + "\n")


def html_command(
    argv: Sequence[str], *, prog: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Exit status 0 written; 2 on command-line misuse or an unreadable report or output
    (as ``compare`` and ``merge``)."""
    try:
        args = _parser(prog).parse_args(list(argv))
    except SystemExit as exc:  # argparse printed usage or help
        return exc.code if isinstance(exc.code, int) else 2
    refused = unsafe_output(args.output, args.reports)
    if refused is not None:
        _line(err, f"{prog} html: error: -o {args.output}: {refused}")
        return USAGE_ERROR
    try:
        runs = [read_report(path) for path in args.reports]
        write_text_atomic(args.output, render_html(runs))
    except ReportError as exc:
        _line(err, f"{prog} html: error: {exc}")
        return USAGE_ERROR
    except OSError as exc:
        _line(err, f"{prog} html: error: cannot write {args.output}: {exc.strerror or exc}")
        return USAGE_ERROR
    _line(out, f"HTML report written: {args.output}")
    return 0
