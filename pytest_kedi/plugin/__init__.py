"""pytest-kedi's pytest plugin (the ``pytest11`` entry point ``kedi``): hook implementations only.

Options live in `options`, session state in `state`, collection in `collect`, items in
`items`, row sub-results in `rows` and controller-side reporting in `reporting`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Generator
from pathlib import Path

import pytest

from pytest_kedi.plugin import options
from pytest_kedi.plugin.collect import EVAL_SKIP_REASON, KediFile, is_kedi_program
from pytest_kedi.plugin.gating import UnmatchedGates
from pytest_kedi.plugin.items import SUITE_ENTRY, KediEvalItem
from pytest_kedi.plugin.outputs import check_report_paths
from pytest_kedi.plugin.reporting import KediReporter, attach_entries
from pytest_kedi.plugin.rows import SUBTESTS_AVAILABLE, rows_html
from pytest_kedi.plugin.state import MODEL_CALLS_KEY, STATE_KEY, KediState, get_state

__all__ = [
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_configure",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_runtestloop",
    "pytest_sessionfinish",
    "pytest_testnodedown",
    "pytest_terminal_summary",
]

_MARKERS = (
    "kedi: a Kedi item (an @eval: suite or a @test: case) collected from a .kedi file",
    "kedi_eval: a Kedi @eval: suite (runs with --kedi-eval or KEDI_EVAL=1)",
    "kedi_test: a Kedi @test: case",
)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_kedi import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.register(parser)


def pytest_configure(config: pytest.Config) -> None:
    for marker in _MARKERS:
        config.addinivalue_line("markers", marker)
    # Row sub-results need pytest's built-in `subtests` plugin (not disabled by `-p no:subtests`).
    subtests = SUBTESTS_AVAILABLE and config.pluginmanager.hasplugin("subtests")
    settings = options.resolve(config, subtests_available=subtests)
    config.stash[STATE_KEY] = KediState(config=config, settings=settings)
    if not hasattr(config, "workerinput"):  # the xdist controller, or no xdist at all
        if not settings.collect:
            _refuse_uncollected_kedi_args(config.args)
        check_report_paths(settings.report_path, settings.rows_jsonl_path)
        config.pluginmanager.register(KediReporter(config, settings), "kedi-reporter")
        if settings.collect and settings.min_scores:
            config.pluginmanager.register(UnmatchedGates(config, settings), "kedi-gates")
    _stop_on_sigterm(config)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def _stop_on_sigterm(config: pytest.Config) -> None:
    """SIGTERM ends the run like Ctrl-C: pytest finishes the session, so the reports are
    written for what finished and say ``"interrupted": true``. Only when nobody else
    handles SIGTERM, from the main thread; the previous handler returns at unconfigure."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    previous = signal.signal(signal.SIGTERM, _terminate)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    config.add_cleanup(restore)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is not None:  # model requests end with the session; nothing leaks at exit
        state.model_loop.close()


def _refuse_uncollected_kedi_args(args: list[str]) -> None:
    """A ``.kedi`` path given explicitly while collection is off: say how to enable it.

    (pytest alone would only report "not found: ... (no match in any of ...)".)
    """
    for arg in args:
        path = Path(arg.split("::", 1)[0])
        if is_kedi_program(path) and path.is_file():
            raise pytest.UsageError(
                f"{arg}: .kedi files are collected only with --kedi-eval "
                "(or KEDI_EVAL=1), or with ini kedi_collect = true"
            )


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(STATE_KEY, None)
    if state is None or not state.settings.collect:
        return None
    settings = state.settings
    evals = "on" if settings.eval_enabled else "off (pass --kedi-eval)"
    rows = settings.rows_mode + (f" ({settings.rows_reason})" if settings.rows_reason else "")
    return f"kedi: evals {evals}, rows {rows}, default model {settings.model or 'test'}"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> KediFile | None:
    state = parent.config.stash.get(STATE_KEY, None)
    if state is None or not state.settings.collect or not is_kedi_program(file_path):
        return None
    return KediFile.from_parent(parent, path=file_path)


_USAGE_ERRORS = "kedi_usage_errors"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker hands its model call counts and usage errors to the controller; a
    configuration mistake found while running (a hook returned no model) exits 4."""
    state = session.config.stash.get(STATE_KEY, None)
    if state is None:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller decides the exit status
        workeroutput[MODEL_CALLS_KEY] = state.model_calls()
        if state.usage_errors:
            workeroutput[_USAGE_ERRORS] = list(state.usage_errors)
    elif state.usage_errors and session.exitstatus in (
        pytest.ExitCode.OK,
        pytest.ExitCode.TESTS_FAILED,
    ):
        session.exitstatus = pytest.ExitCode.USAGE_ERROR


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    errors = (getattr(node, "workeroutput", None) or {}).get(_USAGE_ERRORS)
    state = getattr(node, "config", None)
    state = state.stash.get(STATE_KEY, None) if state is not None else None
    if errors and state is not None:
        state.usage_errors.extend(errors)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Let the other files run when ``.kedi`` files failed to parse.

    pytest interrupts the run on any collection error; a Kedi parse error stays one
    collection error (and fails the run) but no longer stops the other items.
    """
    state = session.config.stash.get(STATE_KEY, None)
    held = min(len(state.parse_errors), session.testsfailed) if state is not None else 0
    session.testsfailed -= held
    try:
        return (yield)
    finally:
        session.testsfailed += held


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    attach_entries(item, call.when, report)
    if call.when == "call" and isinstance(item, KediEvalItem):
        _add_html_rows(item, report)
    return report


def _add_html_rows(item: KediEvalItem, report: pytest.TestReport) -> None:
    """pytest-html (``--html``) in summary mode: the rows table in the item's extras."""
    if get_state(item.config).settings.rows_mode != "summary":
        return
    if not getattr(item.config.option, "htmlpath", None):
        return
    try:
        from pytest_html import extras
    except ImportError:  # pragma: no cover - --html without pytest-html is not an option
        return
    entry = item.stash.get(SUITE_ENTRY, None)
    if entry is not None and entry["rows"]:
        previous = list(getattr(report, "extras", []))
        report.extras = [*previous, extras.html(rows_html(entry["rows"]))]  # type: ignore[attr-defined]


def _skipped_by_eval_gate(report: pytest.TestReport) -> bool:
    longrepr = report.longrepr  # (path, line, "Skipped: <reason>"); a list under xdist
    return (
        report.when == "setup"
        and isinstance(longrepr, tuple | list)
        and len(longrepr) == 3
        and str(longrepr[2]).endswith(EVAL_SKIP_REASON)
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say once why eval suites were skipped (``kedi_collect = true`` without
    ``--kedi-eval``): test explorers such as VS Code's show a skip without its reason, and
    their run output is where users look next."""
    skipped = terminalreporter.stats.get("skipped", [])
    count = sum(1 for report in skipped if _skipped_by_eval_gate(report))
    if count:
        suites = "suite" if count == 1 else "suites"
        terminalreporter.write_line(f"kedi: {count} @eval: {suites} skipped: {EVAL_SKIP_REASON}")
