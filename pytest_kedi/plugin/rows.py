"""Row sub-results: pytest's built-in subtest reports, emitted after the suite is scored.

Design (documented in the README): every row is reported as a **passed** subtest whose
label carries its score and feedback, e.g. ``SUBPASSED[row 1: 0.0000 | error: KeyError: 'x']``.
pytest counts every failed report as a session failure, so a failed row report would
make the run fail even when the suite passes; the suite item alone carries the verdict.
Labels travel in ``msg`` with empty kwargs (xdist would repr kwargs twice).

This module is the only place that touches pytest's private subtest API
(``_pytest.subtests.SubtestContext``) and the capture manager's
``global_and_fixture_disabled``; without them rows fall back to the summary form.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import html
import os
import time
from collections.abc import Callable, Sequence
from math import copysign
from types import MemberDescriptorType
from typing import TYPE_CHECKING, Any, Literal

import pytest

from pytest_kedi.plugin.listener import ReportListener
from pytest_kedi.text import one_line, printable, truncate

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult

try:
    from _pytest.subtests import SubtestContext
except ImportError:  # pragma: no cover - pytest without built-in subtests
    SubtestContext = None  # type: ignore[assignment,misc]

__all__ = [
    "SUBTESTS_AVAILABLE",
    "add_html_rows",
    "add_summary_rows",
    "emit_row_reports",
    "located_feedback",
    "row_label",
    "row_line",
    "rows_html",
    "rows_section",
    "shown_passes",
    "summary_reason",
]

SUBTESTS_AVAILABLE = SubtestContext is not None and hasattr(pytest, "SubtestReport")
_LABEL_FEEDBACK = 120
#: A row report's loggers (`_row_logger`): functions, each with whether it takes the report.
Calls = tuple[tuple[Callable[..., object], bool], ...]


#: Report plugins that mishandle sub-results, by the option that switches them on:
#: pytest-html lists a failed suite twice (Passed and Failed) and hides the rows,
#: pytest-json-report calls the suite "subtests passed", allure-pytest splits it.
_REPORT_PLUGINS = (("htmlpath", "--html"), ("json_report", "--json-report"),
                   ("allure_report_dir", "--alluredir"))  # fmt: skip


def _teamcity_active(config: pytest.Config) -> bool:
    """teamcity-messages' own switch: --no-teamcity, else --teamcity, else TEAMCITY_VERSION.

    Installed but not switched on, the plugin writes no service messages, so rows can be
    sub-results; without the plugin, ``TEAMCITY_VERSION`` alone changes nothing either.
    """
    if getattr(config, "_teamcityReporting", None) is not None:  # it already switched on
        return True
    option = config.option
    if not hasattr(option, "teamcity"):  # teamcity-messages is not loaded
        return False
    if getattr(option, "no_teamcity", 0):
        return False
    return bool(option.teamcity) or bool(os.environ.get("TEAMCITY_VERSION"))


def summary_reason(config: pytest.Config) -> str | None:
    """Why ``--kedi-rows auto`` picks summary here, or None (then it picks subtests)."""
    if config.pluginmanager.hasplugin("vscode_pytest"):
        return "VS Code"
    if _teamcity_active(config):
        return "TeamCity messages (PyCharm)"
    for dest, flag in _REPORT_PLUGINS:
        if getattr(config.option, dest, None):
            return flag
    return None


def row_label(row: RowResult, *, limit: int | None = _LABEL_FEEDBACK) -> str:
    """``row 3: 0.5000 | feedback`` (feedback on one line as `one_line` puts it, its own
    spacing kept, and cut to ``limit``); a repeated row adds its repeats' scores
    (``row 3: 0.5000 [1, 0]``), a carried-over row says so."""
    label = f"row {row.index}: {row.score:.4f}"
    if len(row.scores) > 1:
        label += f" [{', '.join(f'{score:g}' for score in row.scores)}]"
    if row.carried_over:
        label += " (carried over)"
    if row.feedback:  # an empty feedback is none, as on the suite's line
        label += f" | {printable(truncate(one_line(row.feedback), limit))}"  # no escapes
    return label


def row_line(row: RowResult, *, limit: int | None) -> str:
    """One row as a line of text: ``row 5: score 0.0000 | input 'How do I delete my account?'
    | expected 'account' | output 'billing' | feedback`` (feedback clipped to ``limit``), with
    the repeats' scores and a carried-over mark as in `row_label`. The ``-v`` row lines, the
    ``kedi rows`` report section and a failed suite's worst rows all use it."""
    line = f"row {row.index}: score {row.score:.4f}"
    if len(row.scores) > 1:
        line += f" [{', '.join(f'{score:g}' for score in row.scores)}]"
    if row.carried_over:
        line += " (carried over)"
    # Written out: the ``kedi rows`` section makes one line per row of every suite.
    if row.input is not None:
        line += " | input " + row.input
    if row.expected is not None:
        line += " | expected " + row.expected
    if row.output is not None:
        line += " | output " + row.output
    feedback = located_feedback(row)
    if feedback:  # an empty feedback is none, as on the suite's line
        line += " | " + truncate(one_line(feedback), limit)
    return line


