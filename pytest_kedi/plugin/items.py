"""The two item kinds: `KediEvalItem` (one ``@eval:`` suite) and `KediCaseItem` (one case).

Both show Kedi-located failure text instead of a Python traceback, and report the
``.kedi`` header line through ``reportinfo()`` (0-based, as pytest expects).
"""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_kedi.lang import nodes
from pytest_kedi.plugin.entries import case_entry, placeholder_suite_entry, suite_entry
from pytest_kedi.plugin.gating import Verdict, failure_text, judge
from pytest_kedi.plugin.rows import emit_row_reports, rows_section
from pytest_kedi.plugin.state import ProgramLoadError, get_state

if TYPE_CHECKING:  # pragma: no cover
    from _pytest._code.code import TerminalRepr

    from pytest_kedi.evals import RowResult

__all__ = [
    "CASE_ENTRY",
    "MODEL_INFO",
    "SUITE_ENTRY",
    "KediCaseFailed",
    "KediCaseItem",
    "KediEvalItem",
    "KediSuiteFailed",
]

SUITE_ENTRY = pytest.StashKey[dict[str, Any]]()
CASE_ENTRY = pytest.StashKey[dict[str, Any]]()
MODEL_INFO = pytest.StashKey[dict[str, Any]]()


class KediSuiteFailed(Exception):
    """An eval suite failed (suite error or a missed gate); the message is the report."""


class KediCaseFailed(Exception):
    """A test case failed; the message is the Kedi-located report."""


def _internal_dirs() -> tuple[str, ...]:
    import _pytest
    import pluggy

    import pytest_kedi

    return tuple(
        str(Path(module.__file__ or "").parent) for module in (pytest_kedi, pluggy, _pytest)
    )


class _KediItem(pytest.Item):
    _failure_types: tuple[type[BaseException], ...] = (KediSuiteFailed, KediCaseFailed)

    def _traceback_filter(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        """An unexpected exception (a conftest hook that raised, say) shows the user's
        frames only, not pytest-kedi's, pluggy's or pytest's."""
        internal = _internal_dirs()
        traceback = excinfo.traceback
        kept = traceback.filter(lambda entry: not str(entry.path).startswith(internal))
        return kept if len(kept) else traceback

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, self._failure_types):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def _program(self) -> Any:
        state = get_state(self.config)
        loaded = state.program_for(self.path, self.ihook)
        collected = next(
            (n.kedi_source for n in self.listchain() if hasattr(n, "kedi_source")), None
        )
        if collected is not None and loaded.program.module.source != collected:
            from pytest_kedi.evals.classify import display_path

            text = f"{display_path(str(self.path))} changed since collection; run pytest again"
            raise ProgramLoadError(text, f"KediImportError: {text}")
        self.stash[MODEL_INFO] = {
            "label": loaded.model_label,
            "synthetic": loaded.synthetic,
        }
        return loaded.program


