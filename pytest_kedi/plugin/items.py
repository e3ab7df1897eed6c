"""The two item kinds: `KediEvalItem` (one ``@eval:`` suite) and `KediCaseItem` (one case).

Both show Kedi-located failure text instead of a Python traceback, and report the
``.kedi`` header line through ``reportinfo()`` (0-based, as pytest expects). What they
share (fixtures, the stand-in module, the file's program) is `itembase.KediItem`.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import linecache
import re
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_kedi.plugin.itembase import KediItem
from pytest_kedi.plugin.state import ProgramLoadError, kedi_session
from pytest_kedi.text import display_path, exception_text

# What only running an item needs (its verdict, records, rows, rerun, tracing) is imported
# when an item first runs: every pytest process loads this module, most never run one.
if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult
    from pytest_kedi.evals.runner import CarryOver
    from pytest_kedi.lang import nodes
    from pytest_kedi.plugin.failures import KediFailure
    from pytest_kedi.plugin.outline import CaseOutline, SuiteOutline
    from pytest_kedi.plugin.records import Rerun, SuiteRecord
    from pytest_kedi.plugin.settings import KediSettings
    from pytest_kedi.runtime.errors import KediExecutionError

__all__ = ["KediCaseItem", "KediEvalItem", "rewrite_case_asserts"]


class KediEvalItem(KediItem):
    """One ``@eval:`` suite; rows become sub-results, the suite carries the verdict."""

    def __init__(self, *, outline: SuiteOutline, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outline = outline

    @property
    def suite(self) -> nodes.EvalSuite:
        """The suite's node (the file's full module is loaded on first use)."""
        # of the outline's kind: `LazyModule.suite` checks
        return cast("nodes.EvalSuite", self.lazy.suite(self.outline))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.outline.line - 1, self.name

    def runtest(self) -> None:
        from pytest_kedi.runtime.heap import older_objects_frozen

        __tracebackhide__ = True
        # The suite's objects (rows, results, their sub-results' reports) trigger full
        # garbage collections, which then walk only what the suite made.
        with older_objects_frozen():
            try:
                self._run_suite()
            except BaseExceptionGroup as group:
                _interrupt(group)
                raise

    def _run_suite(self) -> None:
        from pytest_kedi.evals import EvalOptions, SuiteResult, run_suite
        from pytest_kedi.evals.classify import relative_locations
        from pytest_kedi.plugin.gating import KediGateFailed, Verdict, failure_text, judge
        from pytest_kedi.plugin.records import SuiteRecord
        from pytest_kedi.plugin.rows import emit_row_reports

        __tracebackhide__ = True
        settings = kedi_session(self.config).settings
        threshold = settings.threshold_for(self.nodeid)
        started = time.perf_counter()
        try:
            program = self._program()
        except ProgramLoadError as exc:
            metric = self.suite.metric
            failed = SuiteResult.failed(
                self.suite.name,
                metric.name if metric is not None else None,
                metric.dataset if metric is not None else None,
                exc.summary(),
                time.perf_counter() - started,
            )
            record = SuiteRecord.scored(
                self.nodeid, self.suite, failed, threshold=threshold, outcome="failed"
            )
            self.ihook.pytest_kedi_suite_result(item=self, result=failed)
            self._publish(record)
            from pytest_kedi.plugin.failures import KediItemError

            text = failure_text(record, Verdict(False, ()), exc.text, self.path)
            self._fail(self._failure(KediItemError(text), record, text))

        options = EvalOptions(
            split=settings.split,  # type: ignore[arg-type]
            concurrency=settings.concurrency,
            timeout=settings.timeout,
            max_rows=settings.max_rows,
            repeat=settings.repeat,
            trace=settings.trace,
        )
        carry, rerun = self._rerun(settings)
        session = kedi_session(self.config)
        progress = session.progress
        # Looked up once per suite, not once per row; a hook nobody implements is not
        # called at all, and without progress either, rows are not handed out one by one.
        row_hook = self.ihook.pytest_kedi_row_result
        on_row = partial(_report_row, row_hook, self) if row_hook.get_hookimpls() else None

        try:
            result = run_suite(
                program,
                self.suite,
                options,
                on_row=on_row,
                carry=carry,
                on_rows=None if progress is None else partial(progress.start, self.suite.name),
                on_progress=None if progress is None else progress.seen,
            )
        finally:
            if progress is not None:
                progress.stop()
        self.ihook.pytest_kedi_suite_result(item=self, result=result)
        verdict = judge(
            result, threshold=threshold, max_errors=settings.max_errors, gate=settings.gate
        )
        record = SuiteRecord.scored(
            self.nodeid,
            self.suite,
            result,
            threshold=threshold,
            outcome="passed" if verdict.passed else "failed",
            gate=settings.gate,
            rerun=rerun,
            max_errors=settings.max_errors.value if settings.max_errors else None,
        )
        dropped = kedi_session(self.config).max_drop_reason(record)
        if dropped is not None:  # --kedi-max-drop against --kedi-baseline
            verdict = Verdict(False, (*verdict.reasons, dropped))
            record = dataclasses.replace(record, outcome="failed")
        self._publish(record)
        if settings.rows_mode == "subtests":  # (summary mode: `rows.add_summary_rows`)
            emit_row_reports(self, result.rows)
        if not verdict.passed:
            from pytest_kedi.plugin.failures import KediItemError, user_exception

            detail = None
            exception = result.exception
            if exception is not None and hasattr(exception, "render"):
                detail = relative_locations(exception.render())
            text = failure_text(record, verdict, detail, self.path)
            raised: BaseException
            if result.error is None:
                raised = KediGateFailed(text)
            elif exception is not None:
                raised = user_exception(exception)
            else:
                raised = KediItemError(text)
            self._fail(self._failure(raised, record, text))

    def _rerun(self, settings: KediSettings) -> tuple[CarryOver | None, Rerun | None]:
        """Under ``--kedi-rerun``: which rows of the previous run to carry over."""
        if settings.rerun is None:
            return None, None
        from pytest_kedi.plugin.records import Rerun
        from pytest_kedi.plugin.rerun import carry_over, previous_rows

        previous = previous_rows(self.config, self.nodeid)
        if previous is None:
            return None, Rerun(settings.rerun, previous_run=False)
        carry = carry_over(previous, settings.rerun, settings.row_min_score)
        return carry, Rerun(settings.rerun, previous_run=True)

    def _failure(self, raised: BaseException, record: SuiteRecord, text: str) -> KediFailure:
        """The failure of `record`, located at the suite's header line."""
        path = display_path(str(self.path))
        first = text.split("\n", 1)[0]
        message = first.removeprefix(f"{path}:{record.line}: ")
        from pytest_kedi.plugin.failures import KediFailure

        return KediFailure(raised, path, record.line, message, text)

    def _publish(self, record: SuiteRecord) -> None:
        kedi_session(self.config).publish(record)
        # Replaced, not appended, on a rerun (pytest-rerunfailures); unset values are omitted.
        result = record.result
        properties = [
            ("kedi_score", result.score),
            ("kedi_feedback", result.feedback or None),  # "" is no feedback, as on its line
            ("kedi_threshold", record.threshold),
            ("kedi_rows", result.rows_total),
            ("kedi_errors", result.rows_errored),
            ("kedi_split", result.split),
        ]
        self.user_properties[:] = [
            prop for prop in self.user_properties if not str(prop[0]).startswith("kedi_")
        ] + [(name, value) for name, value in properties if value is not None]


