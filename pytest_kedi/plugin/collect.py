"""Collection: ``.kedi`` files become `KediFile` collectors of eval items and case items.

Node ids (stable, readable, selectable on the command line)::

    path/file.kedi::eval:<suite>            one item per @eval: suite
    path/file.kedi::test:<suite>            one collector per @test: suite
    path/file.kedi::test:<suite>::<case>    one item per > case:

A suite name repeated within a file gets ``-2``, ``-3`` … in source order
(``eval:answer-2``). Collection only parses the file; nothing is executed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest._code.code import ReprEntryNative, ReprExceptionInfo, ReprFileLocation, ReprTraceback

from pytest_kedi.lang import nodes
from pytest_kedi.plugin.items import KediCaseItem, KediEvalItem
from pytest_kedi.plugin.state import kedi_session
from pytest_kedi.text import is_kedi_program

if TYPE_CHECKING:  # pragma: no cover
    from _pytest._code.code import TerminalRepr

__all__ = [
    "CollectErrorRepr",
    "KediCollectError",
    "KediFile",
    "KediTestSuite",
    "is_kedi_program",
    "received_collect_error",
    "unique_names",
]

EVAL_SKIP_REASON = "Kedi @eval: suites run only with --kedi-eval (or KEDI_EVAL=1)"
_UNSAFE = re.compile(r"::|[\[\]\s/\\]")


class KediCollectError(Exception):
    """A ``.kedi`` file could not be collected; the message is the full diagnostic.

    ``path``, ``line`` and ``headline`` (``file.kedi:LINE:COL: message``) are its crash
    location: pytest's short test summary shows the headline after the file name.
    """

    def __init__(self, text: str, headline: str, path: str, line: int) -> None:
        super().__init__(text)
        self.headline = headline
        self.path = path
        self.line = line


class CollectErrorRepr(ReprExceptionInfo):
    """A collection error as one of pytest's own exception representations: its text is
    exactly the Kedi diagnostic and its ``reprcrash`` the focused headline, which the
    short test summary shows. pytest-xdist carries this shape from a worker to the
    controller (anything else arrives as a plain string, whose first line would become
    the summary). Two are equal when they say the same, so the controller reports an
    error that every worker hits once."""

    @classmethod
    def of(cls, error: KediCollectError) -> CollectErrorRepr:
        return cls(
            reprtraceback=ReprTraceback([ReprEntryNative([str(error) + "\n"])], None, "native"),
            reprcrash=ReprFileLocation(error.path, error.line, error.headline),
        )

    def _key(self) -> tuple[object, ...]:
        crash = self.reprcrash
        lines = tuple(
            tuple(getattr(entry, "lines", ())) for entry in self.reprtraceback.reprentries
        )
        where = (crash.path, crash.lineno, crash.message) if crash is not None else None
        return (where, lines)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CollectErrorRepr) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def received_collect_error(report: object) -> object:
    """``report`` as received from an xdist worker, a ``.kedi`` file's collection error
    given back its `CollectErrorRepr` (which the transport turned into pytest's plain
    `ReprExceptionInfo`)."""
    if (
        isinstance(report, pytest.CollectReport)
        and report.failed
        and type(report.longrepr) is ReprExceptionInfo
        and is_kedi_program(report.fspath)
    ):
        longrepr = report.longrepr
        report.longrepr = CollectErrorRepr(longrepr.reprtraceback, longrepr.reprcrash)
    return report


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name) or "_"


def unique_names(names: Iterable[str]) -> list[str]:
    """Suffix repeated names with ``-2``, ``-3`` … in order (``a, a, b`` → ``a, a-2, b``)."""
    seen: dict[str, int] = {}
    taken: set[str] = set()
    result: list[str] = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        candidate = name if count == 1 else f"{name}-{count}"
        while candidate in taken:
            count += 1
            seen[name] = count
            candidate = f"{name}-{count}"
        taken.add(candidate)
        result.append(candidate)
    return result


class KediFile(pytest.File):
    """One ``.kedi`` program: its ``@eval:`` suites and ``@test:`` suites, in source order."""

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        """Our own collection errors show their text only (no internal traceback)."""
        if isinstance(excinfo.value, KediCollectError):
            return CollectErrorRepr.of(excinfo.value)
        return super().repr_failure(excinfo)

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        from pytest_kedi.evals.classify import relative_locations
        from pytest_kedi.lang import KediParseError, check_python, parse_file
        from pytest_kedi.text import display_path

        # Paths are shown relative to the directory pytest runs in, as the CLI shows them.
        parse_cache = kedi_session(self.config).disk_caches[0]
        try:
            if parse_cache is not None:
                module = parse_cache.module(self.path)
            else:
                module = check_python(parse_file(self.path))
        except KediParseError as exc:
            kedi_session(self.config).parse_errors.append(self.nodeid)
            where = f"{display_path(exc.path)}:{exc.line}:{exc.column}"
            text = relative_locations(exc.render(debug=kedi_session(self.config).settings.debug))
            headline = f"{where}: {exc.message}"
            raise KediCollectError(text, headline, display_path(exc.path), exc.line) from None
        except (OSError, UnicodeDecodeError) as exc:
            kedi_session(self.config).parse_errors.append(self.nodeid)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            message = f"cannot read {display_path(str(self.path))}: {reason}"
            raise KediCollectError(message, message, display_path(str(self.path)), 0) from None

        self.kedi_source = module.source  # items fail if the file changes before they run
        eval_enabled = kedi_session(self.config).settings.eval_enabled
        evals = module.eval_suites
        tests = module.test_suites
        eval_names = dict(
            zip(map(id, evals), unique_names(_safe(s.name) for s in evals), strict=True)
        )
        test_names = dict(
            zip(map(id, tests), unique_names(_safe(s.name) for s in tests), strict=True)
        )
        for stmt in module.body:
            if isinstance(stmt, nodes.EvalSuite):
                item = KediEvalItem.from_parent(
                    self, name=f"eval:{eval_names[id(stmt)]}", suite=stmt
                )
                item.add_marker("kedi")
                item.add_marker("kedi_eval")
                if not eval_enabled:
                    item.add_marker(pytest.mark.skip(reason=EVAL_SKIP_REASON))
                yield item
            elif isinstance(stmt, nodes.TestSuite):
                yield KediTestSuite.from_parent(
                    self, name=f"test:{test_names[id(stmt)]}", suite=stmt
                )


class KediTestSuite(pytest.Collector):
    """One ``@test:`` suite: a collector with one item per ``> case:``."""

    def __init__(self, *, suite: nodes.TestSuite, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    def collect(self) -> Iterator[pytest.Item]:
        names = unique_names(_safe(case.name) for case in self.suite.cases)
        for case, name in zip(self.suite.cases, names, strict=True):
            item = KediCaseItem.from_parent(self, name=name, suite=self.suite, case=case)
            item.add_marker("kedi")
            item.add_marker("kedi_test")
            yield item

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.suite.span.start_line - 1, self.name
