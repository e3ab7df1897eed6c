"""``--kedi-rows auto``: summary only where sub-results are mishandled (issue 7 §6, §12)."""

from __future__ import annotations

import json

import pytest
from kedi_marks import recorded_hooks
from kedi_plugin_helpers import Kedi

#: Score 0.5 over 4 rows; row 1 has feedback with characters HTML must escape.
SCORES = """\
@eval: wc:
  > data: samples:
    = `[("one two", 2), ("one", 3), ("a b c", 3), ("x", 2)]`
  > metric: exact(samples):
    = `(1.0, None) if len(samples.split()) == expected else (0.0, "<got> & wrong")`
"""

TEAMCITY = ("-p", "teamcity.pytest_plugin")
HTML = ("-p", "pytest_metadata.plugin", "-p", "pytest_html.plugin")
JSON_REPORT = ("-p", "pytest_jsonreport.plugin")
ALLURE = ("-p", "allure_pytest.plugin")


def _subtests(reprec: pytest.HookRecorder) -> list[pytest.SubtestReport]:
    reports = reprec.getreports("pytest_runtest_logreport")
    return [r for r in reports if isinstance(r, pytest.SubtestReport)]


@recorded_hooks
@pytest.mark.parametrize(
    ("module", "env", "args", "mode"),
    [
        # teamcity-messages installed: its own switch decides, not its presence
        ("teamcity", None, TEAMCITY, "subtests"),
        ("teamcity", "LOCAL", TEAMCITY, "summary"),
        ("teamcity", "LOCAL", (*TEAMCITY, "--no-teamcity"), "subtests"),
        ("teamcity", None, (*TEAMCITY, "--teamcity"), "summary"),
        ("teamcity", "LOCAL", (*TEAMCITY, "--kedi-rows", "subtests"), "subtests"),
        (None, "LOCAL", (), "subtests"),  # no plugin: nothing writes service messages
        # report plugins that mishandle sub-results, when switched on
        ("pytest_html", None, (*HTML, "--html=report.html"), "summary"),
        ("pytest_html", None, HTML, "subtests"),
        ("pytest_html", None, (*HTML, "--html=r.html", "--kedi-rows=subtests"), "subtests"),
        ("pytest_jsonreport", None, (*JSON_REPORT, "--json-report"), "summary"),
        ("pytest_jsonreport", None, JSON_REPORT, "subtests"),
        ("allure_pytest", None, (*ALLURE, "--alluredir=allure"), "summary"),
        ("allure_pytest", None, ALLURE, "subtests"),
    ],
)
def test_auto_rows_mode_follows_the_plugins_own_switch(
    kedi: Kedi,
    monkeypatch: pytest.MonkeyPatch,
    module: str | None,
    env: str | None,
    args: tuple[str, ...],
    mode: str,
) -> None:
    if module is not None:
        pytest.importorskip(module)
    if env is not None:
        monkeypatch.setenv("TEAMCITY_VERSION", env)
    kedi.write("scores.kedi", SCORES)
    reprec = kedi.inline("--kedi-eval", *args)
    assert bool(_subtests(reprec)) is (mode == "subtests")
    calls = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call"]
    assert [r.outcome for r in calls if not isinstance(r, pytest.SubtestReport)] == ["passed"]


def test_report_header_names_why_auto_picked_summary(kedi: Kedi) -> None:
    pytest.importorskip("pytest_jsonreport")
    kedi.write("scores.kedi", SCORES)
    result = kedi.run("--kedi-eval", *JSON_REPORT, "--json-report")
    result.stdout.fnmatch_lines(["kedi: evals on, rows summary (auto: --json-report)*"])
    report = json.loads((kedi.pytester.path / ".report.json").read_text(encoding="utf-8"))
    assert [t["outcome"] for t in report["tests"]] == ["passed"]


def test_pytest_html_shows_the_rows_table_in_summary_mode(kedi: Kedi) -> None:
    pytest.importorskip("pytest_html")
    kedi.write("scores.kedi", SCORES)
    result = kedi.subprocess("--kedi-eval", *HTML, "--html=report.html", "--self-contained-html")
    result.assert_outcomes(passed=1)
    page = (kedi.pytester.path / "report.html").read_text(encoding="utf-8")
    # pytest-html embeds the results as HTML-escaped JSON: the table is escaped twice
    assert "kedi-rows" in page
    assert "&amp;lt;got&amp;gt; &amp;amp; wrong" in page
    assert "SUBPASSED" not in page and "subtests passed" not in page


LONG = """\
@eval: long:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `(0.0, "feedback " + "x" * 300 + " END")`
"""