def rewrite_case_asserts(tree: ast.Module, filename: str) -> None:
    """Run pytest's assertion rewriter over a case's Python (introspected failures).

    ``config`` is not passed: it only enables the assertion-pass hook, the one reader
    of the source text (so none is given); the comparison output itself is configured
    at run time.
    """
    from _pytest.assertion.rewrite import rewrite_asserts

    try:
        rewrite_asserts(tree, b"", filename, None)
    except Warning as exc:  # `-W error` made its warning ("assertion is always true") one
        # located at its `assert`, as Python's own compile-time warning is a `SyntaxError`
        tuples = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Assert) and isinstance(node.test, ast.Tuple)
        ]
        if not tuples:
            raise
        at = min(tuples, key=lambda node: (node.lineno, node.col_offset))  # the first warned
        where = (filename, at.lineno, at.col_offset + 1, None)
        raise SyntaxError(exception_text(exc), where) from None


#: the colours pytest's assertion rewriting gives a diff when the terminal has them (a
#: value's own ESC is in its repr, ``\x1b``): not kept in a message the reports store
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")

Where = tuple[str | None, int | None]  # a failing line: its `.kedi` file (None: the case's)


def _failing_line(error: KediExecutionError) -> Where:
    """The file and line a Kedi error failed at: the innermost embedded-Python line, else
    the innermost frame (in an imported module, that module's file)."""
    for trace in reversed(error.python_traces):
        if trace.kedi_line is not None:
            span = trace.kedi_span
            return (span.path if span is not None else None), trace.kedi_line
    span = error.span
    return (None, None) if span is None else (span.path, span.start_line)