class KediEvalItem(_KediItem):
    """One ``@eval:`` suite; rows become sub-results, the suite carries the verdict."""

    def __init__(self, *, suite: nodes.EvalSuite, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.suite.span.start_line - 1, self.name

    def runtest(self) -> None:
        from pytest_kedi.evals import EvalOptions, SuiteResult, run_suite
        from pytest_kedi.evals.classify import relative_locations

        settings = get_state(self.config).settings
        threshold = settings.threshold_for(self.nodeid)
        started = time.perf_counter()
        try:
            program = self._program()
        except ProgramLoadError as exc:
            entry = placeholder_suite_entry(
                self.nodeid,
                self.suite,
                threshold=threshold,
                outcome="failed",
                error=exc.summary(),
                duration_s=time.perf_counter() - started,
            )
            metric = self.suite.metric
            failed = SuiteResult.failed(
                self.suite.name,
                metric.name if metric is not None else None,
                metric.dataset if metric is not None else None,
                entry["error"],
                entry["duration_s"],
            )
            self.ihook.pytest_kedi_suite_result(item=self, result=failed)
            self._publish(entry)
            raise KediSuiteFailed(failure_text(entry, Verdict(False, ()), exc.text)) from None

        options = EvalOptions(
            split=settings.split,  # type: ignore[arg-type]
            concurrency=settings.concurrency,
            timeout=settings.timeout,
            max_rows=settings.max_rows,
        )
        result = run_suite(program, self.suite, options, on_row=self._on_row)
        self.ihook.pytest_kedi_suite_result(item=self, result=result)
        verdict = judge(
            error=result.error,
            score=result.score,
            rows_total=result.rows_total,
            rows_errored=result.rows_errored,
            threshold=threshold,
            max_errors=settings.max_errors,
        )
        entry = suite_entry(
            self.nodeid,
            self.suite,
            result,
            threshold=threshold,
            outcome="passed" if verdict.passed else "failed",
        )
        self._publish(entry)
        if settings.rows_mode == "subtests":
            emit_row_reports(self, entry["rows"])
        elif entry["rows"]:
            self.add_report_section("call", "kedi rows", rows_section(entry["rows"]))
        if not verdict.passed:
            detail = None
            exception = result.exception
            if exception is not None and hasattr(exception, "render"):
                detail = relative_locations(exception.render())
            raise KediSuiteFailed(failure_text(entry, verdict, detail))

    def _on_row(self, row: RowResult) -> None:
        self.ihook.pytest_kedi_row_result(item=self, row=row)

    def _publish(self, entry: dict[str, Any]) -> None:
        self.stash[SUITE_ENTRY] = entry
        # Replaced, not appended, on a rerun (pytest-rerunfailures); unset values are omitted.
        properties = [
            ("kedi_score", entry["score"]),
            ("kedi_threshold", entry["threshold"]),
            ("kedi_rows", entry["rows_total"]),
            ("kedi_errors", entry["rows_errored"]),
            ("kedi_split", entry["split"]),
        ]
        self.user_properties[:] = [
            prop for prop in self.user_properties if not str(prop[0]).startswith("kedi_")
        ] + [(name, value) for name, value in properties if value is not None]


def _rewrite_asserts(tree: ast.Module, filename: str) -> None:
    """Run pytest's assertion rewriter over a case's Python (introspected failures).

    ``config`` is not passed: it only enables the assertion-pass hook, which needs the
    original source text by line; the comparison output itself is configured at run time.
    """
    from _pytest.assertion.rewrite import rewrite_asserts

    rewrite_asserts(tree, ast.unparse(tree).encode("utf-8"), filename, None)


def _case_failure(error: BaseException) -> tuple[str, str, int | None]:
    """(failure text, message, failing .kedi line) for an exception raised by a case.

    The message is ``<ExceptionType>: <message>``; for a failing ``assert`` it is pytest's
    rewritten assertion text (with the compared values), possibly over several lines.
    """
    from pytest_kedi.evals.classify import relative_locations
    from pytest_kedi.runtime.errors import KediExecutionError

    if isinstance(error, KediExecutionError):
        lines = relative_locations(error.render()).splitlines()
        original = error.original
        if isinstance(original, AssertionError):
            detail = str(original).strip()
            message = f"AssertionError: {detail}" if detail else "AssertionError"
            lines[-1] = message
            return "\n".join(lines), message, error.line
        return "\n".join(lines), lines[-1], error.line
    detail = str(error).strip()
    message = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    return message, message, None


class KediCaseItem(_KediItem):
    """One ``> case:`` of a ``@test:`` suite, run on the file's shared runtime."""

    def __init__(self, *, suite: nodes.TestSuite, case: nodes.Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite
        self.case = case

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.span.start_line - 1, self.name

    def _head(self, line: int | None, message: str) -> str:
        """``file.kedi:LINE: <message>`` (pytest's short summary shows this line)."""
        where = f"{self.nodeid.split('::', 1)[0]}:{line or self.case.span.start_line}"
        first = message.splitlines()[0] if message else ""
        return f"{where}: {first}\n@test: {self.suite.name} > case: {self.case.name}"

    def runtest(self) -> None:
        try:
            program = self._program()
        except ProgramLoadError as exc:
            self._publish("failed", exc.message)
            head = self._head(None, exc.message)
            raise KediCaseFailed(f"{head} could not run:\n{exc.text}") from None
        try:
            program.run_case(self.suite, self.case, transform=_rewrite_asserts)
        except Exception as error:
            text, message, line = _case_failure(error)
            self._publish("failed", message)
            raise KediCaseFailed(f"{self._head(line, message)} failed:\n{text}") from None
        self._publish("passed", None)

    def _publish(self, outcome: str, message: str | None) -> None:
        self.stash[CASE_ENTRY] = case_entry(
            self.nodeid, self.suite, self.case, outcome=outcome, message=message
        )
