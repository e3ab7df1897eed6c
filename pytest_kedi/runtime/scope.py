"""Lexical environments: module, procedure-frame and block scopes (docs/language.md#environments,
#block-scopes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_kedi.runtime.caches import Epochs
from pytest_kedi.runtime.livecopies import RUNNING, sync

if TYPE_CHECKING:  # pragma: no cover (the model package imports pydantic)
    from pytest_kedi.runtime.model.state import AgentState

__all__ = [
    "EPOCHS",
    "MISSING",
    "KediArgs",
    "LazyBinding",
    "Scope",
]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

#: ``module`` is bumped whenever a module-level or prelude binding changes, ``prelude``
#: whenever a prelude binding changes (the module-level Python globals are rebuilt).
EPOCHS = Epochs("binding epochs", "pytest_kedi.runtime.scope")


class KediArgs:
    """The reserved ``args`` namespace (docs/language.md#program-runs): a missing attribute reads
    ``None``."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self.__dict__.update(dict(values or {}))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return None

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"args({inner})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KediArgs) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]


@dataclass(eq=False, repr=False, slots=True)
class LazyBinding:
    """A validation-mode top-level binding that runs on first read
    (docs/language.md#validation-mode, #lazy-bindings).

    ``runner`` evaluates the binding in its own source-position environment, replaces
    the binding in the module scope (unless a later declaration did) and returns the
    values of ``names``; it runs once: its values are kept, and a failure is remembered
    and re-raised on later reads.
    """

    names: tuple[str, ...]
    runner: Callable[[LazyBinding], dict[str, Any]]
    scope: Scope
    running: bool = False
    error: BaseException | None = None
    values: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"<lazy binding {', '.join(self.names)}>"


class Scope:
    """One environment in the lookup chain.

    ``kind`` is ``"prelude"``, ``"module"``, ``"frame"`` (a procedure invocation or an
    eval/test body) or ``"block"`` (branch, loop iteration, map continuation).
    ``contracts`` records the declared type of value bindings (absent = ``str``);
    ``params`` are read-only parameter names of a procedure frame.
    """

    # Plain attributes with class-level defaults: creating a frame sets only four.
    params: frozenset[str] = frozenset()
    forcer: Callable[[LazyBinding, str], Any] | None = None
    version: int = 0
    volatile: bool = False
    _contracts: dict[str, Any] | None = None
    _gcache: tuple[int, Any] | None = None
    #: when set, the value each name had before its first rebinding is recorded here
    observer: dict[str, Any] | None = None
    #: a prelude's module scope, whose Python globals hold the prelude's names too
    heir: Scope | None = None
    #: some name is bound to MISSING here: absent, hiding any outer binding (an eval row
    #: without ``expected``, docs/language.md#scoring); reads find no binding
    hides: bool = False

    def __init__(
        self,
        vars: dict[str, Any],
        parent: Scope | None,
        kind: str,
        state: AgentState,
    ) -> None:
        self.vars = vars
        self.parent = parent
        self.kind = kind
        self.state = state

    @property
    def contracts(self) -> dict[str, Any]:
        if self._contracts is None:
            self._contracts = {}
        return self._contracts

    def child(self, kind: str = "block") -> Scope:
        return Scope({}, self, kind, self.state)

    # -- lookup ----------------------------------------------------------------------------
    def find_owner(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope
            scope = scope.parent
        return None

    def get(self, name: str, default: Any = MISSING) -> Any:
        """Read ``name`` (forcing a lazy binding); ``default`` when unbound."""
        scope: Scope | None = self
        while scope is not None:
            vars_ = scope.vars
            if name in vars_:
                value = vars_[name]
                if type(value) is LazyBinding:
                    assert scope.forcer is not None
                    return scope.forcer(value, name)
                return value
            scope = scope.parent
        return default

    def get_raw(self, name: str, default: Any = MISSING) -> Any:
        owner = self.find_owner(name)
        return default if owner is None else owner.vars[name]

    # -- binding ---------------------------------------------------------------------------
    def bind(self, name: str, value: Any, contract: Any = MISSING) -> None:
        observer = self.observer
        if observer is not None and name not in observer:
            observer[name] = self.vars.get(name, MISSING)
        self.vars[name] = value
        if contract is MISSING:
            if self._contracts is not None:
                self._contracts.pop(name, None)
        else:
            self.contracts[name] = contract
        self._changed(name, value)

    def set_existing(self, name: str, value: Any) -> None:
        """Rebind a name this scope already owns, keeping its contract."""
        observer = self.observer
        if observer is not None and name not in observer:
            observer[name] = self.vars.get(name, MISSING)
        self.vars[name] = value
        self._changed(name, value)

    def _changed(self, name: str, value: Any) -> None:
        self.version += 1
        if self.kind == "module":
            EPOCHS.bump()
            self._in_globals(name, value)
        elif self.kind == "prelude":
            EPOCHS.bump(prelude=True)
            heir = self.heir
            if heir is not None and name not in heir.vars:
                heir._in_globals(name, value)  # code running now reads the new value too
        units = RUNNING.units
        if units and type(value) is not LazyBinding:
            sync(units, self, name, value)  # Python units running now read it too

    def _in_globals(self, name: str, value: Any) -> None:
        """Keep the module's Python globals in step (no rebuild per statement)."""
        cached = self._gcache
        if cached is not None:
            g = cached[1]
            if type(g) is dict:
                g[name] = value
            else:
                g.assign(name, value)

    def chain(self) -> list[Scope]:
        out: list[Scope] = []
        scope: Scope | None = self
        while scope is not None:
            out.append(scope)
            scope = scope.parent
        return out

    def visible_names(self) -> set[str]:
        names: set[str] = set()
        for scope in self.chain():
            names.update(scope.vars)
        return names
