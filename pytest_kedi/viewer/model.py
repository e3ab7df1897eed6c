"""Report documents (as ``--kedi-report`` writes them) read into typed view records.

Every field beyond the version-1 schema is optional and read defensively: a report without
repeats, baselines, traces, model counts or collection errors (`errors`) renders without them;
a field of an unexpected type is treated as absent rather than failing the page."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_kedi.constants import TEST_MODEL
from pytest_kedi.evals.scoring import SCORE_DIGITS, change, fell, score_digits
from pytest_kedi.jsontext import ReportFileError, read_report_object
from pytest_kedi.viewer.errors import ErrorView, error_views

__all__ = [
    "SUPPORTED_VERSIONS",
    "ModelCall",
    "ModelCount",
    "ReportError",
    "RowView",
    "RunView",
    "SuiteView",
    "TestView",
    "compared",
    "format_time",
    "read_report",
    "run_view",
]

SUPPORTED_VERSIONS = (1, 2, 3)


class ReportError(Exception):
    """A file that is not a readable pytest-kedi JSON report (message is one line)."""


@dataclass(frozen=True, slots=True)
class ModelCall:
    model: str | None
    prompt: str | None
    instructions: str | None
    answer: str | None
    tokens: str | None
    duration_s: float | None


@dataclass(frozen=True, slots=True)
class RowView:
    index: int
    input: str | None
    expected: str | None
    output: str | None
    score: float
    feedback: str | None
    error: str | None
    error_class: str | None
    flaky: bool
    delta: float | None  # score change against the baseline, when the report has one
    regressed: bool  # the baseline comparison says the row got worse
    calls: tuple[ModelCall, ...]
    retries: int | None = None
    tokens: str | None = None

    @property
    def key(self) -> tuple[int, str | None]:
        """Rows of two runs match by index and input."""
        return (self.index, self.input)


@dataclass(frozen=True, slots=True)
class SuiteView:
    nodeid: str
    label: str  # procedure::metric
    path: str | None
    line: int | None
    score: float
    threshold: float | None
    verdict: str  # passed, failed, skipped or xfail
    rows_total: int
    rows_errored: int
    errors_by_class: tuple[tuple[str, int], ...]
    feedback: str | None
    error: str | None
    duration_s: float | None
    rows: tuple[RowView, ...]
    ci: tuple[float, float] | None
    stderr: float | None
    repeats: int | None
    delta: float | None
    tokens: str | None = None
    #: what the min score applied to: ``lower`` (the interval's lower bound) or the mean
    lower_gate: bool = False
    failure: str | None = None  # why pytest failed it: ``[XPASS(strict)] <reason>``, teardown
    reason: str | None = None  # why pytest skipped it, or expected it to fail (an xfail)

    @property
    def scored(self) -> bool:
        """Whether ``score`` is one, not a placeholder (a skip, an error before scoring)."""
        return self.verdict != "skipped" and self.error is None


def shown_digits(suite: SuiteView) -> int:
    """Decimals of the suite's scores as the terminal shows them (`score_digits`)."""
    gated = suite.ci[0] if suite.lower_gate and suite.ci is not None else suite.score
    return score_digits(gated, suite.threshold) if suite.scored else SCORE_DIGITS


def compared(old: SuiteView | None, new: SuiteView) -> float | None:
    """The change of a suite's score from ``old`` (None: not scored in both runs)."""
    if old is None or not (old.scored and new.scored):
        return None
    return change(new.score, old.score)


@dataclass(frozen=True, slots=True)
class TestView:
    nodeid: str
    label: str
    outcome: str
    message: str | None  # else why pytest skipped it or expected it to fail (the reasons)


@dataclass(frozen=True, slots=True)
class ModelCount:
    name: str
    calls: int | None
    synthetic: bool


@dataclass(frozen=True, slots=True)
class RunView:
    label: str
    when: str | None
    version: int
    suites: tuple[SuiteView, ...]
    tests: tuple[TestView, ...]
    models: tuple[ModelCount, ...]
    interrupted: bool
    exitstatus: int | None
    verdict: str  # passed, failed or interrupted
    tokens: str | None = None
    errors: tuple[ErrorView, ...] = ()  # the files the run could not collect
    stopped: str | None = None  # why pytest stopped before every item ran (-x, --maxfail)


