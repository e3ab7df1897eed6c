"""Report runs -> one self-contained HTML page (inline CSS, JS and SVG; no network).

Static parts (header, suites table, charts, run comparison) are rendered here with every
user string escaped; the rows of each suite travel as JSON in a
``<script type="application/json">`` block and are rendered a page at a time by the
inline script (``viewer.js``) with ``textContent`` only. Rows data larger than
`COMPRESS_ABOVE` travels gzip-compressed and base64-encoded instead (the browser's
``DecompressionStream`` unpacks it), so 10,000 rows of long values stay well under 5 MB.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterable, Sequence
from html import escape
from importlib import resources
from typing import Any

from pytest_kedi.evals.scoring import SCORE_DIGITS, change, fell, outside_note, threshold_text
from pytest_kedi.text import clip, counted
from pytest_kedi.viewer import svg
from pytest_kedi.viewer.compare import history_section
from pytest_kedi.viewer.errors import errors_html
from pytest_kedi.viewer.model import (
    RowView,
    RunView,
    SuiteView,
    compared,
    previous_suites,
    rows_by_key,
    shown_digits,
)

__all__ = ["COMPRESS_ABOVE", "data_script", "render_html", "script_json"]

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
_VERDICT_WORD = {"passed": "passed", "failed": "FAILED", "skipped": "skipped", "xfail": "xfail"}
FLAG_ERRORED, FLAG_BELOW, FLAG_FLAKY, FLAG_REGRESSED = 1, 2, 4, 8
#: rows data (JSON, bytes) above this size is embedded compressed
COMPRESS_ABOVE = 256 * 1024


def _asset(name: str) -> str:
    return resources.files("pytest_kedi.viewer").joinpath(name).read_text(encoding="utf-8")


def script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>``, ``&`` and line separators escaped."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, code)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    if not text.isascii():  # a lone surrogate (from a report's escape) as its JSON escape
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def data_script(value: Any) -> str:
    """The ``kedi-data`` block: ``value`` as JSON, or gzip + base64 when the JSON is larger
    than `COMPRESS_ABOVE` bytes (``data-encoding="gzip"``; base64 has no markup characters)."""
    text = script_json(value)
    raw = text.encode("utf-8")
    if len(raw) <= COMPRESS_ABOVE:
        return f'<script type="application/json" id="kedi-data">{text}</script>'
    packed = base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")
    return (
        '<script type="application/octet-stream" id="kedi-data" data-encoding="gzip">'
        f"{packed}</script>"
    )


def _score(value: float, digits: int = SCORE_DIGITS) -> str:
    return f"{value:.{digits}f}"


def _delta_text(delta: float | None) -> str:
    return "" if delta is None else f"{delta:+.4f}"


def _verdict(verdict: str) -> str:
    word = _VERDICT_WORD.get(verdict, verdict)
    return f'<span class="badge v-{escape(verdict)}">{escape(word)}</span>'


def _errors(suite: SuiteView) -> str:
    if not suite.errors_by_class:
        return str(suite.rows_errored) if suite.rows_errored else "0"
    return ", ".join(f"{escape(name)} {count}" for name, count in suite.errors_by_class)


# --------------------------------------------------------------------------- header


def _header(run: RunView, runs: int) -> str:
    suites, tests = run.suites, run.tests
    failed = sum(1 for s in suites if s.verdict == "failed")
    rows = sum(s.rows_total for s in suites)
    errored = sum(s.rows_errored for s in suites)
    tests_failed = sum(1 for t in tests if t.outcome == "failed")
    if run.models:
        models = "; ".join(
            escape(m.name)
            + (f" ({counted(m.calls, 'call')})" if m.calls is not None else "")
            + (" (offline default: synthetic output)" if m.synthetic else "")
            for m in run.models
        )
    elif run.version is not None and run.version >= 2:  # version 2 counts every model call
        models = "no model calls"
    else:
        models = "not recorded in this report"
    facts = [
        ("When", escape(run.when or "not recorded")),
        ("Report", escape(run.label) + (f" (latest of {runs})" if runs > 1 else "")),
        ("Models", models),
        ("Suites", f"{len(suites)} ({failed} failed)"),
        ("Rows", f"{rows} ({errored} errored)"),
        ("Tests", f"{len(tests)} ({tests_failed} failed)"),
    ]
    if run.errors:
        facts.append(("Collection errors", str(len(run.errors))))
    if run.tokens:
        facts.append(("Tokens", escape(run.tokens)))
    if run.exitstatus:
        facts.append(("Exit status", str(run.exitstatus)))
    items = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
    word = {"passed": "PASSED", "failed": "FAILED", "interrupted": "INTERRUPTED"}[run.verdict]
    return (
        '<header class="top"><div class="title"><h1>pytest-kedi report</h1>'
        f'<span class="badge big v-{run.verdict}" id="run-verdict">{word}</span></div>'
        f'<dl class="facts">{items}</dl></header>'
    )


# --------------------------------------------------------------------------- suites table


def _deltas(run: RunView, runs: Sequence[RunView]) -> tuple[str, dict[str, float]] | None:
    """The suites' delta column: against the previous report when several were given (for
    suites scored in both), else against the baseline the report was run with."""
    if len(runs) > 1:
        previous = previous_suites(runs)
        deltas = {s.nodeid: compared(previous.get(s.nodeid), s) for s in run.suites}
        return "Δ previous run", {k: v for k, v in deltas.items() if v is not None}
    baseline = {s.nodeid: s.delta for s in run.suites if s.delta is not None}
    if baseline:
        return "Δ baseline", baseline
    return None


def _th(label: str, kind: str, col: int) -> str:
    align = ' class="n"' if col in (2, 5) else ""
    return (
        f'<th scope="col"{align} aria-sort="none"><button type="button" class="sort" '
        f'data-kind="{kind}" data-col="{col}">{escape(label)}<span class="arrow" '
        'aria-hidden="true"></span></button></th>'
    )


def _suites_table(run: RunView, runs: Sequence[RunView]) -> str:
    if not run.suites:
        return '<section id="suites"><h2>Eval suites</h2><p>No eval suite ran.</p></section>'
    deltas = _deltas(run, runs)
    head = [
        _th("Suite", "text", 0),
        _th("Score", "num", 1),
        _th("Rows", "num", 2),
        _th("Errors", "num", 3),
        _th("Verdict", "text", 4),
    ]
    if deltas:
        head.append(_th(deltas[0], "num", 5))
    body = []
    for i, suite in enumerate(run.suites):
        extra = []
        if suite.threshold is not None:
            on = " on the lower bound" if suite.lower_gate else ""
            extra.append(f"min {threshold_text(suite.threshold, 2, least=2)}{on}")
        if suite.ci is not None:
            extra.append(f"95% CI {suite.ci[0]:.3f} to {suite.ci[1]:.3f}")
        if suite.stderr is not None:
            extra.append(f"SE {suite.stderr:.3f}")
        if suite.repeats is not None:
            extra.append(f"{suite.repeats} repeats")
        # the suite's error, why pytest failed a suite its gates passed (XPASS(strict)), or
        # why it skipped one or expected it to fail
        why = suite.error or (suite.failure if suite.verdict == "failed" else suite.reason)
        bar = (
            svg.score_bar(
                suite.score, suite.threshold, suite.ci, failed=suite.verdict in ("failed", "xfail")
            )
            if suite.scored
            else ""
        )
        cells = [
            f'<td data-v="{escape(suite.label)}"><a class="suite-link" href="#suite-{i}" '
            f'data-suite="{i}">{escape(suite.label)}</a>'
            f'<div class="nodeid">{escape(suite.nodeid)}</div></td>',
            f'<td data-v="{suite.score!r}"><div class="score">{bar}'
            f'<span class="num">{_score(suite.score, shown_digits(suite)) if suite.scored else "—"}'
            "</span></div>"
            + (f'<div class="sub">{escape(" · ".join(extra))}</div>' if extra else "")
            + "</td>",
            f'<td class="n" data-v="{suite.rows_total}">{suite.rows_total}</td>',
            f'<td data-v="{suite.rows_errored}">{_errors(suite)}</td>',
            f'<td data-v="{escape(suite.verdict)}">{_verdict(suite.verdict)}'
            + (f'<div class="sub{_err(suite)}">{escape(_one_line(why))}</div>' if why else "")
            + "</td>",
        ]
        if deltas:
            delta = deltas[1].get(suite.nodeid)
            cls = "" if delta is None else (" down" if delta < 0 else " up" if delta > 0 else "")
            value = "" if delta is None else repr(delta)
            cells.append(
                f'<td class="n delta{cls}" data-v="{value}">{_delta_text(delta) or "—"}</td>'
            )
        body.append(f'<tr data-suite="{i}">{"".join(cells)}</tr>')
    return (
        '<section id="suites" aria-labelledby="suites-h"><h2 id="suites-h">Eval suites</h2>'
        '<p class="hint">Select a column heading to sort; select a suite to see its rows.</p>'
        f'<div class="table-wrap"><table id="suites-table" class="suites"><thead><tr>'
        f"{''.join(head)}</tr></thead><tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _err(suite: SuiteView) -> str:
    """The class of a suite's note: an error's, not a skip or xfail reason's."""
    return "" if suite.verdict in ("skipped", "xfail") and suite.error is None else " err"