def _case_failure(error: BaseException) -> tuple[str, str, Where]:
    """(failure text, message, failing .kedi line) for an exception raised by a case.

    The message is ``<ExceptionType>: <message>``; for a failing ``assert`` it is pytest's
    rewritten assertion text (with the compared values), possibly over several lines.
    """
    from pytest_kedi.evals.classify import relative_locations
    from pytest_kedi.pytraces import notes_lines
    from pytest_kedi.runtime.errors import KediExecutionError

    if isinstance(error, KediExecutionError):
        rendered, final = error.render(), error.final_text  # the rendering ends with `final`
        original = error.original
        if isinstance(original, AssertionError):  # pytest's rewritten text, uncoloured
            detail = _COLOURS.sub("", exception_text(original)).strip()
            message = "\n".join([f"AssertionError: {detail}", *notes_lines(original)])
            text = rendered[: len(rendered) - len(final)] + message
            return relative_locations(text), message, _failing_line(error)
        return relative_locations(rendered), relative_locations(final), _failing_line(error)
    detail = exception_text(error).strip()
    message = f"{type(error).__name__}: {detail}"
    return message, message, (None, None)


class KediCaseItem(KediItem):
    """One ``> case:`` of a ``@test:`` suite, run on the file's shared runtime."""

    def __init__(
        self, *, outline: SuiteOutline, case_outline: CaseOutline, index: int, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.outline = outline
        self.case_outline = case_outline
        self.case_index = index

    @property
    def suite(self) -> nodes.TestSuite:
        """The suite's node (the file's full module is loaded on first use)."""
        # of the outline's kind: `LazyModule.suite` checks
        return cast("nodes.TestSuite", self.lazy.suite(self.outline))

    @property
    def case(self) -> nodes.Case:
        return self._case_of(self.suite)

    def _case_of(self, suite: nodes.TestSuite) -> nodes.Case:
        case = suite.cases[self.case_index]
        assert case.name == self.case_outline.name
        return case

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case_outline.line - 1, self.name

    def _case_frame(self) -> tuple[str, int, str, str]:
        """The case's own frame of a Kedi stack trace: path, line, label, source."""
        line = self.case_outline.line
        source = linecache.getline(str(self.path), line).strip()
        return str(self.path), line, f"case {self.case_outline.name}", source

    def _failure(
        self, raised: BaseException, where: Where, message: str, how: str, text: str
    ) -> KediFailure:
        """The failure shown as ``file.kedi:LINE: <message>`` (the line that ``--tb=line``
        and the short summary show), the case's name, and `text`. ``where``: the failing
        line, in the case's file unless it names another one (an imported module's). The
        path is shown as in the stack trace: relative to the working directory."""
        path, line = str(self.path), where[1] or self.case.span.start_line
        if where[0] is not None and where[1] is not None:
            path = where[0]
        path = display_path(path)
        first = message.splitlines()[0] if message else ""
        head = f"{path}:{line}: {first}\n@test: {self.suite.name} > case: {self.case.name}"
        from pytest_kedi.plugin.failures import KediFailure

        return KediFailure(raised, path, line, message, f"{head} {how}:\n{text}")

    def runtest(self) -> None:
        __tracebackhide__ = True
        try:
            self._run_case()
        except BaseExceptionGroup as group:
            _interrupt(group)
            raise

    def _run_case(self) -> None:
        __tracebackhide__ = True
        failure: KediFailure | None = None
        try:
            program = self._program()
        except ProgramLoadError as exc:  # located where loading failed, as a suite's is
            from pytest_kedi.plugin.failures import KediItemError

            message = exc.summary()
            self._publish("failed", message)
            error = KediItemError(message)
            failure = self._failure(error, exc.where, message, "could not run", exc.text)
        if failure is not None:
            self._fail(failure)
        session = kedi_session(self.config)
        trace = None
        if self.config.getoption("trace", False):
            from pytest_kedi.plugin.debugging import TraceCase

            trace = TraceCase(rewrite_case_asserts)
        # Compiled, assertion-rewritten case code is kept across runs (not under --trace,
        # whose transform must see the code being compiled).
        store = session.disk_caches[1] if trace is None else None
        suite = self.suite  # (read once: the file's module, looked up and checked)
        case = self._case_of(suite)
        try:
            with trace or contextlib.nullcontext():
                transform = trace.transform if trace is not None else rewrite_case_asserts
                program.run_case(suite, case, transform=transform, store=store)
        except pytest.xfail.Exception:  # pytest.xfail() (a `Failed`): the case is xfailed
            raise
        except pytest.fail.Exception as error:  # pytest.fail(): the user's frames, no internals
            from pytest_kedi.evals.classify import relative_locations
            from pytest_kedi.plugin.outcomes import failed_trace

            text, where, message = failed_trace(error, self._case_frame())
            self._publish("failed", message)
            text = relative_locations(text)
            failure = self._failure(error, where, message, "failed", text)
        except Exception as error:
            from pytest_kedi.plugin.failures import user_exception

            text, message, where = _case_failure(error)
            self._publish("failed", message)
            failure = self._failure(user_exception(error), where, message, "failed", text)
        if failure is not None:
            self._fail(failure)
        self._publish("passed", None, suite, case)

    def _publish(
        self,
        outcome: str,
        message: str | None,
        suite: nodes.TestSuite | None = None,
        case: nodes.Case | None = None,
    ) -> None:
        """The case's record (``suite``/``case``: the nodes, when the caller has them)."""
        from pytest_kedi.plugin.records import CaseRecord

        if suite is None or case is None:
            suite = self.suite
            case = self._case_of(suite)
        kedi_session(self.config).publish(
            CaseRecord.of(self.nodeid, suite, case, outcome=outcome, message=message)
        )


def _interrupt(group: BaseExceptionGroup[Any]) -> None:
    """Raise the `KeyboardInterrupt` an exception group carries (user code's, or its
    threads'): it interrupts the run as the interrupt does (docs/language.md#pytest-mapping),
    where pytest would fail the item with the group."""
    __tracebackhide__ = True
    from pytest_kedi.runtime.usererrors import carried_interrupt

    interrupt = carried_interrupt(group)
    if interrupt is not None:  # located where it was raised (a member never raised: the group)
        raise interrupt.with_traceback(interrupt.__traceback__ or group.__traceback__) from None


def _report_row(hook: Any, item: pytest.Item, row: RowResult) -> None:
    """One scored row to the ``pytest_kedi_row_result`` hook."""
    hook(item=item, row=row)
