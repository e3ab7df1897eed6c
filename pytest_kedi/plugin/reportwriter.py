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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path

from pytest_kedi.atomicwrite import AtomicWriter, reason
from pytest_kedi.evals import RowResult
from pytest_kedi.evals.safetext import clean_text
from pytest_kedi.evals.usage import NO_USAGE
from pytest_kedi.plugin.records import RunRecord, SuiteRecord, source_order
from pytest_kedi.reports.deltas import RowDelta, row_fields

__all__ = ["dumps", "rows_pieces", "rows_text", "stream_reports"]


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
    rows = suite.rows
    for start in range(0, len(rows), _BATCH):  # encoded `_BATCH` rows at a time
        batch = rows[start : start + _BATCH]
        bodies = _bodies(batch)
        if deltas:  # a row found in the baseline: its own delta instead of none
            for at, row in enumerate(batch):
                delta = deltas.get(row.index)
                if delta is not None:
                    bodies[at] = bodies[at][: -len(_NO_DELTA)] + _delta_text(delta)
        _write_rows(bodies, prefix, doc, lines, after=start > 0)
    if doc is not None and rows:
        doc.write("\n      ")


def _write_rows(
    bodies: list[str], prefix: str, doc: _Target | None, lines: _Target | None, *, after: bool
) -> None:
    """Rows (each `_row_body`) as lines of the report's ``rows`` array (``after`` earlier
    rows) and as JSONL lines (each after its suite's ``prefix``), each file's text joined
    once (no row's text is copied on its own)."""
    if doc is not None:
        doc.write(",\n        {" if after else "\n        {")  # (not joined to the rows: a copy)
        doc.write(",\n        {".join(bodies))
    if lines is not None:
        lines.write(prefix)
        lines.write(("\n" + prefix).join(bodies))
        lines.write("\n")


# A row's text is built directly from its fields: the same text as encoding its JSON form
# (`SuiteRecord.row_json`: ``RowResult.to_json`` and the baseline fields), without building
# that dict (a test compares the two on every kind of row). Any value these helpers do not
# recognise goes to the encoder, which decides (and refuses NaN) as it would in the dict.


def _number(value: object) -> str:
    if type(value) is float and value - value == 0.0:  # finite
        return float.__repr__(value)
    if type(value) is int:
        return int.__repr__(value)
    return _encode(value)


def _flag(value: object) -> str:
    return "true" if value is True else "false" if value is False else _encode(value)