def _one_line(text: str, limit: int = 160) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return clip(lines[-1] if len(lines) > 1 else text, limit, "…")


# --------------------------------------------------------------------------- drill-down


def _row_flags(row: RowView, before: RowView | None, several: bool) -> tuple[int, float | None]:
    """``several``: reports of several runs were given; rows compare with the previous
    one's, not with the baseline a report was run with."""
    flags = (FLAG_ERRORED if row.error_class else 0) | (FLAG_BELOW if row.score < 1.0 else 0)
    flags |= FLAG_FLAKY if row.flaky else 0
    if several:
        delta = None if before is None else change(row.score, before.score)
        regressed = delta is not None and fell(delta)
    else:
        delta, regressed = row.delta, bool(row.regressed)
    if regressed:
        flags |= FLAG_REGRESSED
    return flags, delta


def _row_payload(row: RowView, before: RowView | None, several: bool) -> list[Any]:
    flags, delta = _row_flags(row, before, several)
    calls = [
        [c.model, c.prompt, c.instructions, c.answer, c.tokens, c.duration_s] for c in row.calls
    ]
    return [
        row.index, row.input, row.expected, row.output, row.score, row.feedback,
        row.error_class, row.error, flags, delta, calls or None, _row_note(row),
    ]  # fmt: skip


