"""Collection: ``.kedi`` files become `KediFile` collectors of eval items and case items.

Node ids (stable, readable, selectable on the command line)::

    path/file.kedi::eval:<suite>            one item per @eval: suite
    path/file.kedi::test:<suite>            one collector per @test: suite
    path/file.kedi::test:<suite>::<case>    one item per > case:

A suite name repeated within a file gets ``-2``, ``-3`` … in source order
(``eval:answer-2``). Collection only parses the file; nothing is executed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from _pytest._code.code import ReprEntryNative, ReprExceptionInfo, ReprFileLocation, ReprTraceback

from pytest_kedi.constants import EVAL_SKIP_REASON
from pytest_kedi.fileread import is_file
from pytest_kedi.lang.diagnostics import KediParseError
from pytest_kedi.plugin.items import KediCaseItem, KediEvalItem, rewrite_case_asserts
from pytest_kedi.plugin.outline import FileOutline, LazyModule, SuiteOutline, outline_of
from pytest_kedi.plugin.state import kedi_session
from pytest_kedi.text import display_path, is_kedi_program

if TYPE_CHECKING:  # pragma: no cover
    from _pytest._code.code import TerminalRepr

    from pytest_kedi.lang import nodes
    from pytest_kedi.lang.pycheck import Parsed
    from pytest_kedi.plugin.parsecache import Precompile
    from pytest_kedi.runtime.pyinterop import CodeStore

__all__ = [
    "CollectErrorRepr",
    "KediCacheFile",
    "KediCollectError",
    "KediFile",
    "cache_program",
    "KediTestSuite",
    "is_kedi_program",
    "received_collect_error",
    "passed_over",
    "check_kedi_args",
    "eval_item_names",
    "unique_names",
]

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
        """The error's text and headline cleaned like every report text (a parse error
        quotes its source line, which may hold a credential's value)."""
        from pytest_kedi.evals.safetext import clean_text

        text, headline = clean_text(str(error)), clean_text(error.headline)
        return cls(
            reprtraceback=ReprTraceback([ReprEntryNative([text + "\n"])], None, "native"),
            reprcrash=ReprFileLocation(error.path, error.line, headline),
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
        and (is_kedi_program(report.fspath) or report.fspath.endswith(CACHE_SUFFIX))
    ):
        longrepr = report.longrepr
        report.longrepr = CollectErrorRepr(longrepr.reprtraceback, longrepr.reprcrash)
    return report


def passed_over(parent: pytest.Collector, path: Path) -> bool:
    """``path`` is a Kedi program the run selects: given on the command line (or in
    ``testpaths``), or inside a folder that is. (On its way to a file given, pytest also
    offers the folder's other files to the plugins: ``pytest test_x.py``.)"""
    session = parent.session
    return is_kedi_program(path) and (
        session.isinitpath(path) or any(session.isinitpath(d) for d in path.parents)
    )


def _parse_checked(name: str, data: bytes, trees: dict[int, Parsed] | None = None) -> nodes.Module:
    """The checked module of ``data``, the collected content of the file ``name`` (``trees``:
    where `check_python` keeps the trees of its Python)."""
    from pytest_kedi.lang import check_python
    from pytest_kedi.lang.files import parse_data

    return check_python(parse_data(name, data), trees)


def eval_item_names(outline: FileOutline) -> list[str]:
    """The names of a file's eval items (``eval:`` dropped), in source order."""
    return unique_names(_safe(s.name) for s in outline.suites if s.kind == "eval")


def _safe(name: str) -> str:
    if name.isidentifier():  # the common case: no ``::``, bracket, space or slash in it
        return name
    return _UNSAFE.sub("_", name) or "_"


