"""``pytest-kedi compare OLD.json NEW.json [--max-drop D]`` and
``pytest-kedi merge A.json B.json ... [-o ALL.json]``: the baseline comparison and the
sharded-run verdict outside pytest.

Exit status: compare 0, or 1 when a suite fell by more than ``--max-drop``; merge 0 or 1
(or another pytest exit status a shard recorded) like one pytest run of every shard; both
2 on command-line misuse or an unreadable, unmergeable or unwritable report.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from pytest_kedi.atomicwrite import reason, same_file, unsafe_output, write_text_atomic
from pytest_kedi.cliargs import CommandParser
from pytest_kedi.evals.safetext import clean_text
from pytest_kedi.plugin.records import RunRecord
from pytest_kedi.plugin.summary import (
    case_line,
    flaky_line,
    models_line,
    rerun_lines,
    suite_line,
    usage_line,
    xfail_note,
)
from pytest_kedi.reports.compare import compare_runs, comparison_lines, drop_reason
from pytest_kedi.reports.load import ReportReadError, read_run
from pytest_kedi.reports.merge import Merged, MergeError, Shard, merge
from pytest_kedi.text import printable

__all__ = ["compare_command", "merge_command", "merged_lines"]

USAGE_ERROR = 2
_FEEDBACK_LIMIT = 200


def _drop(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a score drop from 0 to 1, got {text!r}"
        ) from None
    if not 0 <= number <= 1:
        raise argparse.ArgumentTypeError(f"expected a score drop from 0 to 1, got {text!r}")
    return number


def _output(text: str) -> str:
    """``-o``'s path: a blank one is misuse (``merge`` wrote no report without a word), as
    pytest's ``--kedi-report ''`` is."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file path, got {text!r}")
    return text


def _compare_parser(prog: str) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog=f"{prog} compare",
        description="Compare two pytest-kedi JSON reports (--kedi-report files): per-suite "
        "score deltas and the rows that regressed or improved (matched by index and input).",
    )
    parser.add_argument("old", metavar="OLD.json", help="the baseline report")
    parser.add_argument("new", metavar="NEW.json", help="the report to judge")
    parser.add_argument(
        "--max-drop",
        type=_drop,
        metavar="D",
        help="exit 1 when a suite's score fell by more than D",
    )
    return parser


def _merge_parser(prog: str) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog=f"{prog} merge",
        description="Merge the JSON reports of a sharded run (suites and tests by node id), "
        "re-apply the gates they recorded, print the kedi summary and exit like one pytest "
        "run of every shard would have (0 passed, 1 failed).",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument(
        "-o", "--output", type=_output, metavar="ALL.json", help="write the merged report"
    )
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(list(argv))
    except SystemExit as exc:  # argparse printed the usage error or the help
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR


def _write(out: TextIO, lines: Sequence[str]) -> None:
    for line in lines:
        out.write(printable(clean_text(line)) + "\n")


def _error(err: TextIO, text: str) -> None:
    """A diagnostic, its control characters (a path's ESC) shown as escapes, as the CLI's."""
    err.write(printable(clean_text(text)) + "\n")


def compare_command(
    argv: Sequence[str], *, prog: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    args = _parse(_compare_parser(prog), argv)
    if isinstance(args, int):
        return args
    try:
        old, new = read_run(args.old), read_run(args.new)
    except ReportReadError as exc:
        _error(err, f"{prog} compare: error: {exc}")
        return USAGE_ERROR
    comparison = compare_runs(old.suites, new.suites)
    head, *rest = comparison_lines(comparison, max_drop=args.max_drop)
    _write(out, [f"Comparing {args.old} -> {args.new}: {head}", *rest])
    _write(out, [f"{args.new}: ERROR {e.nodeid}: {e.message}" for e in new.errors])
    if args.max_drop is None:
        return 0
    reasons = [
        (suite.nodeid, drop_reason(suite, args.max_drop))
        for suite in comparison.dropped(args.max_drop)
    ]
    _write(out, [f"FAILED {nodeid}: {reason}" for nodeid, reason in reasons])
    return 1 if reasons else 0


def merged_lines(merged: Merged, paths: Sequence[str]) -> list[str]:
    """The ``kedi`` section as a pytest run prints it, plus the merge's own lines."""
    run = merged.run
    lines = [f"{' kedi ':=^80}", f"merged {len(paths)} report{'s' if len(paths) != 1 else ''}"]
    if run.model_calls:
        lines.append(models_line(dict(run.model_calls), ()))
    elif run.suites or run.tests:  # as one run says it (the reports keep no default model)
        lines.append("models: no model calls")
    usage = usage_line(run.suites)
    if usage:
        lines.append(usage)
    if run.tests:
        lines.append("Tests:")
        for case in run.tests:
            line = case_line(case, feedback_limit=_FEEDBACK_LIMIT)
            expected = case.outcome == "failed" and case.nodeid in run.xfailed
            lines.append(line + xfail_note(case, _FEEDBACK_LIMIT) if expected else line)
    if run.suites:
        lines.append("Evals:")
        for suite in run.suites:
            line = suite_line(suite, feedback_limit=_FEEDBACK_LIMIT)
            expected = suite.nodeid in run.xfailed
            lines.append(line + xfail_note(suite, _FEEDBACK_LIMIT) if expected else line)
            flaky = flaky_line(suite)
            if flaky is not None:
                lines.append(f"    {flaky}")
    lines += rerun_lines(run.suites)
    lines += [f"ERROR {error.nodeid}: {error.message}" for error in run.errors]
    lines += [f"FAILED {nodeid}: {reason.splitlines()[0]}" for nodeid, reason in merged.failures]
    lines += [f"kedi: {note}" for note in merged.notes]
    return lines


def _dumps(run: RunRecord) -> str:
    return json.dumps(run.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def merge_command(
    argv: Sequence[str], *, prog: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    args = _parse(_merge_parser(prog), argv)
    if isinstance(args, int):
        return args
    for index, path in enumerate(args.reports):  # its model calls would count twice
        if any(same_file(path, earlier) for earlier in args.reports[:index]):
            _error(err, f"{prog} merge: error: {path} is given twice")
            return USAGE_ERROR
    refused = None if args.output is None else unsafe_output(args.output, args.reports)
    if refused is not None:
        _error(err, f"{prog} merge: error: -o {args.output}: {refused}")
        return USAGE_ERROR
    try:
        merged = merge([Shard(path, read_run(path)) for path in args.reports])
    except (ReportReadError, MergeError) as exc:
        _error(err, f"{prog} merge: error: {exc}")
        return USAGE_ERROR
    lines = merged_lines(merged, args.reports)
    if args.output is not None:
        try:
            write_text_atomic(args.output, _dumps(merged.run))
        except OSError as exc:
            _write(out, lines)
            message = f"{prog} merge: error: cannot write {args.output}: {reason(exc)}"
            _error(err, message)
            return USAGE_ERROR
        lines.append(f"kedi report written: {args.output}")
    _write(out, lines)
    return merged.exitstatus
