"""The JSON report and the rows JSONL, streamed to their files in one pass over the rows.

Each row is encoded once (compact one-line JSON): the JSON report holds that text as one
line of its ``rows`` array (everything else is indented by two spaces, as ``json.dumps``
with ``indent=2`` writes it), and the row's JSONL line is the same text after its suite's
node id, procedure, metric and split. Nothing is held whole: memory stays flat however
many rows a run has. Parsed back, the report equals `RunRecord.to_json` and each JSONL
line equals its `SuiteRecord.row_lines` object, keys in the same order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path

from pytest_kedi.atomicwrite import AtomicWriter, reason
from pytest_kedi.evals import RowResult
from pytest_kedi.evals.safetext import clean_text
from pytest_kedi.evals.usage import NO_USAGE
from pytest_kedi.plugin.records import RunRecord, SuiteRecord, source_order
from pytest_kedi.reports.deltas import RowDelta, row_fields

__all__ = ["dumps", "stream_reports"]


def dumps(value: object, indent: int | None = None) -> str:
    """The report's JSON: UTF-8 text as is, no NaN or infinity."""
    if indent is None:
        return _encode(value)
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)


#: Rows are encoded this many at a time before they are written.
_BATCH = 512

#: `dumps` without indentation: one encoder for every row (``json.dumps`` makes one a call);
#: records hold no cycles.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False).encode


def _nested(value: object, depth: int) -> str:
    """``value`` indented by two spaces, as it appears ``depth`` levels deep."""
    return dumps(value, indent=2).replace("\n", "\n" + "  " * depth)