def unique_names(names: Iterable[str]) -> list[str]:
    """Suffix repeated names with ``-2``, ``-3`` … in order (``a, a, b`` → ``a, a-2, b``);
    a list in which nothing repeats is returned itself."""
    given = names if type(names) is list else list(names)
    if len(given) < 2 or len(set(given)) == len(given):  # the common case: nothing repeated
        return given
    seen: dict[str, int] = {}
    taken: set[str] = set()
    result: list[str] = []
    for name in given:
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

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        from pytest_kedi.runtime.heap import older_objects_frozen

        with older_objects_frozen():
            return list(self._children())

    def _children(self) -> Iterator[pytest.Item | pytest.Collector]:
        outline, lazy = self._outline()
        marks = _marks(self.config).evals
        suites = outline.suites
        evals = iter(unique_names([_safe(s.name) for s in suites if s.kind == "eval"]))
        tests = iter(unique_names([_safe(s.name) for s in suites if s.kind == "test"]))
        for suite in suites:
            if suite.kind == "eval":
                item = KediEvalItem.from_parent(
                    self, name=f"eval:{next(evals)}", outline=suite, lazy=lazy
                )
                for mark in marks:
                    item.add_marker(mark)
                yield item
            else:
                yield KediTestSuite.from_parent(
                    self, name=f"test:{next(tests)}", outline=suite, lazy=lazy
                )

    def _outline(
        self, path: Path | None = None, *, report: bool = True
    ) -> tuple[FileOutline, LazyModule]:
        """The outline of the file (or of ``path``), from the parse cache when it has the
        file's content, and its module, loaded on first use; raise `KediCollectError`
        (``report``: counted as this node's parse error)."""
        path = self.path if path is None else path
        session = kedi_session(self.config)
        parse_cache = session.disk_caches[0]
        # The trees of the file's Python, parsed by its syntax check, compiled below.
        trees: dict[int, Parsed] = {}
        try:
            if parse_cache is not None:
                outline, lazy = parse_cache.outline(path, trees, self._precompile(trees, path))
            else:
                from pytest_kedi.lang.files import read_source

                name, data = os.fspath(path), read_source(path)
                module = _parse_checked(name, data, trees)
                # Compiled for the run, kept in memory (`MemoryCodeStore`).
                self._precompile(trees, path)(module, session.disk_caches[1])
                # loaded already; parsed again from the collected text if released
                outline = outline_of(module)
                lazy = LazyModule(_parse_checked, (name, data), module)
        except KediParseError as exc:
            from pytest_kedi.evals.classify import relative_locations

            if report:
                session.parse_errors.append(self.nodeid)
            # Paths are shown relative to the directory pytest runs in, as the CLI shows them.
            where = f"{display_path(exc.path)}:{exc.line}:{exc.column}"
            text = relative_locations(exc.render(debug=session.settings.debug))
            headline = f"{where}: {exc.message}"
            raise KediCollectError(text, headline, display_path(exc.path), exc.line) from None
        except (OSError, UnicodeDecodeError) as exc:
            if report:
                session.parse_errors.append(self.nodeid)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            message = f"cannot read {display_path(str(path))}: {reason}"
            raise KediCollectError(message, message, display_path(str(path)), 0) from None
        return outline, lazy

    def _precompile(self, trees: dict[int, Parsed], path: Path | None = None) -> Precompile:
        """How a file collection has just parsed gets its Python compiled into the code
        cache, kept with the parse: as pytest compiles a test module it collects, so the
        run compiles nothing. (Parsing its Python again would give Python's warnings about
        it a second time: the trees its syntax check parsed are compiled.)"""
        name = os.fspath(self.path if path is None else path)

        def precompile(module: nodes.Module, store: CodeStore) -> None:
            from pytest_kedi.runtime.casecode import precompile_module

            precompile_module(module, name, store, rewrite_case_asserts, trees)

        return precompile


#: The suffix of an ``> auto:`` optimizer cache (``prog.cache.kedi`` beside ``prog.kedi``).
CACHE_SUFFIX = ".cache.kedi"


def cache_program(path: Path) -> Path | None:
    """The program whose ``> auto:`` cache ``path`` is (its ``prog.kedi``), if it exists."""
    if not path.name.endswith(CACHE_SUFFIX):
        return None
    program = path.with_name(path.name[: -len(CACHE_SUFFIX)] + ".kedi")
    return program if is_kedi_program(program) and is_file(program) else None


