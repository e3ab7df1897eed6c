"""pytest-kedi's pytest plugin (the ``pytest11`` entry point ``kedi``): hook implementations only.

Options live in `options`, session state in `state`, collection in `collect`, items in
`items`, row sub-results in `rows` and controller-side reporting in `reporting`.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from pytest_kedi.plugin import options
from pytest_kedi.plugin.collect import EVAL_SKIP_REASON, KediFile, is_kedi_program
from pytest_kedi.plugin.reporting import KediReporter, attach_entries
from pytest_kedi.plugin.rows import SUBTESTS_AVAILABLE
from pytest_kedi.plugin.state import STATE_KEY, KediState

__all__ = [
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_configure",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_runtestloop",
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
        config.pluginmanager.register(KediReporter(config, settings), "kedi-reporter")


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
    return (
        f"kedi: evals {evals}, rows {settings.rows_mode}, default model {settings.model or 'test'}"
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> KediFile | None:
    state = parent.config.stash.get(STATE_KEY, None)
    if state is None or not state.settings.collect or not is_kedi_program(file_path):
        return None
    return KediFile.from_parent(parent, path=file_path)


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
    return report


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