@pytest.mark.parametrize("rows", ["summary", "subtests"])
def test_verbose_output_shows_row_feedback_unclipped(kedi: Kedi, rows: str) -> None:
    """README: ``-v`` adds one line per row and does not clip long feedback."""
    kedi.write("long.kedi", LONG)
    quiet = kedi.run("--kedi-eval", "--kedi-rows", rows).stdout.str()
    assert "x" * 300 + " END" not in quiet
    verbose = kedi.run("--kedi-eval", "--kedi-rows", rows, "-v")
    verbose.stdout.fnmatch_lines(
        ["    row 0: score 0.0000 | input 1 | feedback " + "x" * 300 + " END"]
    )
    if rows == "subtests":
        verbose.stdout.fnmatch_lines(
            ["*SUBPASSED[[]row 0: 0.0000 | feedback " + "x" * 300 + " END[]]*"]
        )


@recorded_hooks
def test_every_rows_report_is_the_report_pytests_constructors_make(kedi: Kedi) -> None:
    """Rows after the first get reports made by setting attributes (`rows._fast_reports`):
    each is what `pytest.SubtestReport(...)` with a `SubtestContext` makes, without a
    dictionary of its own for the garbage collector to walk."""
    import gc

    from _pytest.subtests import SubtestContext

    from pytest_kedi.plugin import rows

    kedi.write("scores.kedi", SCORES)
    reports = _subtests(kedi.inline("--kedi-eval"))
    assert [report.context.msg for report in reports] == [
        "row 0: 1.0000",
        "row 1: 0.0000 | <got> & wrong",
        "row 2: 1.0000",
        "row 3: 0.0000 | <got> & wrong",
    ]
    # Read before `vars()` below, which gives a report its dictionary.
    own_dicts = [
        any(type(ref) is dict and "_id" in ref for ref in gc.get_referents(report))
        for report in reports
    ]
    assert own_dicts == [True, False, False, False]  # the first is pytest's own
    for report in reports:
        made = pytest.SubtestReport(
            report.nodeid,
            report.location,
            report.keywords,
            "passed",
            None,
            "call",
            (),
            report.duration,
            report.start,
            report.stop,
            None,
            context=SubtestContext(msg=report.context.msg, kwargs={}),
        )
        assert tuple(vars(made)) == rows._REPORT_FIELDS  # the installed pytest's shape
        assert vars(report) == vars(made)
        assert report.context == made.context
        assert report._to_json() == made._to_json()  # what xdist sends
    first, *others = reports
    for report in others:  # nothing shared but what pytest's constructors share
        assert report.user_properties is not first.user_properties
        assert report.sections is not first.sections
        assert report.context.kwargs is not first.context.kwargs
        assert report.keywords is first.keywords


@recorded_hooks
@pytest.mark.parametrize("enabled", [True, False])
def test_garbage_collection_is_paused_only_while_rows_are_reported(
    kedi: Kedi, enabled: bool
) -> None:
    """Collection is off while the rows' reports are logged and as it was afterwards
    (a run that had switched it off keeps it off)."""
    import gc

    import pytest_kedi.plugin

    seen: list[bool] = []

    class Watch:
        @pytest.hookimpl
        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            if report.when == "call":
                seen.append(gc.isenabled())

    kedi.write("scores.kedi", SCORES)
    was = gc.isenabled()
    if not enabled:
        gc.disable()
    try:
        kedi.pytester.inline_run("--kedi-eval", plugins=[Watch(), pytest_kedi.plugin])
        after = gc.isenabled()
    finally:
        if was:
            gc.enable()
    assert seen == [False] * 4 + [enabled]  # four rows, then the suite's own report
    assert after is enabled


def test_a_rows_label_shows_control_characters_as_escapes(kedi: Kedi) -> None:
    """A row's sub-result label wrote a metric's ESC sequences to the terminal as they
    were (``\\x1b[2J`` cleared the screen), where the kedi summary escapes them."""
    kedi.write(
        "esc.kedi",
        "@eval: esc:\n  > data: xs:\n    = `[1]`\n  > metric: m(xs):\n"
        '    = `(0.5, "fb \\x1b[2J\\x1b[31mRED")`\n',
    )
    result = kedi.run("--kedi-eval", "-v")
    out = result.stdout.str()
    assert "\x1b" not in out
    result.stdout.fnmatch_lines(["*SUBPASSED[[]row 0: 0.5000 | fb \\x1b[[]2J\\x1b[[]31mRED[]]*"])


