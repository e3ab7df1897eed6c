"""Runtime-wide objects: the root `Runtime`, one `ModuleUnit` per `.kedi` file, and the
execution frame `Frame` (scope, module, procedure, return type) threaded through statement
execution."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_kedi.errors import KediExecutionError, KediTraceFrame
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.pyinterop import CodeStore, CompiledUnit, Transform, compile_unit
from pytest_kedi.runtime.pymodule import Owned
from pytest_kedi.runtime.scope import Scope
from pytest_kedi.runtime.sourcefile import SourceFile

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime.procedures import KediProcedure

__all__ = ["LOOP_LIMIT", "Frame", "ModuleUnit", "Ret", "Runtime"]

#: Default iteration limit of a conditional ``> loop:`` (docs/language.md#loops).
LOOP_LIMIT = 10_000


class Runtime:
    """State shared by a root program and every module it imports."""

    def __init__(
        self,
        *,
        model: Any = None,
        default_model: str | None = None,
        model_loop: Any = None,
        model_policy: Any = None,
        code_store: CodeStore | None = None,
    ) -> None:
        self.model = model
        #: compiled expressions and blocks kept across runs (None: compiled every run)
        self.code_store = code_store
        #: a `ModelPolicy` wrapping every model the boundary resolves (None: none)
        self.model_policy = model_policy
        self.default_model = default_model
        #: the `ModelLoop` model requests run on (None: the boundary owns a private one)
        self.model_loop = model_loop
        self._boundary: Any = None
        self._boundary_lock = threading.Lock()
        self.compiled: dict[int, tuple[nodes.PyCode, CompiledUnit]] = {}
        self.modules: dict[str, ModuleUnit] = {}
        self.loading: list[str] = []
        #: the registered Python modules of its files' embedded Python (`pymodule`)
        self.py_modules: Owned = []
        self.type_cache: dict[int, tuple[nodes.TypeRef, Any]] = {}
        self.type_units: dict[int, tuple[nodes.TypeRef, CompiledUnit]] = {}
        #: completed iterations after which a conditional loop fails (docs/language.md#loops)
        self.loop_limit = LOOP_LIMIT

    @property
    def boundary(self) -> Any:
        """The model boundary (created, and pydantic-ai imported, on first use: once, when
        concurrent rows make their first calls together, so every call is counted by it)."""
        boundary = self._boundary
        if boundary is None:
            with self._boundary_lock:
                boundary = self._boundary
                if boundary is None:
                    from pytest_kedi.runtime.model import ModelBoundary

                    boundary = self._boundary = ModelBoundary(
                        injected=self.model,
                        default=self.default_model,
                        loop=self.model_loop,
                        policy=self.model_policy,
                    )
        return boundary

    @property
    def synthetic_calls(self) -> int:
        return 0 if self._boundary is None else int(self._boundary.synthetic_calls)

    def model_calls(self) -> dict[str, int]:
        """Model calls made so far, per resolved model name."""
        return {} if self._boundary is None else dict(self._boundary.call_counts())

    def unit_for(
        self,
        code: nodes.PyCode,
        source_file: SourceFile,
        procedure: str | None,
        *,
        transform: Transform | None = None,
        store: CodeStore | None = None,
    ) -> CompiledUnit:
        """Compile ``code`` once, or take it from the runtime's `code_store` (a
        ``transform`` compiles a fresh unit, or takes it from ``store``)."""
        if transform is not None:
            return compile_unit(code, source_file, procedure, transform=transform, store=store)
        entry = self.compiled.get(id(code))
        if entry is not None and entry[0] is code:
            return entry[1]
        unit = compile_unit(code, source_file, procedure, store=self.code_store)
        self.compiled[id(code)] = (code, unit)
        return unit


@dataclass(eq=False)
class ModuleUnit:
    """One loaded `.kedi` file: its AST, source, prelude and module scopes."""

    runtime: Runtime
    module: nodes.Module
    source_file: SourceFile
    prelude_scope: Scope
    scope: Scope
    optimized: dict[str, dict[str, str]]
    exports: dict[str, Any] | None = None
    #: the declared types of exported value bindings (absent: untyped, so `str`)
    export_contracts: dict[str, Any] = field(default_factory=dict)
    #: the names of its `> export:` directives, `*` for `> export: *` (None: no export)
    export_spec: list[str] | None = None
    auto_cache: ModuleUnit | None = None
    #: unsupported imports deferred in validate mode (reported by unknown-name errors)
    import_failures: list[KediExecutionError] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source_file.path


class Ret:
    """The value of a taken ``=`` return, propagated out of nested bodies, and the return
    statement that took it."""

    __slots__ = ("stmt", "value")

    def __init__(self, value: Any, stmt: nodes.Node) -> None:
        self.value = value
        self.stmt = stmt


@dataclass(eq=False, slots=True)
class Frame:
    """Where a statement executes: scope, file, label and the return contract."""

    scope: Scope
    unit: ModuleUnit
    label: str
    proc: KediProcedure | None = None
    returns: Callable[[Any, nodes.Node], None] | None = None

    def child(self, scope: Scope) -> Frame:
        return Frame(scope, self.unit, self.label, self.proc, self.returns)

    @property
    def procedure_name(self) -> str | None:
        return None if self.proc is None else self.proc.name

    def frame(self, kind: str, span: nodes.Span | None, label: str | None = None) -> KediTraceFrame:
        return KediTraceFrame(
            kind=kind,
            label=label or self.label,
            span=span,
            procedure_name=self.procedure_name,
            source_snippet=self.unit.source_file.snippet(span),
        )

    def compiled(self, code: nodes.PyCode) -> CompiledUnit:
        return self.unit.runtime.unit_for(code, self.unit.source_file, self.procedure_name)