def _bodies(rows: Sequence[RowResult]) -> list[str]:
    """``[_row_body(row, None) for row in rows]``, the usual row written inline.

    A row run once, without model calls, retries or usage, its numbers finite floats (the
    index an int) and its text str or None, as most rows are, is one f-string here: no call
    but the escaping of its text and the repr of its floats. Any other row, and a text the
    escaping refuses (not a str), is `_row_body`'s."""
    bodies: list[str] = []
    add = bodies.append
    for row in rows:
        score = row.score  # (one name a statement: four at once build a tuple)
        duration = row.duration_s
        scores = row.scores
        index = row.index
        if not (
            type(score) is float
            and _LOW < score < _HIGH  # finite (NaN is refused by `_row_body`)
            and type(duration) is float
            and _LOW < duration < _HIGH
            and type(index) is int
            and len(scores) == 1
            # its only score: this one, or (read back from JSON: xdist) an equal float,
            # written alike unless it is a zero (0.0 and -0.0 are equal)
            and ((first := scores[0]) is score or (type(first) is float and first == score != 0))
            and row.carried_over is False
            and row.retries is _ZERO
            and row.usage is NO_USAGE
            and not row.calls
        ):
            add(_row_body(row, None))
            continue
        shown = _ONE if score == 1.0 else _float_repr(score)
        given, expected, output = row.input, row.expected, row.output
        feedback, error, error_class = row.feedback, row.error, row.error_class
        # (the constant texts written out as `_NO_FAILURE` and `_DEFAULT_TAIL` hold them:
        # a constant taken from a name would be one more piece of the row's text to join)
        try:
            if feedback is None and error is None and error_class is None:
                add(
                    f'"index": {index}, '
                    f'"input": {"null" if given is None else encode_basestring(given)}, '
                    f'"expected": {"null" if expected is None else encode_basestring(expected)}, '
                    f'"score": {shown}, "feedback": null, "error": null, "error_class": null, '
                    f'"duration_s": {_float_repr(duration)}, "scores": [{shown}], '
                    '"flaky": false, "carried_over": false, '
                    f'"output": {"null" if output is None else encode_basestring(output)}, '
                    '"calls": [], "retries": 0, '
                    '"usage": {"requests": 0, "input_tokens": 0, "output_tokens": 0}, '
                    '"delta": null, "regressed": null}'
                )
            else:
                add(
                    f'"index": {index}, '
                    f'"input": {"null" if given is None else encode_basestring(given)}, '
                    f'"expected": {"null" if expected is None else encode_basestring(expected)}, '
                    f'"score": {shown}, {_failure(feedback, error, error_class)}'
                    f'"duration_s": {_float_repr(duration)}, "scores": [{shown}], '
                    '"flaky": false, "carried_over": false, '
                    f'"output": {"null" if output is None else encode_basestring(output)}, '
                    '"calls": [], "retries": 0, '
                    '"usage": {"requests": 0, "input_tokens": 0, "output_tokens": 0}, '
                    '"delta": null, "regressed": null}'
                )
        except TypeError:  # a text that is not a str: as the encoder writes it
            add(_row_body(row, None))
    return bodies


def _delta_text(delta: RowDelta) -> str:
    """How `_row_body` ends for a row found in the baseline (`_NO_DELTA` for another)."""
    return f', "delta": {_number(delta.delta)}, "regressed": {_flag(delta.regressed)}}}'


def _failure(feedback: object, error: object, error_class: object) -> str:
    """The ``feedback``, ``error`` and ``error_class`` fields of a row that has one."""
    return (
        f'"feedback": {"null" if feedback is None else _str_or(feedback)}, '
        f'"error": {"null" if error is None else _str_or(error)}, '
        f'"error_class": {"null" if error_class is None else _str_or(error_class)}, '
    )


