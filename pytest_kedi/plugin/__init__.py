"""pytest-kedi's pytest plugin (the ``pytest11`` entry point ``kedi``): hook implementations only.

Each hook delegates to the process's `KediSession` (`session`), which owns the settings,
the programs, the records and the worker/controller roles. (``pytest_runtest_logreport``
gets no ``config``, so the controller registers the session's `ReportListener` for it and
for the ``kedi`` terminal section: `listener`.) Options live in `options`,
collection in `collect`, items in `items`, the records in `records`, their transport on
reports in `transport`, row sub-results in `rows` and the report files in `reporting`.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_kedi.plugin import resolution
from pytest_kedi.plugin.collect import KediFile, received_collect_error
from pytest_kedi.plugin.listener import explain_skips
from pytest_kedi.plugin.rootcheck import check_rootdir
from pytest_kedi.plugin.session import KediSession

if TYPE_CHECKING:  # pragma: no cover
    import warnings

__all__ = [
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
    "pytest_collection_finish",
    "pytest_configure",
    "pytest_report_from_serializable",
    "pytest_enter_pdb",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "pytest_runtestloop",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_testnodedown",
    "pytest_unconfigure",
    "pytest_warning_recorded",
    "pytest_xdist_node_collection_finished",
]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_kedi import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    resolution.register(parser)


def pytest_configure(config: pytest.Config) -> None:
    check_rootdir(config)
    KediSession.start(config)


@pytest.hookimpl(tryfirst=True)  # before the garbage collection pytest's own plugins run
def pytest_unconfigure(config: pytest.Config) -> None:
    if (kedi := KediSession.of(config)) is not None:
        kedi.close()


def pytest_report_header(config: pytest.Config) -> str | None:
    kedi = KediSession.of(config)
    return kedi.header() if kedi is not None else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> KediFile | None:
    kedi = KediSession.of(parent.config)
    return kedi.collect_file(file_path, parent) if kedi is not None else None


@pytest.hookimpl(trylast=True)  # after -k/-m: the selected items are dealt out
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kedi = KediSession.of(config)
    if kedi is None or not kedi.settings.collect:
        return
    if kedi.settings.shard is not None:
        from pytest_kedi.plugin.sharding import select_shard

        select_shard(config, items, kedi.settings.shard)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker sends the items' node ids
def pytest_collection_finish(session: pytest.Session) -> None:
    if (kedi := KediSession.of(session.config)) is not None:
        if kedi.settings.collect:
            from pytest_kedi.plugin.ordering import keep_source_order

            # after every plugin that reordered the items: pytest-randomly, and --ff/--nf,
            # whose reordering wraps every other pytest_collection_modifyitems
            keep_source_order(session.items)
        kedi.collected(item.nodeid for item in session.items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: Sequence[str]) -> None:
    if (kedi := KediSession.of(node.config)) is not None:  # type: ignore[attr-defined]
        kedi.collected(ids)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    kedi = KediSession.of(session.config)
    with kedi.parse_errors_held(session) if kedi is not None else nullcontext():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config: pytest.Config) -> Generator[None, object, object]:
    return received_collect_error((yield))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if (kedi := KediSession.of(item.config)) is not None:
        kedi.make_report(item, call.when, report)
    return report


@pytest.hookimpl(tryfirst=True)  # before the terminal, JUnit or an xdist worker reads it
def pytest_warning_recorded(warning_message: warnings.WarningMessage, nodeid: str) -> None:
    if ".kedi" in nodeid or str(warning_message.filename).endswith(".kedi"):
        from pytest_kedi.plugin.transport import clean_warning

        clean_warning(warning_message)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if (kedi := KediSession.of(session.config)) is not None:
        kedi.finish(session, exitstatus)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    if (kedi := KediSession.of(node.config)) is not None:  # type: ignore[attr-defined]
        kedi.node_down(node)


def pytest_enter_pdb(config: pytest.Config) -> None:
    if (kedi := KediSession.of(config)) is not None:
        kedi.pause_progress()


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int | pytest.ExitCode
) -> None:
    if (kedi := KediSession.of(terminalreporter.config)) is not None:
        explain_skips(terminalreporter)
        if kedi.uncollected and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            files = "file" if kedi.uncollected == 1 else "files"
            terminalreporter.write_line(
                f"kedi: {kedi.uncollected} .kedi {files} not collected: run with --kedi-eval "
                "(or KEDI_EVAL=1), or set ini kedi_collect = true"
            )