def located_feedback(row: RowResult) -> str | None:
    """The row's feedback, with its error's `.kedi` location when the row raised:
    ``error: ValueError: bad (at lib.kedi:3)`` (the feedback itself stays Kedi's
    ``error: <ExceptionType>: <message>``; ``row.error`` carries the location)."""
    feedback, error = row.feedback, row.error
    if (
        error is not None
        and feedback is not None
        and feedback.startswith("error: ")
        and len(error) > len(feedback) - 7
        and error.startswith(feedback[7:])
    ):
        return "error: " + error
    return feedback


def rows_section(rows: Sequence[RowResult]) -> str:
    """The rows as text, for the item's ``kedi rows`` report section (summary mode): one
    `row_line` each. The commonest row (run once, input, expected and output, no feedback)
    is written in one step: this runs for every row of every suite in summary mode."""
    lines: list[str] = []
    append = lines.append
    for row in rows:
        shown, expected, output = row.input, row.expected, row.output
        if (
            shown is not None
            and expected is not None
            and output is not None
            and row.feedback is None
            and len(row.scores) == 1
            and not row.carried_over
        ):
            append(
                f"row {row.index}: score {row.score:.4f} | input {shown} | expected {expected}"
                f" | output {output}"
            )
        else:
            append(row_line(row, limit=400))
    return "\n".join(lines)


def add_summary_rows(config: pytest.Config, rows: Sequence[RowResult], report: Any) -> None:
    """Summary mode: the rows on the item's call report. The ``kedi rows`` section goes
    where pytest shows it (README: a failed item's report; a passed one's with ``-rP`` or
    ``-rA``, an xpassed one's with ``-rX``), made only then: on a passed suite's report it
    would cost a line per row that nobody reads. pytest-html gets its rows table."""
    if report.failed or (
        report.passed and shown_passes(config, "X" if hasattr(report, "wasxfail") else "P")
    ):
        sections = report.sections
        title = "Captured kedi rows call"
        at = next(  # where pytest put it: after the setup's sections, before the call's
            (i for i, (name, _) in enumerate(sections) if not name.endswith(" setup")),
            len(sections),
        )
        sections.insert(at, (title, rows_section(rows)))
    add_html_rows(config, rows, report)


def shown_passes(config: pytest.Config, char: str) -> bool:
    """Whether pytest's short summary shows the sections of passed (``P``) or xpassed
    (``X``) tests: ``-r`` read as pytest reads it (``a`` is ``sxXEf``, ``A`` is
    ``PpsxXEf``, ``N`` none, each resetting what came before)."""
    chosen = ""
    for given in getattr(config.option, "reportchars", None) or "":
        if given == "a":
            chosen = "sxXEf"
        elif given == "A":
            chosen = "PpsxXEf"
        elif given == "N":
            chosen = ""
        else:
            chosen += given
    return char in chosen


def add_html_rows(config: pytest.Config, rows: Sequence[RowResult], report: Any) -> None:
    """pytest-html (``--html``) in summary mode: the rows table in the item's extras."""
    if not getattr(config.option, "htmlpath", None):
        return
    try:
        from pytest_html import extras
    except ImportError:  # pragma: no cover - --html without pytest-html is not an option
        return
    previous = list(getattr(report, "extras", []))
    report.extras = [*previous, extras.html(rows_html(rows))]


def rows_html(rows: Sequence[RowResult]) -> str:
    """The rows as an HTML table (pytest-html's extras, summary mode), every value escaped."""
    names = ("row", "score", "input", "expected", "output", "feedback")
    head = "".join(f"<th>{name}</th>" for name in names)
    body = []
    for row in rows:
        cells = (row.index, f"{row.score:.4f}", row.input, row.expected, row.output, row.feedback)
        body.append(
            "<tr>"
            + "".join(f"<td>{html.escape('' if c is None else str(c))}</td>" for c in cells)
            + "</tr>"
        )
    return f'<table class="kedi-rows"><tr>{head}</tr>{"".join(body)}</table>'


