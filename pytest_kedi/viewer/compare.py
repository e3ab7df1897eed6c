"""The across-runs part of the HTML report: each suite's score per run as a line chart and
the rows whose score changed between the last two runs (matched by index and input)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_kedi.evals.scoring import change
from pytest_kedi.viewer import svg
from pytest_kedi.viewer.model import RowView, RunView, SuiteView, previous_suites, rows_by_key

__all__ = ["history_section"]

_CHANGED_LIMIT = 500


def _score(value: float) -> str:
    return f"{value:.4f}"


def _delta_text(delta: float) -> str:
    return f"{delta:+.4f}"


def history_section(runs: Sequence[RunView]) -> str:
    if len(runs) < 2:
        return ""
    labels = [f"run {i + 1} ({r.when or r.label})" for i, r in enumerate(runs)]
    order: dict[str, SuiteView] = {}
    for run in runs:
        for suite in run.suites:
            order.setdefault(suite.nodeid, suite)
    head = "".join(f'<th scope="col" class="n">Run {i + 1}</th>' for i in range(len(runs)))
    body = []
    for nodeid, first in order.items():
        found = [next((s for s in r.suites if s.nodeid == nodeid), None) for r in runs]
        points = [s.score if s is not None and s.scored else None for s in found]
        last = next((s for s in reversed(found) if s is not None), first)
        chart = svg.line_chart(
            points,
            threshold=last.threshold,
            labels=labels,
            title=f"Score of {last.label} across {len(runs)} runs",
        )
        cells = "".join(f'<td class="n">{_score(p) if p is not None else "—"}</td>' for p in points)
        body.append(
            f"<tr><td>{escape(last.label)}<div class='nodeid'>{escape(nodeid)}</div></td>"
            f"<td>{chart}</td>{cells}</tr>"
        )
    listing = "".join(
        f"<li>{escape(r.label)}" + (f" ({escape(r.when)})" if r.when else "") + "</li>"
        for r in runs
    )
    return (
        '<section id="history" aria-labelledby="history-h"><h2 id="history-h">Across runs</h2>'
        f'<ol class="runs">{listing}</ol><table class="history"><thead><tr>'
        f'<th scope="col">Suite</th><th scope="col">Score (oldest → latest)</th>{head}'
        f"</tr></thead><tbody>{''.join(body)}</tbody></table>{_changed(runs)}</section>"
    )


def _changed(runs: Sequence[RunView]) -> str:
    before = previous_suites(runs)
    changed: list[tuple[SuiteView, RowView, RowView]] = []
    for suite in runs[-1].suites:
        prior_suite = before.get(suite.nodeid)
        scored = prior_suite is not None and prior_suite.scored and suite.scored
        old = rows_by_key(prior_suite) if scored and prior_suite is not None else {}
        for row in suite.rows:
            prior = old.get(row.key)
            if prior is not None and prior.score != row.score:
                changed.append((suite, prior, row))
    if not changed:
        return "<h3>Changed rows</h3><p>No row changed its score between the last two runs.</p>"
    changed.sort(key=lambda t: change(t[2].score, t[1].score))
    shown = changed[:_CHANGED_LIMIT]
    rows = "".join(
        f"<tr><td>{escape(s.label)}</td><td class='n'>{new.index}</td>"
        f"<td><span class='long' data-long='1'>{escape(new.input or '')}</span></td>"
        f"<td class='n'>{_score(old.score)}</td><td class='n'>{_score(new.score)}</td>"
        f"<td class='n delta {'down' if new.score < old.score else 'up'}'>"
        f"{_delta_text(change(new.score, old.score))}</td></tr>"
        for s, old, new in shown
    )
    more = (
        f"<p>{len(changed) - len(shown)} more changed rows are not listed.</p>"
        if len(changed) > len(shown)
        else ""
    )
    return (
        f"<h3>Changed rows ({len(changed)}, worst first)</h3><table class='changed'><thead><tr>"
        "<th scope='col'>Suite</th><th scope='col'>Row</th><th scope='col'>Input</th>"
        "<th scope='col'>Before</th><th scope='col'>After</th><th scope='col'>Δ</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>{more}"
    )
