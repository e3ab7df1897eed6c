"""`KediSession`: the plugin's one state object per pytest process.

It owns the resolved settings, the per-file program cache, the records and the
process's role: an xdist **worker** runs items and hands its records to the controller
on their reports (as ``to_json`` builtins, see `transport`) and its model call counts and
usage errors through ``workeroutput``; the **controller** (or the only process, without
xdist) collects the records from every report and writes the reports and the terminal
section. The hook functions in `pytest_kedi.plugin` each delegate to one method here.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_kedi.constants import REPORT_CASE, REPORT_MODEL, REPORT_SUITE
from pytest_kedi.plugin import collect, resolution
from pytest_kedi.plugin.codecache import CodeCache
from pytest_kedi.plugin.collect import KediCacheFile, KediFile, cache_program, is_kedi_program
from pytest_kedi.plugin.itembase import KediItem
from pytest_kedi.plugin.items import KediEvalItem
from pytest_kedi.plugin.listener import SUB_RESULTS, ReportListener
from pytest_kedi.plugin.modelrun import HANDOVER, ModelRun
from pytest_kedi.plugin.outcomes import expected_failure
from pytest_kedi.plugin.outline import LazyModule
from pytest_kedi.plugin.outputs import Output, check_report_paths, other_reports, report_outputs
from pytest_kedi.plugin.parsecache import ParseCache, caches_for
from pytest_kedi.plugin.rows import SUBTESTS_AVAILABLE, add_summary_rows
from pytest_kedi.plugin.settings import KediSettings
from pytest_kedi.plugin.signals import interrupted, stop_on_sigterm, stopped
from pytest_kedi.plugin.state import SESSION_KEY, TEST_MODEL, ProgramCache

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.plugin import transport
    from pytest_kedi.plugin.progress import Progress
    from pytest_kedi.plugin.records import CaseRecord, CollectErrorRecord, SuiteRecord
    from pytest_kedi.runtime.casecode import MemoryCodeStore

__all__ = ["MARKERS", "MODEL_CALLS_KEY", "USAGE_ERRORS_KEY", "KediSession", "ReportListener"]

MARKERS = (
    "kedi: a Kedi item (an @eval: suite or a @test: case) collected from a .kedi file",
    "kedi_eval: a Kedi @eval: suite (runs with --kedi-eval or KEDI_EVAL=1)",
    "kedi_test: a Kedi @test: case",
)
#: ``workeroutput`` keys: an xdist worker's model call counts and usage errors.
MODEL_CALLS_KEY = "kedi_model_calls"
USAGE_ERRORS_KEY = "kedi_usage_errors"
UNCOLLECTED_KEY = "kedi_uncollected"


#: The attributes a report carries a Kedi item's record in (`transport`).
REPORT_CARRIERS = frozenset((REPORT_SUITE, REPORT_CASE, REPORT_MODEL, HANDOVER))


class KediSession:
    """Settings, programs, records and role of one pytest process (see the module doc)."""

    def __init__(self, config: pytest.Config, settings: KediSettings) -> None:
        self.config = config
        self.settings = settings
        self.worker = hasattr(config, "workerinput")  # an xdist worker, not the controller
        self.local = not self.worker  # records are handed over in this process
        self.models = ModelRun(config, settings)
        self.programs = ProgramCache(config, settings.model, settings.debug)
        self.programs.model_policy = self.models.policy_for
        self.parse_errors: list[str] = []  # node ids of unparsable or unreadable files
        self.remote_usage_errors: list[str] = []  # reported by xdist workers
        # A subset run (a shard, -k, one file) judges a pattern against the files it names.
        gated = not self.worker and settings.collect and bool(settings.min_scores)
        self.gates = None
        if gated:
            from pytest_kedi.plugin.unmatched import UnmatchedGates

            self.gates = UnmatchedGates(config, settings)
        # what this process's items published while running (by node id)
        self._published: dict[str, SuiteRecord | CaseRecord] = {}
        self._models: dict[str, str] = {}
        # records of this process's reports not logged yet, by the report's id (no xdist)
        self._carried: dict[int, tuple[pytest.TestReport, transport.Carried]] = {}
        self.suites: dict[str, SuiteRecord] = {}  # the run's records (controller, or only process)
        self.tests: dict[str, CaseRecord] = {}
        self.xfailed: set[str] = set()
        self.collect_errors: dict[str, CollectErrorRecord] = {}  # files pytest could not collect
        self.default_models: set[str] = set()
        self.model_calls: Counter[str] = Counter()
        self.output = Output()
        self.untouched: tuple[Path, ...] = ()
        self.kedi_started = False  # a Kedi item began to run (controller, or only process)
        self.uncollected = 0  # `.kedi` programs passed over (collection off; xdist: a worker's)
        self.started = datetime.now(UTC)
        # --kedi-baseline's suites by node id (every process: items apply --kedi-max-drop)
        self.baseline: dict[str, SuiteRecord] | None = None
        self._progress: Progress | None = None
        self._progress_resolved = False  # _progress is looked up on first use
        self._disk_caches: tuple[ParseCache | None, CodeCache | MemoryCodeStore] | None = None
        self._transport: Any = None  # `pytest_kedi.plugin.transport`, once an item reports

    @property
    def disk_caches(self) -> tuple[ParseCache | None, CodeCache | MemoryCodeStore]:
        """The parse and code caches in pytest's cache directory (once the cache provider
        has configured it); without it, no parse cache and code kept in memory (`caches_for`)."""
        if self._disk_caches is None:
            self._disk_caches = caches_for(self.config)
        return self._disk_caches

    # ------------------------------------------------------------------ configuration

    @classmethod
    def start(cls, config: pytest.Config) -> KediSession:
        """``pytest_configure``: resolve the settings and check them (controller)."""
        for marker in MARKERS:
            config.addinivalue_line("markers", marker)
        # Row sub-results need pytest's built-in `subtests` plugin (not `-p no:subtests`).
        subtests = SUBTESTS_AVAILABLE and config.pluginmanager.hasplugin("subtests")
        session = cls(config, resolution.resolve(config, subtests_available=subtests))
        config.stash[SESSION_KEY] = session
        if session.settings.collect and session.settings.baseline_path is not None:
            from pytest_kedi.plugin import baseline

            session.baseline = baseline.load(session.settings.baseline_path)
        if not session.worker:
            collect.check_kedi_args(config.args, collecting=session.settings.collect)
            check_report_paths(report_outputs(session.settings), other_reports(config))
            config.pluginmanager.register(ReportListener(session), "kedi-reporter")
        if session.settings.prune_cassettes:  # it watches for what makes a run partial
            config.pluginmanager.register(session.models, "kedi-model-run")
        stop_on_sigterm(config)
        return session

    @staticmethod
    def of(config: pytest.Config) -> KediSession | None:
        return config.stash.get(SESSION_KEY, None)

    def close(self) -> None:
        """``pytest_unconfigure``, before other plugins': model requests end with the
        session (no leak at exit), and the run's records are dropped (their rows are freed
        at once: pytest's closing garbage collections, run by its `unraisableexception`
        plugin's ``pytest_unconfigure`` and afterwards, and the interpreter's exit walk
        none of them)."""
        self.programs.close_model_loop()
        for records in (self.suites, self.tests, self._published, self._carried):
            records.clear()

    def header(self) -> str | None:
        settings = self.settings
        if not settings.collect:
            return None
        evals = "on" if settings.eval_enabled else "off (pass --kedi-eval)"
        rows = settings.rows_mode + (f" ({settings.rows_reason})" if settings.rows_reason else "")
        return f"kedi: evals {evals}, rows {rows}, default model {settings.model or TEST_MODEL}"

    # ------------------------------------------------------------------ collection

    def collect_file(self, file_path: Path, parent: pytest.Collector) -> KediFile | None:
        if not file_path.name.endswith(".kedi"):
            return None
        if not self.settings.collect:
            self.uncollected += collect.passed_over(parent, file_path)
            return None
        if is_kedi_program(file_path):
            return KediFile.from_parent(parent, path=file_path)
        if cache_program(file_path) is not None:  # generated tests of `> auto:` procedures
            return KediCacheFile.from_parent(parent, path=file_path)
        return None

    def collected(self, nodeids: Iterable[str]) -> None:
        """The collected node ids (the only process's, or an xdist worker's)."""
        if self.gates is not None:
            self.gates.check(nodeids)

    @contextmanager
    def parse_errors_held(self, session: pytest.Session) -> Iterator[None]:
        """Let the other files run when ``.kedi`` files failed to parse: pytest interrupts
        the run on any collection error; a Kedi parse error stays one collection error (it
        fails the run and counts towards ``--maxfail``, as under
        ``--continue-on-collection-errors``) but no longer stops the other items. Another
        collection error still interrupts the run, which then counts every error."""
        option = session.config.option
        given = option.continue_on_collection_errors
        errors = session.testsfailed
        option.continue_on_collection_errors = given or errors == len(self.parse_errors)
        try:
            yield
        finally:
            option.continue_on_collection_errors = given

    # ------------------------------------------------------------------ running items

    @property
    def progress(self) -> Progress | None:
        """The live progress of running eval suites (``None``: off; see `progress`)."""
        if not self._progress_resolved:
            self._progress_resolved = True
            settings = self.settings
            from pytest_kedi.plugin.progress import progress_for

            self._progress = progress_for(
                self.config, settings.progress, settings.progress_interval, self.worker
            )
        return self._progress

    def pause_progress(self) -> None:
        """Erase the live progress line (the debugger is about to prompt)."""
        if self._progress is not None:
            self._progress.erase()

    def note_model(self, nodeid: str, label: str) -> None:
        """The label of the default model of the item's file (called by the item)."""
        self._models[nodeid] = label

    def publish(self, record: SuiteRecord | CaseRecord) -> None:
        """An item's record, once its run decided it (called by the item)."""
        self._published[record.nodeid] = record

    def max_drop_reason(self, record: SuiteRecord) -> str | None:
        """Why ``record`` fails ``--kedi-max-drop`` against the baseline, if it does."""
        if self.baseline is None or self.settings.max_drop is None:  # (nothing to import)
            return None
        from pytest_kedi.plugin.baseline import drop

        return drop(self.baseline, record, self.settings.max_drop)

    def make_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        """Put the item's record on its report (and pytest-html's rows table)."""
        if not isinstance(item, KediItem):  # (every phase of every other test passes here)
            return
        if (transport := self._transport) is None:  # imported once, when an item reports
            from pytest_kedi.plugin import transport as module

            transport = self._transport = module
        nodeid = item.nodeid
        published, model = self._published.get(nodeid), self._models.get(nodeid)
        limit = self.settings.threshold_for(nodeid) if isinstance(item, KediEvalItem) else None
        carried = transport.attach(
            item, when, report, published=published, model=model, threshold=limit, local=self.local
        )
        # read by `log_report`, next (a phase that carries nothing is not kept)
        if carried is not None and not carried.nothing:
            self._carried[id(report)] = (report, carried)
        if when == "call" and self.settings.rows_mode == "summary":  # the rows section, html table
            from pytest_kedi.plugin.records import SuiteRecord

            if isinstance(published, SuiteRecord) and published.rows:
                add_summary_rows(self.config, published.rows, report)
        if when == "teardown":  # a rerun (pytest-rerunfailures) starts afresh
            self._published.pop(nodeid, None)
            self._models.pop(nodeid, None)
            if self.worker:  # what it recorded and its file's calls survive a crash now
                calls = self.programs.model_calls_of(item.path)
                self.models.hand_over(report, item.path, calls)

    # ------------------------------------------------------------------ controller

    def log_report(self, report: pytest.TestReport) -> None:
        """Collect the record a report carries (controller, or the only process)."""
        if self.worker or isinstance(report, SUB_RESULTS):
            return
        held = self._carried.pop(id(report), None)
        if held is not None and held[0] is report:
            suite, case, model = held[1].suite, held[1].case, held[1].model
        elif report.__dict__.keys().isdisjoint(REPORT_CARRIERS):
            # no record: another test's report, or a Kedi item's phase that carries none
            if report.failed and report.when == "???":
                self._crashed(report)  # an xdist worker died while running the item
            return
        else:  # from an xdist worker
            from pytest_kedi.plugin import transport

            self.model_calls.update(self.models.take_over(report.__dict__.pop(HANDOVER, None)))
            suite, case = transport.suite_of(report), transport.case_of(report)
            model = transport.model_of(report)
            transport.release(report)
        if suite is None and case is None and report.failed and report.when == "???":
            self._crashed(report)  # an xdist worker died while running the item
        if suite is not None:
            if suite.gate != self.settings.gate:  # a stand-in record (skipped, setup failed)
                suite = dataclasses.replace(suite, gate=self.settings.gate)
            self.suites[report.nodeid] = suite
        if case is not None:
            self.tests[report.nodeid] = case
        if (suite is not None or case is not None) and expected_failure(report):
            self.xfailed.add(report.nodeid)
        if model is not None:
            self.default_models.add(model)

    def collect_failed(self, report: pytest.CollectReport) -> None:
        """A file that failed to collect (xdist: every worker's, one record a node id)."""
        from pytest_kedi.plugin.collecterrors import error_record

        record = error_record(report)
        if record is not None:
            self.collect_errors.setdefault(record.nodeid, record)

    def _crashed(self, report: pytest.TestReport) -> None:
        from pytest_kedi.evals.safetext import clean_text
        from pytest_kedi.plugin.crashes import after_crash, crash_record
        from pytest_kedi.plugin.records import CaseRecord, SuiteRecord

        message = clean_text(" ".join(str(report.longrepr).split()))
        self.models.worker_crashed(report.nodeid)
        record = crash_record(
            self.config.rootpath, report.nodeid, message, self.settings.threshold_for
        )
        if isinstance(record, SuiteRecord):
            record = dataclasses.replace(record, gate=self.settings.gate)
            self.suites[report.nodeid] = after_crash(self.suites.get(report.nodeid), record)
        elif isinstance(record, CaseRecord):
            self.tests[report.nodeid] = after_crash(self.tests.get(report.nodeid), record)

    def node_down(self, node: Any) -> None:
        """xdist: a finished worker's model call counts and usage errors."""
        output = getattr(node, "workeroutput", None) or {}
        self.model_calls.update(output.get(MODEL_CALLS_KEY, {}))
        self.remote_usage_errors.extend(output.get(USAGE_ERRORS_KEY, ()))
        self.uncollected = max(self.uncollected, output.get(UNCOLLECTED_KEY, 0))  # same files
        self.models.node_down(output)

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """A worker hands its counts and usage errors to the controller; the controller
        writes the reports. A configuration mistake found while running (a hook returned
        no model) exits 4. The session's programs and parsed modules are freed last."""
        try:
            self._finish(session, exitstatus)
        finally:
            self._release(session)

    def _release(self, session: pytest.Session) -> None:
        """Free what running the files built (`ProgramCache.release`): every item has
        run, and pytest's closing garbage collections and the interpreter's exit then walk
        a heap without it (for 1,000 files, about 140,000 objects fewer)."""
        from pytest_kedi.lang.cache import MODULES

        self.programs.release()
        released = None  # a file's items share its module: released once
        for item in session.items:
            lazy = getattr(item, "lazy", None)
            if lazy is not released and isinstance(lazy, LazyModule):
                (released := lazy).release()
        MODULES.clear()

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        own_calls = self.programs.model_calls()
        own_errors = self.programs.usage_errors
        code_cache = self._disk_caches[1] if self._disk_caches is not None else None
        if code_cache is not None:  # compiled code kept for the next run (every process)
            code_cache.close()  # (in memory: forgotten)
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # the controller decides the exit status
            workeroutput[MODEL_CALLS_KEY] = self.models.calls_left(own_calls)
            if own_errors:
                workeroutput[USAGE_ERRORS_KEY] = list(own_errors)
            if self.uncollected:
                workeroutput[UNCOLLECTED_KEY] = self.uncollected
            self.models.worker_finish(workeroutput)
            return
        self.model_calls.update(own_calls)
        if self.suites:  # (a run without suites stores nothing: no import for it)
            from pytest_kedi.plugin.rerun import store_rows

            store_rows(self.config, self.suites.values())
        self.models.finish(session, exitstatus)  # (an unwritable cassette fails the run)
        ended = session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        if ended and (own_errors or self.remote_usage_errors):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        self._write(session, int(session.exitstatus))  # the reports say how the run ends

    def _write(self, session: pytest.Session, exitstatus: int) -> None:
        """Reports are written only when a Kedi item started (an interrupt may stop it
        before it reports) or a ``.kedi`` file failed to collect: a run that executed
        nothing (``--collect-only``, every Kedi item deselected) leaves them untouched."""
        settings, errors = self.settings, tuple(self.collect_errors.values())
        kedi = any(error.path.endswith(".kedi") for error in errors)  # a .kedi file broke
        broken = kedi and not self.config.option.collectonly
        if not (self.suites or self.tests or broken or self.kedi_started):
            paths = [p for _, p in report_outputs(settings)[:3]]
            paths.append(None if settings.markdown_append else settings.markdown_path)
            self.untouched = tuple(path for path in paths if path is not None)
            return
        from pytest_kedi.plugin.records import RunRecord

        run = RunRecord(
            exitstatus=int(exitstatus),
            interrupted=interrupted(session, exitstatus),
            stopped=stopped(session, exitstatus),
            model_calls=tuple(sorted(self.model_calls.items())),
            suites=tuple(self.suites.values()),
            tests=tuple(self.tests.values()),
            xfailed=tuple(sorted(self.xfailed)),
            errors=errors,
        )
        if self.baseline is not None:
            from pytest_kedi.plugin import baseline

            run = baseline.with_deltas(run, self.baseline)
        from pytest_kedi.plugin.reporting import write_reports

        self.output = write_reports(
            settings,
            run,
            xfailed=self.xfailed,
            exitstatus=int(session.exitstatus),
            started=self.started,
        )
        if self.output.errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def terminal_summary(self, tr: pytest.TerminalReporter) -> None:
        """The ``kedi`` section (controller, or the only process)."""
        if self.suites or self.tests or self.output.errors or self.output.written or self.untouched:
            self._write_summary(tr)
        self.models.terminal_lines(tr)

    def _write_summary(self, tr: pytest.TerminalReporter) -> None:
        from pytest_kedi.plugin.reporting import Summary, write_summary

        summary = Summary(
            suites=list(self.suites.values()),
            tests=list(self.tests.values()),
            xfailed=self.xfailed,
            model_calls=self.model_calls,
            default_models=self.default_models or {self.settings.model or TEST_MODEL},
            written=self.output.written,
            untouched=self.untouched,
            errors=self.output.errors,
            baseline=self._baseline_lines(),
            notes=self.output.notes,
            dropped={s.nodeid for s in self.suites.values() if self.max_drop_reason(s)},
            max_drop=self.settings.max_drop,
        )
        write_summary(tr, summary, verbose=self.config.get_verbosity() > 0)

    def _baseline_lines(self) -> list[str]:
        path = self.settings.baseline_path
        if self.baseline is None or path is None or not self.suites:
            return []
        here = self.config.invocation_params.dir
        shown = path.relative_to(here).as_posix() if path.is_relative_to(here) else str(path)
        from pytest_kedi.plugin import baseline

        return baseline.summary_lines(
            shown, self.baseline, self.suites.values(), max_drop=self.settings.max_drop
        )