class _Target:
    """One report file being written; the first error stops it (the other one goes on)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: OSError | None = None
        self._writer: AtomicWriter | None = None
        try:
            self._writer = AtomicWriter(path)
        except OSError as exc:
            self.error = exc

    def write(self, text: str) -> None:
        writer = self._writer
        if writer is None:
            return
        try:
            writer.write(text)
        except OSError as exc:
            self._stop(exc)

    def commit(self) -> None:
        writer = self._writer
        if writer is None:
            return
        self._writer = None
        try:
            writer.commit()
        except OSError as exc:
            self.error = exc

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.abort()
            self._writer = None

    def _stop(self, exc: OSError) -> None:
        self.abort()
        self.error = exc


@dataclass(frozen=True, slots=True)
class Streamed:
    """The files `stream_reports` wrote, and the errors it met."""

    written: tuple[Path, ...]
    errors: tuple[str, ...]


def stream_reports(run: RunRecord, report: Path | None, rows_jsonl: Path | None) -> Streamed:
    """Write the JSON report to ``report`` and the rows JSONL to ``rows_jsonl`` (each when
    given), atomically, in one pass; a file that cannot be written is an error, not a raise."""
    doc = None if report is None else _Target(report)
    lines = None if rows_jsonl is None else _Target(rows_jsonl)
    targets = [target for target in (doc, lines) if target is not None]
    if not targets:  # nothing asked for: no row is encoded
        return Streamed((), ())
    try:
        _stream(run, doc, lines)
    except BaseException:
        for target in targets:
            target.abort()
        raise
    for target in targets:
        target.commit()
    return Streamed(
        tuple(t.path for t in targets if t.error is None),
        tuple(clean_text(f"cannot write {t.path}: {reason(t.error)}") for t in targets if t.error),
    )


def _stream(run: RunRecord, doc: _Target | None, lines: _Target | None) -> None:
    suites = source_order(run.suites)
    if doc is not None:
        doc.write(_nested(run.head_json(), 0)[:-2] + ',\n  "suites": [')
    for number, suite in enumerate(suites):
        if doc is not None:
            head = _nested(suite.head_json(), 2)[:-6]  # without the closing "\n    }"
            doc.write(("\n    " if number == 0 else ",\n    ") + head + ',\n      "rows": [')
        _stream_rows(suite, doc, lines)
        if doc is not None:
            doc.write("]\n    }")
    if doc is not None:
        tests = [test.to_json() for test in source_order(run.tests)]
        doc.write(("\n  ]" if suites else "]") + ',\n  "tests": ' + _nested(tests, 1) + "\n}\n")


def _stream_rows(suite: SuiteRecord, doc: _Target | None, lines: _Target | None) -> None:
    prefix = dumps(suite.row_context())[:-1] + ", "  # "{...context..., " then the row's keys
    deltas = suite.baseline.by_index() if suite.baseline else {}
    batch: list[str] = []  # encoded rows not written yet: written `_BATCH` at a time
    wrote = False
    for row in suite.rows:
        batch.append(_row_text(row, deltas.get(row.index)))
        if len(batch) == _BATCH:
            _write_rows(batch, prefix, doc, lines, after=wrote)
            batch.clear()
            wrote = True
    if batch:
        _write_rows(batch, prefix, doc, lines, after=wrote)
        wrote = True
    if doc is not None and wrote:
        doc.write("\n      ")


def _write_rows(
    batch: list[str], prefix: str, doc: _Target | None, lines: _Target | None, *, after: bool
) -> None:
    """``batch``'s rows as lines of the report's ``rows`` array (``after`` earlier rows)
    and as JSONL lines (each after its suite's ``prefix``)."""
    if doc is not None:
        doc.write((",\n        " if after else "\n        ") + ",\n        ".join(batch))
    if lines is not None:
        lines.write("".join([prefix + text[1:] + "\n" for text in batch]))


# A row's text is built directly from its fields: the same text as encoding its JSON form
# (`SuiteRecord.row_json`: ``RowResult.to_json`` and the baseline fields), without building
# that dict (a test compares the two on every kind of row). Any value these helpers do not
# recognise goes to the encoder, which decides (and refuses NaN) as it would in the dict.


def _text(value: object) -> str:
    if value is None:
        return "null"
    return encode_basestring(value) if type(value) is str else _encode(value)


def _number(value: object) -> str:
    if type(value) is float and value - value == 0.0:  # finite
        return float.__repr__(value)
    if type(value) is int:
        return int.__repr__(value)
    return _encode(value)


def _flag(value: object) -> str:
    return "true" if value is True else "false" if value is False else _encode(value)


def _row_text(row: RowResult, delta: RowDelta | None) -> str:
    """``_encode({**row.to_json(), **row_fields(...)})``, built directly.

    The common values (text or None, finite floats, ints, booleans, the shared zero usage)
    are written inline, without a call each: this runs once per row of every report."""
    if row.calls:  # traced model calls: rare, and nested; the encoder writes them
        data = row.to_json()
        data.update(row_fields({} if delta is None else {delta.index: delta}, row.index))
        return _encode(data)
    index, score, duration, retries = row.index, row.score, row.duration_s, row.retries
    given, expected, output = row.input, row.expected, row.output
    feedback, error, error_class = row.feedback, row.error, row.error_class
    flaky, carried = row.flaky, row.carried_over
    scores = row.scores
    if len(scores) == 1 and type(scores[0]) is float and scores[0] - scores[0] == 0.0:
        score_list = _float_repr(scores[0])
    else:
        score_list = ", ".join([_number(each) for each in scores])
    usage = row.usage
    return (
        f'{{"index": {_int_repr(index) if type(index) is int else _number(index)}, '
        f'"input": {"null" if given is None else _str_or(given)}, '
        f'"expected": {"null" if expected is None else _str_or(expected)}, '
        f'"score": {_float_repr(score) if type(score) is float and score - score == 0.0 else _number(score)}, '  # noqa: E501
        f'"feedback": {"null" if feedback is None else _str_or(feedback)}, '
        f'"error": {"null" if error is None else _str_or(error)}, '
        f'"error_class": {"null" if error_class is None else _str_or(error_class)}, '
        f'"duration_s": {_float_repr(duration) if type(duration) is float and duration - duration == 0.0 else _number(duration)}, '  # noqa: E501
        f'"scores": [{score_list}], '
        f'"flaky": {"false" if flaky is False else _flag(flaky)}, '
        f'"carried_over": {"false" if carried is False else _flag(carried)}, '
        f'"output": {"null" if output is None else _str_or(output)}, '
        f'"calls": [], "retries": {_int_repr(retries) if type(retries) is int else _number(retries)}, '  # noqa: E501
        + (
            _NO_USAGE_TEXT
            if usage is NO_USAGE
            else f'"usage": {{"requests": {_number(usage.requests)}, '
            f'"input_tokens": {_number(usage.input_tokens)}, '
            f'"output_tokens": {_number(usage.output_tokens)}}}, '
        )
        + (
            '"delta": null, "regressed": null}'
            if delta is None
            else f'"delta": {_number(delta.delta)}, "regressed": {_flag(delta.regressed)}}}'
        )
    )


_float_repr = float.__repr__
_int_repr = int.__repr__
_NO_USAGE_TEXT = f'"usage": {_encode(NO_USAGE.to_json())}, '


def _str_or(value: object) -> str:
    """A value that is not None: text escaped, anything else as the encoder writes it."""
    return encode_basestring(value) if type(value) is str else _encode(value)
