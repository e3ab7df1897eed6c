"""`load()` and `Program`: the public face of the runtime (docs/architecture.md)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal

from pytest_kedi.errors import KediExecutionError, KediNameError
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.cancel import STATE as CANCEL
from pytest_kedi.runtime.cancel import check_current
from pytest_kedi.runtime.casecode import case_code
from pytest_kedi.runtime.context import Frame, ModuleUnit, Runtime
from pytest_kedi.runtime.dispatch import install as install_dispatch
from pytest_kedi.runtime.heap import older_objects_frozen
from pytest_kedi.runtime.interpreter import exec_body, exec_stmt, stmt_frame
from pytest_kedi.runtime.lazy import declare_all
from pytest_kedi.runtime.metricfn import metric_caller
from pytest_kedi.runtime.modules import checked_arguments, load_unit
from pytest_kedi.runtime.procedures import KediProcedure, record_outputs
from pytest_kedi.runtime.pyerrors import PYTHON_UNITS
from pytest_kedi.runtime.pyglobals import module_globals, reading_globals
from pytest_kedi.runtime.pyinterop import CodeStore, Transform
from pytest_kedi.runtime.pymodule import program_modules
from pytest_kedi.runtime.pyrun import run_block
from pytest_kedi.runtime.quickbody import QuickBody, quick_body
from pytest_kedi.runtime.release import take_apart
from pytest_kedi.runtime.rowscope import apart, counting
from pytest_kedi.runtime.scope import MISSING, KediArgs, Scope
from pytest_kedi.runtime.sourcefile import SourceFile
from pytest_kedi.runtime.usererrors import user_error
from pytest_kedi.runtime.warmup import prepare_models

__all__ = ["Program", "load", "release_programs"]

Mode = Literal["run", "validate"]


@dataclass(frozen=True, slots=True)
class _SuitePart:
    """A dataset or metric body of a suite, with its frame's kind and label and, for a
    one-return body of simple Python, its `QuickBody` (None: the interpreter runs it)."""

    suite: nodes.EvalSuite
    part: nodes.Dataset | nodes.Metric
    kind: str
    label: str
    quick: QuickBody | None


def load(
    path: str | os.PathLike[str],
    *,
    model: Any = None,
    mode: Mode = "run",
    source: str | None = None,
    default_model: str | None = None,
    model_loop: Any = None,
    model_policy: Any = None,
    code_store: CodeStore | None = None,
    python_checked: bool = False,
    args: Mapping[str, Any] | None = None,
) -> Program:
    """Parse ``path`` (or ``source``) and check its embedded Python (a syntax error is a
    located `KediParseError`; ``python_checked``: the caller did, as pytest's collection
    does), run its prelude and, in ``validate`` mode, process every declaration in source
    order with lazy top-level bindings (docs/language.md#validation-mode).

    ``model`` (a pydantic-ai ``Model`` or name) forces every model call; ``default_model`` is
    the configured default (docs/language.md#model-selection). ``model_loop`` (a `ModelLoop`):
    the event loop model requests run on, closed by its owner (without one, a private loop,
    closed at garbage collection or exit). ``model_policy`` (a `ModelPolicy`) wraps every
    model it calls; ``code_store`` keeps its compiled Python across runs (pytest's cache);
    ``args`` fills the `args` namespace, which the prelude reads too."""
    path = checked_arguments(path, source, mode)  # a clear error for a wrong-typed one
    install_dispatch()
    runtime = Runtime(
        model=model,
        default_model=default_model,
        model_loop=model_loop,
        model_policy=model_policy,
        code_store=code_store,
    )
    # Cyclic GC stays on: loading runs user code; compiling leaves no cyclic garbage. The
    # model requests of a load (a procedure's default values ...) count on their own.
    with older_objects_frozen(), apart("module load"), program_modules(runtime.py_modules) as own:
        unit = load_unit(runtime, path, source, python_checked=python_checked, args=args)
        program = own(Program(unit, mode))  # its files' Python modules live while it does
        if mode == "validate":
            declare_all(unit)
    return program


def release_programs(programs: Iterable[Program]) -> None:
    """`Program.release` for each of ``programs``, their compiled code forgotten in one
    pass over the record of it (one pass per program would cost programs x units)."""
    files: list[SourceFile] = []
    for program in programs:
        files += program._take_apart()
    PYTHON_UNITS.forget(files)


class Program:
    """A loaded `.kedi` program."""

    def __init__(self, unit: ModuleUnit, mode: Mode) -> None:
        self._unit = unit
        self.mode = mode
        self.returned = False
        #: id(a suite's dataset or metric) -> what running it needs (`_part`)
        self._parts: dict[int, _SuitePart] = {}

    # -- introspection ---------------------------------------------------------------------
    @property
    def module(self) -> nodes.Module:
        return self._unit.module

    @property
    def path(self) -> str:
        return self._unit.path

    @property
    def procedures(self) -> Mapping[str, Callable[..., Any]]:
        """Top-level procedures bound so far (all of them in validate mode)."""
        found = self._unit.scope.vars.items()
        return {name: value for name, value in found if isinstance(value, KediProcedure)}

    @property
    def synthetic_calls(self) -> int:
        return self._unit.runtime.synthetic_calls

    def model_calls(self) -> dict[str, int]:
        """Model calls made so far by this program, per resolved model name."""
        return self._unit.runtime.model_calls()

    @property
    def loop_limit(self) -> int:
        """Completed iterations after which a conditional ``> loop:`` fails (default 10,000)."""
        return self._unit.runtime.loop_limit

    @loop_limit.setter
    def loop_limit(self, value: int) -> None:
        if type(value) is not int or value <= 0:
            raise ValueError(f"loop_limit must be a positive int, not {value!r}")
        self._unit.runtime.loop_limit = value

    @property
    def args(self) -> KediArgs:
        value = self._unit.scope.vars["args"]
        assert isinstance(value, KediArgs)
        return value

    @args.setter
    def args(self, value: KediArgs | Mapping[str, Any] | Any) -> None:
        if not isinstance(value, KediArgs):
            values = value if isinstance(value, Mapping) else vars(value)
            value = KediArgs(values)
        self._unit.scope.set_existing("args", value)
        self._unit.prelude_scope.set_existing("args", value)  # prelude functions read it

    def release(self) -> None:
        """Take this program apart, so that dropping it frees it at once.

        A module's scope holds its procedures and each procedure holds the scope: a loaded
        program is a reference cycle, with the file's syntax tree and compiled code hanging
        off it, which only a full garbage collection frees, and until then every full
        collection (and the interpreter's exit) walks all of it. Emptying the scopes, their
        Python globals tables and the runtime's tables breaks every cycle, so the objects
        go when the last reference does; its Python modules are unregistered, the record
        of its compiled code (for tracebacks) is forgotten. It cannot run afterwards."""
        release_programs([self])

    def _take_apart(self) -> list[SourceFile]:
        """`release` but for the record of compiled code; the files whose code it was."""
        self._parts.clear()
        return take_apart(self._unit)

    def get(self, name: str) -> Any:
        """Read a top-level name (forcing a lazy binding, docs/language.md#lazy-bindings)."""
        value = self._unit.scope.get(name)
        if value is MISSING:
            raise KediNameError(f"unknown name {name!r}")
        return value

    # -- running ---------------------------------------------------------------------------
    def run(self) -> Any:
        """Execute the program top to bottom (no hoisting, docs/language.md#program-runs); the
        top-level return.

        ``returned`` tells afterwards whether a top-level return ran (so a program returning
        ``None`` can be told from one with no return); ``returned_at`` is its Kedi frame.
        """
        ctx = Frame(self._unit.scope, self._unit, "<program>")
        with older_objects_frozen(), counting("program run"):
            result = exec_body(self.module.body, ctx)
        self.returned = result is not None
        self.returned_at = None if result is None else stmt_frame(result.stmt, ctx)
        return None if result is None else result.value

    def _frame_ctx(
        self,
        label: str,
        directives_: tuple[nodes.Directive, ...],
        bindings: Mapping[str, Any],
        hide: bool = False,
    ) -> Frame:
        """A fresh frame binding ``bindings``; ``hide``: and no ``expected`` (`_hides`)."""
        module_scope = self._unit.scope
        scope = Scope(dict(bindings), module_scope, "frame", module_scope.state)
        if hide and "expected" not in bindings:
            scope.vars["expected"], scope.hides = MISSING, True
        ctx = Frame(scope, self._unit, label)
        for directive in directives_:
            exec_stmt(directive, ctx)
        return ctx

    def generated_test_suites(self) -> tuple[nodes.TestSuite, ...]:
        """The ``@test:`` suites the sibling ``prog.cache.kedi`` holds for this file's
        ``> auto:`` procedures it defines (docs/language.md §4.5): run like the file's own,
        after them, on this runtime, located in the cache file. Raise `KediParseError`
        when the cache file does not parse."""
        from pytest_kedi.runtime.autocache import generated_suites

        return generated_suites(self._unit)

    def _case_source(self, case: nodes.Case) -> SourceFile:
        """The source file a case's code is located in: this file's, or its cache's."""
        own = self._unit.source_file
        if case.span.path != own.path and self.generated_test_suites():
            cache = self._unit.auto_cache  # loaded by `generated_test_suites`
            if cache is not None and case.span.path == cache.source_file.path:
                return cache.source_file
        return own

    def _span(self, node: nodes.Node) -> nodes.Span:
        return self._unit.source_file.line_span(node.span.start_line)

    def prepare_models(self) -> None:
        """Build the models this program may call before any row runs (`runtime.warmup`)."""
        prepare_models(self._unit)

    def load_dataset(self, suite: nodes.EvalSuite, dataset: nodes.Dataset) -> Any:
        """Run a ``> data:``/``> test_data:`` body in a fresh frame; its raw value."""
        with counting("dataset load"):  # a request it sends again has its own cassette entry
            return self._run_suite_body(self._part(suite, dataset), {})

    def run_metric(
        self, suite: nodes.EvalSuite, metric: nodes.Metric, bindings: dict[str, Any]
    ) -> Any:
        """Run the metric body in a fresh frame binding exactly ``bindings``; raw value. The
        suite's procedure records its return values in the current row scope, if any."""
        return self.metric_runner(suite, metric)(bindings)

    def metric_runner(
        self, suite: nodes.EvalSuite, metric: nodes.Metric
    ) -> Callable[[dict[str, Any]], Any]:
        """`run_metric` for one suite's metric, worked out once for all its rows: the
        function running the metric with a row's ``bindings``."""
        part = self._metric_part(suite, metric)
        quick = part.quick
        if quick is None or self._hides(part):
            return partial(self._run_suite_body, part, hide=self._hides(part))
        code, scope, reads = quick.code, self._unit.scope, quick.unit.global_reads()
        # The module's table and the globals rows read it through (`reading_globals`): its
        # plain twin, once the names the metric reads are forced, stays right for every
        # later row (rows force bindings, they never make one lazy again).
        known: tuple[object, dict[str, Any]] = (None, {})

        def run(bindings: dict[str, Any]) -> Any:
            # `_run_suite_body`'s one-return path, without its lookups (one call per row).
            nonlocal known
            if CANCEL.pending:  # a timed-out row stops at its next statement
                check_current()
            base = module_globals(scope)
            table, g = known
            if table is not base or g is base:  # another table, or not settled yet
                g = reading_globals(base, reads)
                known = (base, g)
            try:
                return eval(code, g, bindings)
            except BaseException as exc:
                error = self._quick_failure(part, exc, bindings)
                if error is exc:
                    raise
                raise error from exc

        return run

    def metric_function(
        self, suite: nodes.EvalSuite, metric: nodes.Metric, params: tuple[str, ...]
    ) -> Callable[..., Any] | None:
        """`metric_runner` as a function of the row's values in the order of ``params``
        (the names the row binds: the dataset's, then ``expected`` when the row has one),
        for a suite with many rows; None when the metric body is not a one-return body of
        simple Python (`quickbody`), or when compiling it again may make Python warn again.
        It runs as `metric_runner`'s function does, with the values as the function's
        parameters instead of a dictionary of bindings (`QuickBody.function_code`)."""
        if len(params) not in (1, 2):
            return None
        part = self._metric_part(suite, metric)
        quick = part.quick
        if quick is None or ("expected" not in params and self._hides(part)):
            return None
        code = quick.function_code(params)
        if code is None:
            return None

        def failed(exc: BaseException, values: tuple[Any, ...]) -> BaseException:
            return self._quick_failure(part, exc, dict(zip(params, values, strict=True)))

        reads = quick.unit.global_reads()
        return metric_caller(code, self._unit.scope, reads, len(params), failed)

    def _metric_part(self, suite: nodes.EvalSuite, metric: nodes.Metric) -> _SuitePart:
        """`_part` for a metric about to score rows: the procedure the suite is named after
        (and no other) records its return values in the current row scope from now on."""
        procedure = self._unit.scope.vars.get(suite.name)
        record_outputs(procedure if isinstance(procedure, KediProcedure) else None)
        return self._part(suite, metric)

    def _part(self, suite: nodes.EvalSuite, part: nodes.Dataset | nodes.Metric) -> _SuitePart:
        """What running ``part`` of ``suite`` needs, worked out once per part."""
        known = self._parts.get(id(part))
        if known is not None and known.part is part:
            return known
        if isinstance(part, nodes.Metric):
            kind, label = "metric", f"metric {part.name}"
        else:
            kind, label = "dataset", f"{part.kind} {part.name}"
        quick = quick_body(part.body, suite.directives, self._unit)
        known = self._parts[id(part)] = _SuitePart(suite, part, kind, label, quick)
        return known

    def _hides(self, part: _SuitePart) -> bool:
        """Whether a row without ``expected`` must hide a top-level or prelude ``expected``
        from the metric (docs/language.md#scoring): one is bound and the metric may read
        it. Worked out once per suite (`metric_runner`); rows of other suites pay nothing."""
        if "expected" not in module_globals(self._unit.scope):
            return False
        reads = None if part.quick is None else part.quick.unit.global_reads()
        return reads is None or "expected" in reads

    def _run_suite_body(
        self, part: _SuitePart, bindings: dict[str, Any], hide: bool = False
    ) -> Any:
        """Run a dataset or metric body in a fresh frame binding ``bindings`` (``hide``:
        and hiding an outer ``expected`` when they have none, `_hides`); its raw value."""
        quick = part.quick
        if quick is not None and not (hide and "expected" not in bindings):  # no interpreter
            if CANCEL.pending:  # a timed-out row stops at its next statement
                check_current()
            try:
                g = reading_globals(module_globals(self._unit.scope), quick.unit.global_reads())
                return eval(quick.code, g, bindings)
            except BaseException as exc:
                error = self._quick_failure(part, exc, bindings)
                if error is exc:
                    raise
                raise error from exc
        ctx = self._frame_ctx(part.label, part.suite.directives, bindings, hide)
        try:
            result = exec_body(part.part.body, ctx)
        except KediExecutionError as err:
            raise err.with_outer_frame(ctx.frame(part.kind, self._span(part.part)))
        return None if result is None else result.value

    def _quick_failure(
        self, part: _SuitePart, exc: BaseException, bindings: dict[str, Any]
    ) -> BaseException:
        """The error to raise for ``exc``, raised by the one-return body of ``part``."""
        assert part.quick is not None
        if not user_error(exc):
            return exc
        ctx = self._frame_ctx(part.label, (), bindings)
        frame = ctx.frame(part.kind, self._span(part.part))
        return part.quick.failure(exc, ctx).with_outer_frame(frame)

    def run_case(
        self,
        suite: nodes.TestSuite,
        case: nodes.Case,
        *,
        transform: Transform | None = None,
        store: CodeStore | None = None,
    ) -> None:
        """Run a case's Python on the compiled runtime (its code compiled with
        ``transform``, or taken from ``store`` when compiled so before).

        The case body (its statement lines and fences, in order) is one Python unit,
        so a name bound on one line is visible on the next; like every Python block,
        names it creates do not become Kedi variables (docs/language.md#python-interop).
        """
        label = f"case {case.name}"
        ctx = self._frame_ctx(label, suite.directives, {})
        runtime = self._unit.runtime
        code = case_code(case)
        source_file = self._case_source(case)
        try:
            unit = runtime.unit_for(code, source_file, label, transform=transform, store=store)
            with counting("@test: case"):
                run_block(unit, ctx.scope)
        except KediExecutionError as err:
            span = source_file.line_span(case.span.start_line)
            frame = ctx.frame("case", span)
            if source_file is not self._unit.source_file:  # a generated case: its own line
                frame = replace(frame, source_snippet=source_file.snippet(span))
            raise err.with_outer_frame(frame)