def _row_body(row: RowResult, delta: RowDelta | None) -> str:
    """``_encode({**row.to_json(), **row_fields(...)})`` without its opening brace, built
    directly.

    The common values (text or None, finite floats, ints, booleans, the shared zero usage)
    are written inline, without a call each, and the runs of fields a row usually leaves
    at their defaults are written as one constant: this runs once per row of every report."""
    if row.calls:  # traced model calls: rare, and nested; the encoder writes them
        data = row.to_json()
        data.update(row_fields({} if delta is None else {delta.index: delta}, row.index))
        return _encode(data)[1:]
    index, score, duration, scores = row.index, row.score, row.duration_s, row.scores
    given, expected, output = row.input, row.expected, row.output
    feedback, error, error_class = row.feedback, row.error, row.error_class
    carried, retries, usage = row.carried_over, row.retries, row.usage
    if type(score) is float and score == 1.0:  # the most common score
        score_text = _ONE
    elif type(score) is float and score - score == 0.0:  # finite
        score_text = _float_repr(score)
    else:
        score_text = _number(score)
    # "scores", "flaky" and the key of "carried_over"
    if len(scores) != 1:  # repeats: the score of each, and whether they differ
        repeats = ", ".join([_number(each) for each in scores])
        scores_text = f'"scores": [{repeats}], "flaky": {_flag(row.flaky)}, "carried_over": '
    elif scores[0] is not score:
        scores_text = f'"scores": [{_number(scores[0])}], "flaky": false, "carried_over": '
    elif score_text is _ONE:  # run once (`flaky` is false), as most rows are
        scores_text = _SCORED_ONE
    else:
        scores_text = f'"scores": [{score_text}], "flaky": false, "carried_over": '
    if feedback is None and error is None and error_class is None:
        failure = _NO_FAILURE
    else:
        failure = _failure(feedback, error, error_class)
    if retries is _ZERO and usage is NO_USAGE and delta is None:  # (0 is one object)
        tail = _DEFAULT_TAIL
    else:
        tail = (
            f'"calls": [], "retries": {_number(retries)}, '
            + (
                _NO_USAGE_TEXT
                if usage is NO_USAGE
                else f'"usage": {{"requests": {_number(usage.requests)}, '
                f'"input_tokens": {_number(usage.input_tokens)}, '
                f'"output_tokens": {_number(usage.output_tokens)}}}, '
            )
            + (_NO_DELTA if delta is None else _delta_text(delta))[2:]
        )
    return (
        # (an int is formatted as its repr)
        f'"index": {index if type(index) is int else _number(index)}, '
        f'"input": {"null" if given is None else encode_basestring(given) if type(given) is str else _encode(given)}, '  # noqa: E501
        f'"expected": {"null" if expected is None else encode_basestring(expected) if type(expected) is str else _encode(expected)}, '  # noqa: E501
        f'"score": {score_text}, {failure}'
        f'"duration_s": {_float_repr(duration) if type(duration) is float and duration - duration == 0.0 else _number(duration)}, '  # noqa: E501
        f"{scores_text}{'false' if carried is False else _flag(carried)}, "
        f'"output": {"null" if output is None else encode_basestring(output) if type(output) is str else _encode(output)}, '  # noqa: E501
        f"{tail}"
    )


_float_repr = float.__repr__
_HIGH = float("inf")
_LOW = -_HIGH
_ZERO = 0
_ONE = "1.0"
_SCORED_ONE = '"scores": [1.0], "flaky": false, "carried_over": '
_NO_FAILURE = '"feedback": null, "error": null, "error_class": null, '
_NO_USAGE_TEXT = f'"usage": {_encode(NO_USAGE.to_json())}, '
#: A row's last fields when it retried nothing, called no model and has no baseline row.
_DEFAULT_TAIL = f'"calls": [], "retries": 0, {_NO_USAGE_TEXT}"delta": null, "regressed": null}}'


#: How `_row_body` ends for a row compared with no baseline row.
_NO_DELTA = ', "delta": null, "regressed": null}'


def rows_text(rows: Sequence[RowResult]) -> str:
    """``json.dumps([row.to_json() for row in rows], ensure_ascii=False)``, each row built
    by `_row_body` (less the baseline keys): a `ValueError` for a number that is not
    finite, which Python's encoder writes as ``NaN`` or ``Infinity``."""
    return "".join(rows_pieces(rows, finite=True))


def rows_pieces(rows: Sequence[RowResult], *, finite: bool = False) -> Iterator[str]:
    """`rows_text` in pieces, `_BATCH` rows at a time (each piece made whole before it is
    given, so a writer never holds the text of every row at once). A batch with a number
    that is not finite is written as Python's encoder writes it (``NaN``), or, ``finite``,
    raises `ValueError`."""
    if not rows:
        yield "[]"
        return
    cut = -len(_NO_DELTA)
    yield "[{"
    for start in range(0, len(rows), _BATCH):
        batch = rows[start : start + _BATCH]
        if start:
            yield "}, {"
        try:  # (each row cut once, and joined between its braces: no copy more)
            yield "}, {".join([body[:cut] for body in _bodies(batch)])
        except ValueError:
            if finite:
                raise
            dumped = [json.dumps(row.to_json(), ensure_ascii=False)[1:-1] for row in batch]
            yield "}, {".join(dumped)
    yield "}]"


def _str_or(value: object) -> str:
    """A value that is not None: text escaped, anything else as the encoder writes it."""
    return encode_basestring(value) if type(value) is str else _encode(value)