def _row_note(row: RowView) -> str | None:
    """Retries and token usage of a row, when recorded."""
    parts = []
    if row.retries:
        parts.append(counted(row.retries, "retry", "retries"))
    if row.tokens:
        parts.append(f"tokens: {row.tokens}")
    return " · ".join(parts) or None


def _count(rows: Iterable[list[Any]], flag: int) -> int:
    return sum(1 for r in rows if r[8] & flag)


_OPENS = frozenset("\u202a\u202b\u202d\u202e")  # embeddings and overrides, closed by PDF
_ISOLATES = frozenset("\u2066\u2067\u2068")  # isolates, closed by PDI


def _closed(text: str) -> str:
    """``text`` with the bidi embeddings, overrides and isolates it leaves open closed, so
    a right-to-left override in one row's feedback cannot reverse the next row's."""
    opened = sum(ch in _OPENS for ch in text) - text.count("\u202c")
    isolated = sum(ch in _ISOLATES for ch in text) - text.count("\u2069")
    return text + "\u202c" * max(opened, 0) + "\u2069" * max(isolated, 0)


def _feedback_shown(suite: SuiteView) -> str:
    """The suite's feedback (its rows' joined with ``; ``), each row's part closed."""
    parts = [row.feedback for row in suite.rows if row.feedback is not None]
    if parts and "; ".join(parts) == suite.feedback:
        return "; ".join(map(_closed, parts))
    return _closed(suite.feedback or "")