HOOKS_CONFTEST = """\
import pytest

SEEN = {"impl": 0, "wrapped": 0}


@pytest.hookimpl(wrapper=True, specname="pytest_runtest_logreport")
def pytest_wrap_logreport(report):
    before = SEEN["impl"]
    result = yield
    if isinstance(report, pytest.SubtestReport) and SEEN["impl"] == before + 1:
        SEEN["wrapped"] += 1  # the wrapper ran around the plain implementation
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    if isinstance(report, pytest.SubtestReport):
        SEEN["impl"] += 1


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"root saw {SEEN['impl']} rows, {SEEN['wrapped']} wrapped")
"""


def test_every_row_reaches_conftest_hooks_and_wrappers(kedi: Kedi) -> None:
    """Each row's sub-result goes through ``pytest_runtest_logreport`` as pytest calls
    it: every implementation and wrapper sees it, the wrapper around the others."""
    kedi.write("conftest.py", HOOKS_CONFTEST)
    kedi.write("scores.kedi", SCORES)
    kedi.write("more.kedi", SCORES.replace("wc", "wc2"))
    result = kedi.run("--kedi-eval", "--kedi-rows", "subtests")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["root saw 8 rows, 8 wrapped"])


SUB_CONFTEST = """\
import pytest

SEEN = []


def pytest_runtest_logreport(report):
    if isinstance(report, pytest.SubtestReport):
        SEEN.append(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"sub saw {sorted(set(SEEN))} {len(SEEN)}")
"""


@pytest.mark.single_process("a conftest's hooks see all reports on the xdist controller")
def test_rows_reach_only_the_conftests_of_their_file(kedi: Kedi) -> None:
    """A conftest in a sub-directory gets the sub-results of the files under it only,
    as it gets their items' reports (pytest's ``item.ihook``)."""
    kedi.write("scores.kedi", SCORES)
    kedi.write("sub/conftest.py", SUB_CONFTEST)
    kedi.write("sub/inner.kedi", SCORES.replace("wc", "wc2"))
    result = kedi.run("--kedi-eval", "--kedi-rows", "subtests")
    result.assert_outcomes(passed=2)
    assert "sub saw ['sub/inner.kedi::eval:wc2'] 4" in result.outlines


def test_a_hook_caller_of_unknown_shape_is_called_as_it_is() -> None:
    """Rows are logged through pluggy's executor only when the hook caller has the
    attributes pytest-kedi knows; any other caller is called with ``report=``."""
    from pytest_kedi.plugin import rows

    seen: list[object] = []

    def caller(**kwargs: object) -> None:
        seen.append(kwargs)

    for call, with_report in rows._row_logger(caller):
        call("the report") if with_report else call()
    assert seen == [{"report": "the report"}]


ORDER_CONFTEST = """\
import pytest

ORDER = {"rows": [], "suite": []}


def _saw(report, name):
    if report.when == "call":
        key = "rows" if isinstance(report, pytest.SubtestReport) else "suite"
        ORDER[key].append(name)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    _saw(report, "first")


@pytest.hookimpl(trylast=True, specname="pytest_runtest_logreport")
def pytest_last_logreport(report):
    _saw(report, "last")


@pytest.hookimpl(specname="pytest_runtest_logreport")
def pytest_bare_logreport():
    ORDER["bare"] = ORDER.get("bare", 0) + 1


def pytest_terminal_summary(terminalreporter):
    rows, suite = ORDER["rows"], ORDER["suite"]
    terminalreporter.write_line(f"rows {rows}")
    terminalreporter.write_line(f"suite {suite}")
    terminalreporter.write_line(f"bare {ORDER['bare']}")
"""


def test_rows_reach_every_implementation_in_pluggys_order(kedi: Kedi) -> None:
    """Without wrappers, each row's report reaches every ``pytest_runtest_logreport``
    implementation (one taking no argument too) in the order pluggy calls them for any
    report: tryfirst before trylast."""
    kedi.write("conftest.py", ORDER_CONFTEST)
    kedi.write("scores.kedi", SCORES)
    result = kedi.run("--kedi-eval", "--kedi-rows", "subtests")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [f"rows {['first', 'last'] * 4}", "suite ['first', 'last']", "bare 7"]
    )


@pytest.mark.single_process("the debug log of the one process that logs the rows")
def test_traced_hook_calls_trace_every_rows_report(kedi: Kedi) -> None:
    """Under pytest's ``--debug`` (hook calls traced), every row's report is logged through
    pluggy's traced executor: the debug log lists each one."""
    kedi.write("scores.kedi", SCORES)
    result = kedi.run("--kedi-eval", "--kedi-rows", "subtests", "--debug=trace.log")
    result.assert_outcomes(passed=1)
    text = (kedi.pytester.path / "trace.log").read_text(encoding="utf-8")
    assert text.count("pytest_runtest_logreport [hook]") >= 4 + 3
    assert text.count("SubtestReport") >= 4
