"""What both item kinds (`pytest_kedi.plugin.items`) share: `KediItem`.

Fixtures as pytest's doctest items have them (a `TopRequest`, computed when first read),
a stand-in ``item.module`` per ``.kedi`` file, failures shown as Kedi text (or, for an
unexpected exception, the user's frames only), and the file's program, loaded when an
item first runs.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_kedi.plugin.outline import LazyModule
from pytest_kedi.plugin.state import ProgramLoadError, kedi_session
from pytest_kedi.text import line_list

if TYPE_CHECKING:  # pragma: no cover
    from _pytest._code.code import TerminalRepr

    from pytest_kedi.plugin.failures import KediFailure

__all__ = ["KediItem"]

_FILE_MODULE = pytest.StashKey[ModuleType]()


def _file_module(file: pytest.File) -> ModuleType:
    """One empty stand-in module per ``.kedi`` file, named after its node id.

    Plugins that group items by ``item.module`` (pytest-randomly shuffles modules, then
    the items within each) then keep a file's items together. It holds no code: the
    file's program is loaded when its first item runs.
    """
    module = file.stash.get(_FILE_MODULE, None)
    if module is None:
        module = ModuleType(file.nodeid)
        module.__file__ = str(file.path)
        file.stash[_FILE_MODULE] = module
    return module


def _internal_dirs() -> tuple[str, ...]:
    import _pytest
    import pluggy

    import pytest_kedi

    return tuple(
        str(Path(module.__file__ or "").parent) for module in (pytest_kedi, pluggy, _pytest)
    )


class _OnFirstRead:
    """An item's fixture attribute, computed (with the others) when first read.

    Collection then costs no fixture closure per item; pytest reads them when the item
    runs, and a hook or plugin reading one earlier gets it computed on the spot.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, item: KediItem | None, owner: type | None = None) -> Any:
        if item is None:
            return self
        item._initrequest()  # sets the attribute on the instance, which shadows this
        try:
            return item.__dict__[self.name]
        except KeyError:  # --fixtures-per-test: items have no fixtures
            raise AttributeError(self.name) from None


class KediItem(pytest.Item):
    """Fixture support as pytest's doctest items have it: autouse fixtures and
    ``usefixtures`` marks (also those added after collection, e.g. by
    ``pytest_collection_modifyitems``) are set up around each item, function-scoped."""

    if not TYPE_CHECKING:  # typed by their assignments in `_initrequest`
        _fixtureinfo = _OnFirstRead()
        fixturenames = _OnFirstRead()
        funcargs = _OnFirstRead()
        _request = _OnFirstRead()

    #: The program the item runs in, when not its own file's: a case generated into
    #: ``prog.cache.kedi`` runs on ``prog.kedi`` (its path and collected module).
    runs_in: tuple[Path, LazyModule] | None = None

    def __init__(
        self, *, lazy: LazyModule, runs_in: tuple[Path, LazyModule] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.lazy = lazy  # the file's module, loaded when an item first needs it
        if runs_in is not None:
            self.runs_in = runs_in

    @property
    def module(self) -> ModuleType:
        """The stand-in module of the item's ``.kedi`` file (see `_file_module`)."""
        file = self.getparent(pytest.File)  # type: ignore[type-abstract]
        assert file is not None
        return _file_module(file)

    def _initrequest(self) -> None:
        """(Re)compute the item's fixture closure and request (pytest calls this again
        before rerunning an item whose request it released)."""
        from _pytest.fixtures import TopRequest

        if self.config.getoption("show_fixtures_per_test", False):
            return  # that listing needs a Python function per item; nothing runs anyway
        self._marks_seen = tuple(self.iter_markers())
        self._fixtureinfo = self.session._fixturemanager.getfixtureinfo(
            node=self, func=None, cls=None
        )
        self.fixturenames = self._fixtureinfo.names_closure
        self.funcargs: dict[str, object] = {}
        self._request = TopRequest(self, _ispytest=True)  # type: ignore[arg-type]

    def _marks_changed(self) -> bool:
        """Whether the item's marks (its own and its parents') changed since its fixture
        closure was computed (pytest reads the request as the item's run starts, just
        before `setup`)."""
        seen = self.__dict__.get("_marks_seen")
        now = tuple(self.iter_markers())
        if seen is None or len(seen) != len(now):
            return True
        return any(a is not b for a, b in zip(seen, now, strict=True))

    def setup(self) -> None:
        __tracebackhide__ = True
        if self._request is False or self._marks_changed():
            self._initrequest()  # picks up marks added since the closure was computed
        try:
            self._request._fillfixtures()
        except pytest.FixtureLookupError as exc:
            missing = exc
        else:
            return
        # pytest's own text for it shows the requesting Python function: ours is a suite
        pytest.fail(self._fixture_lookup_text(missing), pytrace=False)

    def _fixture_lookup_text(self, exc: pytest.FixtureLookupError) -> str:
        """pytest's report of a missing (or recursive) fixture, located at the item's
        ``.kedi`` header line instead of at a Python function the item does not have:
        ``path:line: fixture 'x' not found``, the header, the requesting fixtures' source
        and the fixtures available."""
        from pytest_kedi.text import display_path

        path, at, _name = self.reportinfo()
        line = at or 0
        self.obj = None  # what pytest's text reads of a Python test item (a doctest's too)
        try:
            shown = exc.formatrepr()
        finally:
            del self.obj
        try:
            source = line_list(self.lazy.module().source)
        except Exception:  # the file's own error is reported when the item runs
            source = []
        header = source[line].strip() if 0 <= line < len(source) else self.name
        stack = [text.rstrip() for text in shown.tblines if not text.startswith("file , line")]
        first, *rest = [text.strip() for text in shown.errorstring.strip().split("\n")]
        where = f"{display_path(str(path))}:{line + 1}"
        return "\n".join([f"{where}: {first}", f"  {header}", *stack, *(f"  {r}" for r in rest)])

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
        # (imported on a failure: a run whose Kedi items pass, or that only collects, never)
        from pytest_kedi.plugin.failures import FAILURE, failure_repr

        failure = self.stash.get(FAILURE, None)
        if failure is not None and excinfo.value is failure.raised:
            return failure_repr(failure, str(self.config.getoption("tbstyle", "auto")))
        return super().repr_failure(excinfo, style=style)

    def _fail(self, failure: KediFailure) -> NoReturn:
        """Raise ``failure.raised`` (with its own traceback) and show ``failure``'s text."""
        __tracebackhide__ = True
        from pytest_kedi.plugin.failures import FAILURE

        self.stash[FAILURE] = failure
        raise failure.raised

    def _program(self) -> Any:
        __tracebackhide__ = True
        session = kedi_session(self.config)
        path, lazy = (self.path, self.lazy) if self.runs_in is None else self.runs_in
        collected = lazy.module()  # loaded first: the program reuses it
        loaded = session.programs.program_for(path, self)  # (its hooks: when it loads)
        if loaded.program.module.source != collected.source:
            from pytest_kedi.text import display_path

            text = f"{display_path(str(path))} changed since collection; run pytest again"
            raise ProgramLoadError(text, f"KediImportError: {text}")
        session.note_model(self.nodeid, loaded.model_label)
        return loaded.program