def _suite_section(i: int, suite: SuiteView, payload: list[list[Any]], has: dict[str, bool]) -> str:
    digits = shown_digits(suite)  # as the terminal shows them: told apart from the threshold
    facts = [("Score", _score(suite.score, digits)), ("Verdict", _verdict(suite.verdict))]
    if suite.threshold is not None:
        on = " (on the lower bound of the 95% CI)" if suite.lower_gate else ""
        facts.append(("Min score", threshold_text(suite.threshold, digits) + on))
    if suite.ci is not None:
        facts.append(("95% CI", f"{_score(suite.ci[0], digits)} to {_score(suite.ci[1], digits)}"))
    if suite.stderr is not None:
        facts.append(("Std. error", _score(suite.stderr)))
    if suite.repeats is not None:
        facts.append(("Repeats", str(suite.repeats)))
    if suite.delta is not None:
        facts.append(("Δ baseline", _delta_text(suite.delta)))
    if suite.tokens:
        facts.append(("Tokens", escape(suite.tokens)))
    facts.append(("Rows", f"{suite.rows_total} ({suite.rows_errored} errored)"))
    if suite.errors_by_class:
        facts.append(("Errors", _errors(suite)))
    if suite.duration_s is not None:
        facts.append(("Duration", f"{suite.duration_s:.2f} s"))
    if suite.path is not None:
        facts.append(("Source", escape(f"{suite.path}:{suite.line}" if suite.line else suite.path)))
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
    notes = ""
    if suite.error:
        notes += (
            '<div class="note err"><strong>Suite error</strong>'
            f"<pre>{escape(suite.error)}</pre></div>"
        )
    if suite.feedback:
        notes += (
            '<div class="note"><strong>Feedback</strong>'
            f'<p class="long" data-long="1">{escape(_feedback_shown(suite))}</p></div>'
        )
    scores = [r.score for r in suite.rows]
    counts = f"{counted(len(scores), 'row')} in 10 bins{outside_note(scores)}"
    title = f"Row scores of {suite.label}: {counts}"
    chart = svg.histogram(scores, title=title) if scores else ""
    filters = [("errored", "errored", FLAG_ERRORED), ("below", "below 1.0", FLAG_BELOW)]
    filters += [("flaky", "flaky", FLAG_FLAKY), ("regressed", "regressed", FLAG_REGRESSED)]
    boxes = "".join(
        f'<label class="filter"><input type="checkbox" data-filter="{key}"> {text} '
        f'<span class="count">({_count(payload, flag)})</span></label>'
        for key, text, flag in filters
    )
    cols = ["#", "Input", "Expected"]
    cols += ["Output"] if has["output"] else []
    cols += ["Score", "Feedback", "Error"]
    cols += ["Δ"] if has["delta"] else []
    cols += ["Model calls"] if has["calls"] else []
    head = "".join(f'<th scope="col">{c}</th>' for c in cols)
    table = (
        f'<div class="controls" role="group" aria-label="Filter rows of {escape(suite.label)}">'
        f'{boxes}<label class="search">Search <input type="search" data-search '
        'placeholder="input, output, feedback…"></label></div>'
        '<p class="status" role="status" aria-live="polite"></p>'
        f'<div class="table-wrap"><table class="rows"><thead><tr>{head}</tr></thead>'
        "<tbody></tbody></table></div>"
        '<nav class="pager" aria-label="Row pages">'
        '<button type="button" data-page="prev">← Previous</button> '
        '<span class="page-info"></span> '
        '<button type="button" data-page="next">Next →</button></nav>'
        if suite.rows
        else "<p>No rows were scored.</p>"
    )
    return (
        f'<section class="suite" id="suite-{i}" aria-labelledby="suite-{i}-h">'
        f'<details data-suite="{i}"><summary><h3 id="suite-{i}-h">{escape(suite.label)}</h3> '
        f'<span class="summary-meta">{_score(suite.score) if suite.scored else "not scored"} · '
        f"{counted(suite.rows_total, 'row')} · "
        f'{_verdict(suite.verdict)}</span></summary><div class="suite-body">'
        f'<div class="suite-top"><dl class="facts small">{dl}</dl>'
        f'<figure class="hist">{chart}<figcaption>Row scores</figcaption></figure></div>'
        f"{notes}{table}</div></details></section>"
    )