# --------------------------------------------------------------------------- field readers


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: object) -> str | None:
    """A string as is; a list of strings joined one per line (several calls); else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _first(data: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if data.get(key) is not None:
            return data[key]
    return None


def _interval(value: object) -> tuple[float, float] | None:
    """``[low, high]`` or ``{"low"/"lower"/"lo": ..., "high"/"upper"/"hi": ...}``."""
    if isinstance(value, Mapping):
        low, high = _first(value, "low", "lower", "lo"), _first(value, "high", "upper", "hi")
    elif isinstance(value, list | tuple) and len(value) == 2:
        low, high = value
    else:
        return None
    lo, hi = _num(low), _num(high)
    return (lo, hi) if lo is not None and hi is not None and lo <= hi else None


def _delta(data: Mapping[str, Any]) -> float | None:
    """``delta`` as a number, or inside a ``baseline`` object (``delta`` or ``score``)."""
    direct = _num(data.get("delta"))
    if direct is not None:
        return direct
    delta = _map(data.get("delta"))
    if (value := _num(_first(delta, "score", "mean", "value"))) is not None:
        return value
    baseline = _map(data.get("baseline"))
    if (value := _num(baseline.get("delta"))) is not None:
        return value
    before, now = _num(_first(baseline, "score", "mean")), _num(data.get("score"))
    if before is None:
        before = _num(data.get("baseline_score"))
    return now - before if before is not None and now is not None else None


def _tokens(value: object) -> str | None:
    """``15``, or ``requests 1, input 118, output 9`` (a usage mapping's ``*_tokens``)."""
    if (count := _int(value)) is not None:
        return str(count) if count else None
    counts = {k: v for k, v in _map(value).items() if _int(v) is not None}
    if not any(counts.values()):  # no model call: nothing to tell
        return None
    return ", ".join(f"{k.removesuffix('_tokens')} {v}" for k, v in counts.items())


def _call_tokens(data: Mapping[str, object]) -> str | None:
    """A call's tokens: ``tokens``/``usage``, or its ``input_tokens`` and ``output_tokens``."""
    value = _first(data, "tokens", "usage")
    if value is None:
        value = {k: data[k] for k in ("input_tokens", "output_tokens") if k in data}
    return _tokens(value)


def _call(data: object) -> ModelCall | None:
    if not isinstance(data, Mapping):
        return None
    return ModelCall(
        model=_str(data.get("model")),
        prompt=_text(_first(data, "prompt", "messages")),
        instructions=_text(data.get("instructions")),
        answer=_text(_first(data, "answer", "response", "output")),
        tokens=_call_tokens(data),
        duration_s=_num(data.get("duration_s")),
    )


def _row(data: object, position: int) -> RowView | None:
    if not isinstance(data, Mapping):
        return None
    scores = [s for s in (_num(v) for v in _list(data.get("scores"))) if s is not None]
    flaky = data.get("flaky") is True or len(set(scores)) > 1
    delta = _delta(data)
    regressed = data.get("regressed") is True or (delta is not None and fell(delta))
    calls = tuple(c for c in (_call(item) for item in _list(data.get("calls"))) if c is not None)
    index = _int(data.get("index"))
    score = _num(_first(data, "score", "mean"))
    return RowView(
        index=index if index is not None else position,
        input=_text(data.get("input")),
        expected=_text(data.get("expected")),
        output=_text(data.get("output")),
        score=score if score is not None else 0.0,
        feedback=_text(data.get("feedback")),
        error=_text(data.get("error")),
        error_class=_str(data.get("error_class")),
        flaky=flaky,
        delta=delta,
        regressed=regressed,
        calls=calls,
        retries=_int(data.get("retries")),
        tokens=_tokens(_first(data, "tokens", "usage")),
    )


def _suite(data: object, position: int, xfailed: frozenset[str]) -> SuiteView | None:
    if not isinstance(data, Mapping):
        return None
    nodeid = _str(data.get("nodeid")) or f"suite {position}"
    procedure = _str(_first(data, "procedure", "suite")) or nodeid
    metric = _str(data.get("metric"))
    rows = tuple(r for r in (_row(item, i) for i, item in enumerate(_list(data.get("rows")))) if r)
    errors = tuple(
        sorted((str(k), n) for k, v in _map(data.get("errors_by_class")).items() if (n := _int(v)))
    )
    outcome = _str(data.get("outcome")) or "passed"
    xfail = nodeid in xfailed or data.get("xfail") is True or data.get("xfailed") is True
    rows_total, rows_errored = _int(data.get("rows_total")), _int(data.get("rows_errored"))
    score = _num(_first(data, "score", "mean"))
    repeats = _int(_first(data, "repeats", "repeat"))
    # a plain run (rows run once, the min score on the mean) is shown without its interval
    plain = repeats == 1 and data.get("gate") != "lower"
    return SuiteView(
        nodeid=nodeid,
        label=f"{procedure}::{metric}" if metric else procedure,
        path=_str(data.get("path")),
        line=_int(data.get("line")),
        score=score if score is not None else 0.0,
        threshold=_num(data.get("threshold")),
        verdict="xfail" if xfail and outcome == "failed" else outcome,
        rows_total=rows_total if rows_total is not None else len(rows),
        rows_errored=(
            rows_errored if rows_errored is not None else sum(1 for r in rows if r.error_class)
        ),
        errors_by_class=errors,
        feedback=_text(data.get("feedback")),
        error=_text(data.get("error")),
        duration_s=_num(data.get("duration_s")),
        rows=rows,
        ci=None if plain else _interval(_first(data, "ci", "interval", "confidence_interval")),
        stderr=None if plain else _num(_first(data, "stderr", "standard_error")),
        repeats=None if repeats == 1 else repeats,
        delta=_delta(data),
        tokens=_tokens(_first(data, "tokens", "usage")),
        lower_gate=data.get("gate") == "lower",
        failure=_text(data.get("failure")),
        reason=_text(data.get("skip_reason" if outcome == "skipped" else "xfail_reason")),
    )


def _test(data: object, xfailed: frozenset[str]) -> TestView | None:
    if not isinstance(data, Mapping):
        return None
    nodeid = _str(data.get("nodeid")) or "?"
    procedure, case = _str(data.get("procedure")), _str(data.get("case"))
    outcome = _str(data.get("outcome")) or "passed"
    if outcome == "failed" and nodeid in xfailed:  # under an `xfail` marker: expected
        outcome = "xfailed"
    return TestView(
        nodeid=nodeid,
        label=f"{procedure}::{case}" if procedure and case else nodeid,
        outcome=outcome,
        message=_text(data.get("message") or _first(data, "skip_reason", "xfail_reason")),
    )


def _models(value: object) -> tuple[ModelCount, ...]:
    """``{"name": calls}``, ``{"name": {"calls": n, "synthetic": b}}`` or a list of objects."""
    found: list[ModelCount] = []
    items: Iterable[tuple[object, object]]
    if isinstance(value, Mapping):
        items = value.items()
    else:
        items = ((_first(_map(v), "name", "model", "label"), v) for v in _list(value))
    for name, info in items:
        if not isinstance(name, str):
            continue
        details = _map(info)
        calls = _int(info) if not details else _int(_first(details, "calls", "count", "requests"))
        found.append(
            ModelCount(name, calls, details.get("synthetic") is True or name == TEST_MODEL)
        )
    return tuple(sorted(found, key=lambda m: m.name))


def run_view(
    document: Mapping[str, Any],
    *,
    label: str,
    when: str | None = None,
    exitstatus: int | None = None,
    xfailed: Iterable[str] = (),
) -> RunView:
    """One report document as a `RunView` (raises `ReportError` on a wrong shape)."""
    if not isinstance(document, Mapping) or not isinstance(document.get("suites", []), list):
        raise ReportError(f"{label}: not a pytest-kedi JSON report (no 'suites' list)")
    version = _int(document.get("version"))
    if version not in SUPPORTED_VERSIONS:
        raise ReportError(
            f"{label}: report version {json.dumps(document.get('version'))} is not supported "
            f"(this pytest-kedi reads versions {', '.join(map(str, SUPPORTED_VERSIONS))})"
        )
    recorded = _list(document.get("xfailed"))
    frozen_xfailed = frozenset(xfailed) | frozenset(str(nodeid) for nodeid in recorded)
    suites = tuple(
        s
        for s in (_suite(d, i, frozen_xfailed) for i, d in enumerate(document.get("suites", [])))
        if s is not None
    )
    found = (_test(d, frozen_xfailed) for d in _list(document.get("tests")))
    tests, errors = tuple(t for t in found if t is not None), error_views(document.get("errors"))
    status = exitstatus if exitstatus is not None else _int(document.get("exitstatus"))
    # A report says whether Ctrl-C or SIGTERM ended the run; status 2 is also pytest-xdist's
    # for a run `-x` stopped, so it counts only for documents that do not say.
    interrupted = document.get("interrupted") is True or (
        "interrupted" not in document and status == 2
    )
    if interrupted:
        verdict = "interrupted"
    elif status is not None:
        verdict = "passed" if status in (0, 5) else "failed"
    else:
        failed = any(s.verdict == "failed" for s in suites) or bool(errors)
        verdict = "failed" if failed or any(t.outcome == "failed" for t in tests) else "passed"
    stamp = _str(_first(document, "created", "when", "started", "timestamp")) or when
    return RunView(
        label=label,
        when=stamp,
        version=version,
        suites=suites,
        tests=tests,
        models=_models(_first(document, "model_calls", "models")),
        interrupted=interrupted,
        exitstatus=status,
        verdict=verdict,
        tokens=_tokens(_first(document, "tokens", "usage")),
        errors=errors,
        stopped=_str(document.get("stopped")) if not interrupted else None,
    )


def read_report(path: str | Path) -> RunView:
    """Read a JSON report file; every problem is one located `ReportError` line."""
    try:
        document = read_report_object(path)
    except ReportFileError as exc:
        raise ReportError(str(exc)) from None
    modified = datetime.fromtimestamp(Path(path).stat().st_mtime, tz=UTC)
    return run_view(document, label=str(path), when=format_time(modified) + " (file time)")


def format_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z")


def rows_by_key(suite: SuiteView) -> dict[tuple[int, str | None], RowView]:
    return {row.key: row for row in suite.rows}


def previous_suites(runs: Sequence[RunView]) -> dict[str, SuiteView]:
    """The suites of the run before the last one, by node id (empty with one run)."""
    return {s.nodeid: s for s in runs[-2].suites} if len(runs) > 1 else {}