#: The attributes pytest's `TestReport.__init__` sets on a sub-result, in its order, with
#: ``context`` from `pytest.SubtestReport` (pytest 9). When the installed pytest makes
#: exactly these, a row's report is made by setting them (`_fast_reports`).
_REPORT_FIELDS = (
    "_id", "location", "keywords", "outcome", "longrepr", "when",
    "user_properties", "sections", "duration", "start", "stop", "context",
)  # fmt: skip
#: Whether pytest's `SubtestContext` has exactly the fields a row's context is given, in
#: slots (`_fast_reports` sets them through the slots' descriptors).
_CONTEXT_KNOWN = (
    SUBTESTS_AVAILABLE
    and tuple(field.name for field in dataclasses.fields(SubtestContext)) == ("msg", "kwargs")
    and all(type(vars(SubtestContext).get(n)) is MemberDescriptorType for n in ("msg", "kwargs"))
)


def emit_row_reports(item: pytest.Item, rows: Sequence[RowResult]) -> None:
    """Log one passed `pytest.SubtestReport` per row, with capture suspended.

    Per row only the report itself is built: the hook caller, the keywords, the location
    and the parsed node id are looked up once and shared by every row's report. The
    first row's report is made by pytest's constructors; the others, when pytest's
    constructors made exactly the attributes this module knows, by setting the same
    attributes to the same values (`_fast_reports`).

    Cyclic garbage collection is paused while the reports are logged: pytest keeps every
    report until the session ends, so each collection the reports trigger walks all those
    made so far (and the suite's rows) again, for nothing: the reports hold no cycles.
    Then they join the objects the eval item's `older_objects_frozen` block froze
    (`freeze_new_objects`), so that the young generations' collections that follow do not
    walk them either. Garbage that hooks make meanwhile is collected before the freeze,
    in the one walk of the reports that costs.
    """
    if not SUBTESTS_AVAILABLE or not rows:
        return
    from pytest_kedi.runtime.heap import freeze_new_objects

    capman = item.config.pluginmanager.getplugin("capturemanager")
    suspend = capman.global_and_fixture_disabled() if capman is not None else None
    collecting = gc.isenabled()
    gc.disable()
    try:
        with suspend if suspend is not None else contextlib.nullcontext():
            _log_reports(item, rows)
        # the reports, to the oldest generation (one walk, which frees what hooks left)
        freeze_new_objects(collect=collecting)
    finally:
        if collecting:
            gc.enable()


def _log_reports(item: pytest.Item, rows: Sequence[RowResult]) -> None:
    keywords: dict[str, Literal[1]] = dict.fromkeys(item.keywords, 1)
    limit = None if item.config.get_verbosity() > 0 else _LABEL_FEEDBACK  # -v: unclipped
    calls = _row_logger(item.ihook.pytest_runtest_logreport)
    location = item.location
    make = pytest.SubtestReport
    now = time.time()
    first = rows[0]
    report = make(
        item.nodeid,
        location,
        keywords,
        "passed",
        None,
        "call",
        (),
        first.duration_s,
        now - first.duration_s,
        now,
        None,
        context=SubtestContext(msg=row_label(first, limit=limit), kwargs={}),
    )
    known = _CONTEXT_KNOWN and tuple(vars(report)) == _REPORT_FIELDS
    for call, with_report in calls:
        call(report) if with_report else call()
    if known:
        _fast_reports(report, rows, limit, now, calls)
        return
    node_id: Any = report.id  # parsed by the first report; its parsed id is reused
    for row in rows[1:]:
        duration = row.duration_s
        context = SubtestContext(msg=row_label(row, limit=limit), kwargs={})
        report = make(
            node_id,
            location,
            keywords,
            "passed",
            None,
            "call",
            (),
            duration,
            now - duration,
            now,
            None,
            context=context,
        )
        for call, with_report in calls:
            call(report) if with_report else call()