def _drilldown(run: RunView, runs: Sequence[RunView]) -> tuple[str, list[dict[str, Any]]]:
    previous = previous_suites(runs)
    sections, data = [], []
    for i, suite in enumerate(run.suites):
        old = previous.get(suite.nodeid)
        before = rows_by_key(old) if old is not None and old.scored and suite.scored else {}
        rows = [_row_payload(row, before.get(row.key), len(runs) > 1) for row in suite.rows]
        has = {
            "output": any(r.output is not None for r in suite.rows),
            "delta": any(r[9] is not None for r in rows),
            "calls": any(r.calls for r in suite.rows),
        }
        sections.append(_suite_section(i, suite, rows, has))
        data.append({"label": suite.label, "rows": rows, **has})
    if not sections:
        return "", data
    return (
        '<section id="details" aria-labelledby="details-h"><h2 id="details-h">Suite details</h2>'
        + "".join(sections)
        + "</section>"
    ), data


# --------------------------------------------------------------------------- tests


def _tests(run: RunView) -> str:
    if not run.tests:
        return ""
    rows = "".join(
        f"<tr><td>{escape(t.label)}<div class='nodeid'>{escape(t.nodeid)}</div></td>"
        f"<td>{_verdict(t.outcome)}</td><td class='msg'>{escape(t.message or '')}</td></tr>"
        for t in run.tests
    )
    return (
        '<section id="tests" aria-labelledby="tests-h"><h2 id="tests-h">Test cases</h2>'
        '<table class="tests"><thead><tr><th scope="col">Case</th><th scope="col">Outcome</th>'
        f'<th scope="col">Message</th></tr></thead><tbody>{rows}</tbody></table></section>'
    )


def render_html(runs: Sequence[RunView]) -> str:
    """The report page for one run, or for several (oldest first; the last is shown)."""
    if not runs:
        raise ValueError("render_html needs at least one run")
    run = runs[-1]
    details, data = _drilldown(run, runs)
    interrupted = (
        '<p class="note err" role="alert">The run was interrupted: results are partial.</p>'
        if run.interrupted
        else ""
    )
    if run.stopped:  # -x, --maxfail: the items after the stop did not run
        interrupted = (
            f'<p class="note err" role="alert" id="stopped">The run stopped early '
            f"({escape(run.stopped)}): not every item ran.</p>"
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>pytest-kedi report: {escape(run.verdict)}</title>"
        f"<style>{_asset('viewer.css')}</style></head><body>"
        '<a class="skip" href="#suites">Skip to the suites</a>'
        f"{_header(run, len(runs))}<main>{interrupted}{errors_html(run.errors)}"
        f"{_suites_table(run, runs)}{details}"
        f"{_tests(run)}{history_section(runs)}</main>"
        f"{data_script({'suites': data})}"
        f"<script>{_asset('viewer.js')}</script></body></html>\n"
    )