class KediCacheFile(KediFile):
    """A ``prog.cache.kedi`` optimizer cache: only the ``@test:`` suites it generated for
    the ``> auto:`` procedures of ``prog.kedi`` that it defines (docs/language.md §4.5),
    run on ``prog.kedi``'s runtime. Nothing is collected from it when ``prog.kedi`` has
    no ``> auto:`` procedure."""

    def _children(self) -> Iterator[pytest.Item | pytest.Collector]:
        program = cache_program(self.path)
        if program is None:
            return
        try:
            program_outline, program_lazy = self._outline(program, report=False)
        except KediCollectError:
            return  # the program's own collection reports it
        if not program_outline.autos:
            return
        from pytest_kedi.runtime.autocache import generated_names

        outline, lazy = self._outline()
        generated = generated_names(program_outline.autos, lazy.module())
        suites = [s for s in outline.suites if s.kind == "test" and s.name in generated]
        names = unique_names(_safe(s.name) for s in suites)
        for suite, name in zip(suites, names, strict=True):
            yield KediTestSuite.from_parent(
                self, name=f"test:{name}", outline=suite, lazy=lazy,
                runs_in=(program, program_lazy),
            )  # fmt: skip


class _Marks:
    """The marks of eval items and of case items (a plain class: made once a session, it
    is not worth a dataclass's cost at import)."""

    __slots__ = ("cases", "evals")

    def __init__(
        self, evals: tuple[pytest.MarkDecorator, ...], cases: tuple[pytest.MarkDecorator, ...]
    ) -> None:
        self.evals = evals
        self.cases = cases


_MARKS = pytest.StashKey[_Marks]()


def _marks(config: pytest.Config) -> _Marks:
    """The marks every eval item and every case item gets (made once per session)."""
    marks = config.stash.get(_MARKS, None)
    if marks is None:
        kedi = pytest.mark.kedi
        evals: tuple[pytest.MarkDecorator, ...] = (kedi, pytest.mark.kedi_eval)
        if not kedi_session(config).settings.eval_enabled:
            evals += (pytest.mark.skip(reason=EVAL_SKIP_REASON),)
        marks = _Marks(evals, (kedi, pytest.mark.kedi_test))
        config.stash[_MARKS] = marks
    return marks


class KediTestSuite(pytest.Collector):
    """One ``@test:`` suite: a collector with one item per ``> case:``."""

    def __init__(
        self,
        *,
        outline: SuiteOutline,
        lazy: LazyModule,
        runs_in: tuple[Path, LazyModule] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.outline = outline
        self.lazy = lazy  # the module holding the suite
        self.runs_in = runs_in  # the program running it, when not this file's (`KediItem`)

    @property
    def suite(self) -> nodes.TestSuite:
        """The suite's node (the file's full module is loaded on first use)."""
        # of the outline's kind: `LazyModule.suite` checks
        return cast("nodes.TestSuite", self.lazy.suite(self.outline))

    def collect(self) -> list[pytest.Item]:
        from pytest_kedi.runtime.heap import older_objects_frozen

        with older_objects_frozen():
            return list(self._children())

    def _children(self) -> Iterator[pytest.Item]:
        marks = _marks(self.config).cases
        cases = self.outline.cases
        names = unique_names([_safe(case.name) for case in cases])
        for index, (case, name) in enumerate(zip(cases, names, strict=True)):
            item = KediCaseItem.from_parent(
                self, name=name, outline=self.outline, case_outline=case, index=index,
                lazy=self.lazy, runs_in=self.runs_in,
            )  # fmt: skip
            for mark in marks:
                item.add_marker(mark)
            yield item

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.outline.line - 1, self.name


def check_kedi_args(args: list[str], *, collecting: bool) -> None:
    """A ``.kedi`` path (a program, or a ``prog.cache.kedi`` holding tests of its ``> auto:``
    procedures) given explicitly while collection is off: say how to enable it; a node id
    in one naming neither ``eval:`` nor ``test:`` (``qa.kedi::answer``): say what they are
    (README, "Node ids"). pytest alone would only report "not found: ... (no match in any
    of ...)"."""
    for arg in args:
        file_part, sep, rest = arg.partition("::")
        path = Path(file_part)
        if not (is_kedi_program(path) or cache_program(path) is not None) or not is_file(path):
            continue
        if not collecting:
            raise pytest.UsageError(
                f"{arg}: .kedi files are collected only with --kedi-eval "
                "(or KEDI_EVAL=1), or with ini kedi_collect = true"
            )
        if sep and not rest.startswith(("eval:", "test:")):
            name = rest.partition("::")[0]
            raise pytest.UsageError(
                f"{arg}: a .kedi file's node ids are {file_part}::eval:<suite> (an @eval: suite) "
                f"and {file_part}::test:<suite>[::<case>] (an @test: suite or case), "
                f"e.g. {file_part}::eval:{name}"
            )