def _row_logger(caller: Any) -> Calls:
    """The functions that log a row's report: called in order, each with it (or, paired
    with False, with nothing), they do what ``caller(report=report)`` does, the hook called
    as pluggy's `HookCaller.__call__` calls it, with the implementations it would call
    listed once for the suite's rows rather than copied and checked for every row, and
    without pytest-kedi's own `ReportListener`, which ignores sub-results.

    When no implementation is a wrapper, each takes the report or nothing, and hook calls
    are not traced or monitored (pytest's ``--debug``), these are the implementations'
    functions, in the order pluggy's `_multicall` calls them (results ignored, as there for
    this hook; one raising stops the others); otherwise one calls pluggy's executor.
    A hook caller without pluggy's known attributes is called as it is."""
    hookexec = getattr(caller, "_hookexec", None)
    get_impls = getattr(caller, "get_hookimpls", None)
    spec = getattr(caller, "spec", None)
    name = getattr(caller, "name", None)
    if (
        hookexec is None
        or get_impls is None
        or spec is None
        or getattr(spec, "kwargdefaults", None)  # (pluggy 1.7: defaults it would apply)
        or spec.opts.get("firstresult")
        or tuple(spec.argnames) != ("report",)
        or caller.is_historic()
    ):
        return ((lambda report: caller(report=report), True),)
    impls = [impl for impl in get_impls() if not isinstance(impl.plugin, ReportListener)]
    if _plain_calls(hookexec) and all(
        not impl.wrapper
        and not impl.hookwrapper
        and tuple(impl.argnames) in (("report",), ())
        and not impl.kwargnames
        for impl in impls
    ):
        return tuple((impl.function, bool(impl.argnames)) for impl in reversed(impls))

    def log(report: pytest.TestReport) -> object:
        return hookexec(name, impls, {"report": report}, False)

    return ((log, True),)


def _plain_calls(hookexec: Any) -> bool:
    """Whether ``hookexec`` (a hook caller's ``_hookexec``) is pluggy's plugin manager's,
    running hooks with pluggy's `_multicall` as it is: no tracing or monitoring of hook
    calls installed (``enable_tracing``, ``add_hookcall_monitoring``)."""
    try:
        from pluggy import PluginManager
        from pluggy._callers import _multicall
    except ImportError:  # pragma: no cover - a pluggy without these
        return False
    manager = getattr(hookexec, "__self__", None)
    return (
        isinstance(manager, PluginManager)
        and getattr(type(manager), "_hookexec", None) is PluginManager._hookexec
        and getattr(hookexec, "__func__", None) is PluginManager._hookexec
        and vars(manager).get("_inner_hookexec") is _multicall
    )


def _fast_reports(
    first: pytest.SubtestReport,
    rows: Sequence[RowResult],
    limit: int | None,
    now: float,
    calls: Calls,
) -> None:
    """Log the reports of ``rows[1:]``, each made as pytest's constructors make ``first``
    (the same attributes in the same order, lists of their own, an empty ``kwargs`` of
    their own), without their generic work: normalizing the node id, copying empty lists,
    and ``TestReport.__init__``'s ``__dict__.update(extra)``, which gives every report a
    dictionary of its own for the garbage collector to walk (pytest keeps every report
    until the session ends, then collects garbage).

    The commonest row (run once, no feedback, not carried over) has its `row_label` made
    here, its score of 1 or 0 written without formatting a float; a context's two fields
    are set through their slots' descriptors (what ``object.__setattr__`` finds, without
    looking them up by name)."""
    new = object.__new__
    make = type(first)
    context_type = type(first.context)
    set_msg, set_kwargs = vars(context_type)["msg"].__set__, vars(context_type)["kwargs"].__set__
    node_id, location, keywords = first._id, first.location, first.keywords
    for row in rows[1:]:
        if row.feedback is None and not row.carried_over and len(row.scores) == 1:
            score = row.score
            if score == 1.0:
                label = f"row {row.index}: 1.0000"
            elif score == 0.0 and copysign(1.0, score) > 0.0:  # (-0.0 shows its sign)
                label = f"row {row.index}: 0.0000"
            else:
                label = f"row {row.index}: {score:.4f}"
        else:
            label = row_label(row, limit=limit)
        context = new(context_type)
        set_msg(context, label)
        set_kwargs(context, {})
        duration = row.duration_s
        report = new(make)
        report._id = node_id
        report.location = location
        report.keywords = keywords
        report.outcome = "passed"
        report.longrepr = None
        report.when = "call"
        report.user_properties = []
        report.sections = []
        report.duration = duration
        report.start = now - duration
        report.stop = now
        report.context = context
        for call, with_report in calls:
            call(report) if with_report else call()
