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

from pytest_kedi.lang import nodes
from pytest_kedi.plugin.items import KediCaseItem, KediEvalItem
from pytest_kedi.plugin.state import kedi_session
from pytest_kedi.text import is_kedi_program

if TYPE_CHECKING:  # pragma: no cover
    from _pytest._code.code import TerminalRepr

__all__ = ["KediCollectError", "KediFile", "KediTestSuite", "is_kedi_program", "unique_names"]

EVAL_SKIP_REASON = "Kedi @eval: suites run only with --kedi-eval (or KEDI_EVAL=1)"
_UNSAFE = re.compile(r"::|[\[\]\s/\\]")


class KediCollectError(Exception):
    """A ``.kedi`` file could not be collected; the message is the full diagnostic.

    ``headline`` (``file.kedi:LINE:COL: message``) is what pytest's short test summary
    shows after the file name.
    """

    def __init__(self, text: str, headline: str) -> None:
        super().__init__(text)
        self.headline = headline


class _Crash:
    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


class _CollectErrorRepr:
    """A collection error's text (exactly the Kedi diagnostic), with the
    ``reprcrash.message`` that pytest's short test summary reads."""

    def __init__(self, error: KediCollectError) -> None:
        self.text = str(error)
        self.reprcrash = _Crash(error.headline)

    def toterminal(self, tw: Any) -> None:
        for line in self.text.split("\n"):
            tw.line(line, red=True)

    def __str__(self) -> str:
        return self.text


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
            return _CollectErrorRepr(excinfo.value)  # type: ignore[return-value]
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
            raise KediCollectError(text, f"{where}: {exc.message}") from None
        except (OSError, UnicodeDecodeError) as exc:
            kedi_session(self.config).parse_errors.append(self.nodeid)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            message = f"cannot read {display_path(str(self.path))}: {reason}"
            raise KediCollectError(message, message) from None

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
