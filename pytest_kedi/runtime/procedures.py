"""Procedures as Python callables (docs/language.md#procedures, #procedures-from-python) and custom
type declarations (docs/language.md#custom-types)."""

from __future__ import annotations

import inspect
import os
import weakref
from collections.abc import Callable
from typing import Any

from pytest_kedi.errors import KediExecutionError, KediTraceFrame, KediTypeExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.autocache import cached_procedure, has_auto
from pytest_kedi.runtime.cancel import STATE as CANCEL
from pytest_kedi.runtime.cancel import check_current
from pytest_kedi.runtime.context import Frame, ModuleUnit
from pytest_kedi.runtime.evaluate import PositionalCallee, eval_code, resolve_type
from pytest_kedi.runtime.fastbody import FastBody
from pytest_kedi.runtime.fastbuild import build
from pytest_kedi.runtime.interpreter import exec_body
from pytest_kedi.runtime.livecopies import RUNNING, flush
from pytest_kedi.runtime.model.state import AgentState
from pytest_kedi.runtime.pyerrors import check_error, checked
from pytest_kedi.runtime.pyglobals import module_globals
from pytest_kedi.runtime.rowscope import REPR_LIMIT, short_repr
from pytest_kedi.runtime.rowscope import current as current_row
from pytest_kedi.runtime.scope import EPOCHS, MISSING, Scope
from pytest_kedi.runtime.types import (
    expectation,
    validator_for,
    without_descriptions,
)
from pytest_kedi.runtime.usererrors import user_error
from pytest_kedi.text import truncate

__all__ = ["BUILD_AFTER", "KediProcedure", "define_procedure", "define_type"]

#: A procedure's generated body is built at its ``BUILD_AFTER``-th call; the calls before
#: run on the interpreter, which behaves the same (tests/runtime/test_runtime_fastbody.py).
#: Building costs about as much as 60 interpreted calls of a one-line body and saves a few
#: microseconds per call after, so a procedure called a handful of times (a test file's
#: cases, a small suite's rows) is never built, and a hot one soon is. A body that is one
#: fenced block is built at its first call: its Python runs faster generated (its names
#: are locals there), a saving that grows with the work the block does.
BUILD_AFTER = 64

#: the procedure whose return values rows record (`records_output`), held weakly (not its program)
_RECORDING: list[weakref.ref[KediProcedure]] = []


def record_outputs(procedure: KediProcedure | None) -> None:
    """Make ``procedure`` (the one an ``@eval:`` suite about to score rows is named after,
    or None) the only one whose return values the rows record: a suite run earlier in the
    process no longer records its own procedure's in a later suite's rows."""
    for ref in _RECORDING:
        earlier = ref()
        if earlier is not None:
            earlier.records_output = False
    _RECORDING[:] = [] if procedure is None else [weakref.ref(procedure)]
    if procedure is not None:
        procedure.records_output = True


class KediProcedure(PositionalCallee):
    """A compiled Kedi procedure: a real ``inspect.Signature``, native results."""

    def __init__(
        self,
        node: nodes.Procedure,
        closure: Scope,
        unit: ModuleUnit,
        state: AgentState,
        param_types: tuple[Any, ...],
        defaults: tuple[Any, ...],
        return_type: Any,
    ) -> None:
        self.node = node
        self.name = node.name
        self.__name__ = node.name
        self.__qualname__ = node.name
        self.__doc__ = node.docstring
        self.closure = closure
        self.unit = unit
        self.state = state
        self.names = tuple(p.name for p in node.params)
        self.param_set = frozenset(self.names)
        self.param_types = param_types
        self.checks = tuple(validator_for(tp) for tp in param_types)
        self.defaults = defaults
        self.return_type = return_type
        self._return_check = validator_for(return_type)
        # `Annotated[str, "d"]` is `str` too (docs/language.md#procedures)
        self._str_return = without_descriptions(return_type) is str
        self._n = len(self.names)
        self._body = node.body
        #: the generated body (`fastbody`), built at call `BUILD_AFTER`; None: interpreted
        self._generated: FastBody | None = None
        self._built = False
        self._calls = 0  # calls that asked for the generated body before it was built
        body = node.body
        self._one_fence = (
            len(body) == 1 and isinstance(body[0], nodes.Return) and body[0].value.mode == "fence"
        )
        #: (module binding epoch, the generated body bound to the module globals)
        self._fn: tuple[int, Callable[..., Any]] | None = None
        # Generated code checks every parameter value; a default is never checked, so
        # calls that use one stay interpreted unless every default passes its check.
        self._defaults_valid = all(
            d is MISSING or check(d) for d, check in zip(defaults, self.checks, strict=True)
        )
        span = unit.source_file.line_span(node.header_line)
        #: this procedure's trace frame (the outermost frame of its errors)
        self.frame = KediTraceFrame(
            kind="procedure",
            label=node.name,
            span=span,
            procedure_name=node.name,
            source_snippet=unit.source_file.snippet(span),
        )
        self._signature: inspect.Signature | None = None
        #: set on the procedure an ``@eval:`` suite is named after: its return values
        #: during a row are recorded as the row's outputs (`RowScope.outputs`)
        self.records_output = False

    @property
    def __signature__(self) -> inspect.Signature:
        """The real signature (built on first use): positional-or-keyword parameters,
        resolved annotations, definition-time defaults."""
        if self._signature is None:
            self._signature = inspect.Signature(
                [
                    inspect.Parameter(
                        name,
                        inspect.Parameter.POSITIONAL_OR_KEYWORD,
                        default=inspect.Parameter.empty if default is MISSING else default,
                        annotation=tp,
                    )
                    for name, tp, default in zip(
                        self.names, self.param_types, self.defaults, strict=True
                    )
                ],
                return_annotation=self.return_type,
            )
        return self._signature

    def _fast_fn(self) -> Callable[..., Any] | None:
        """The generated body bound to the current module globals (None: interpreted)."""
        if not self._built:
            self._calls += 1
            if self._calls < BUILD_AFTER and not self._one_fence:
                return None
            self._built = True
            self._generated = build(self)
        if self._generated is None:
            return None
        epoch = EPOCHS.module
        fn = self._generated.bind(module_globals(self.closure))
        if not self.closure.volatile:
            self._fn = (epoch, fn)
        return fn

    def release(self) -> None:
        """Drop the generated body (`Program.release`): its function's defaults hold this
        procedure, a cycle. The procedure is interpreted if called again. A released
        procedure no longer records outputs (nor keeps its program alive through that)."""
        self._fn = None
        self._generated = None
        if self.records_output:
            record_outputs(None)

    def _failed(
        self, exc: BaseException, values: tuple[Any, ...]
    ) -> tuple[BaseException, BaseException | None]:
        assert self._generated is not None
        if not user_error(exc):
            return exc, None
        return self._generated.failure(exc, self, values)

    def __repr__(self) -> str:
        return f"<kedi procedure {self.name}{self.__signature__}>"

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:  # a parameter may be `self`
        if CANCEL.pending:  # a timed-out row stops at its next procedure call
            check_current()
        if RUNNING.units:  # called from Python: it reads the running blocks' values
            flush()
        if self.records_output:
            row = current_row()
            if row is not None and not row.output_depth:
                row.output_depth = 1  # the call below, and calls inside it, record nothing
                cached = self._fn
                try:
                    if (
                        cached is not None
                        and cached[0] == EPOCHS.module
                        and not kwargs
                        and len(args) == self._n
                    ):  # `_dispatch`'s first path, inline: one frame less per eval row
                        try:
                            value = cached[1](*args)
                        except BaseException as exc:
                            err, cause = self._failed(exc, args)
                            if err is exc:
                                raise
                            raise err from cause
                    else:
                        value = self._dispatch(args, kwargs)
                finally:
                    row.output_depth = 0
                # `short_repr`, inline (one call per eval row): a repr that raises is
                # made again by `short_repr`, which describes the failure.
                try:
                    shown = repr(value)
                except BaseException as exc:
                    if not user_error(exc):
                        raise
                    shown = short_repr(value)
                row.outputs.append(
                    shown if len(shown) <= REPR_LIMIT else truncate(shown, REPR_LIMIT)
                )
                return value
        if kwargs or len(args) != self._n:
            values, passed = self._bind(args, kwargs)
            return self._invoke(values, passed)
        cached = self._fn
        fn: Callable[..., Any] | None
        if cached is not None and cached[0] == EPOCHS.module:
            fn = cached[1]
        else:
            fn = self._fast_fn()
            if fn is None:
                return self._interpret(args, None)
        try:
            return fn(*args)
        except BaseException as exc:
            err, cause = self._failed(exc, args)
            if err is exc:
                raise
            raise err from cause

    def invoke_positional(self, args: list[Any]) -> Any:
        if CANCEL.pending:  # as in `__call__`: a timed-out row stops at its next call
            check_current()
        if self.records_output:
            row = current_row()
            if row is not None and not row.output_depth:
                row.output_depth = 1  # as in `__call__`
                try:
                    value = self._dispatch(tuple(args), {})
                finally:
                    row.output_depth = 0
                row.outputs.append(short_repr(value))
                return value
        if len(args) != self._n:
            values, passed = self._bind(tuple(args), {})
            return self._invoke(values, passed)
        cached = self._fn
        fn: Callable[..., Any] | None
        if cached is not None and cached[0] == EPOCHS.module:
            fn = cached[1]
        else:
            fn = self._fast_fn()
            if fn is None:
                return self._interpret(tuple(args), None)
        try:
            return fn(*args)
        except BaseException as exc:
            err, cause = self._failed(exc, tuple(args))
            if err is exc:
                raise
            raise err from cause

    def _dispatch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The call itself, once `__call__` checked for cancellation and output recording:
        the generated body when there is one, else the interpreter. (`__call__` and
        `invoke_positional` keep this inline on their unrecorded path: one frame less.)"""
        if kwargs or len(args) != self._n:
            values, passed = self._bind(args, kwargs)
            return self._invoke(values, passed)
        cached = self._fn
        fn: Callable[..., Any] | None
        if cached is not None and cached[0] == EPOCHS.module:
            fn = cached[1]
        else:
            fn = self._fast_fn()
            if fn is None:
                return self._interpret(args, None)
        try:
            return fn(*args)
        except BaseException as exc:
            err, cause = self._failed(exc, args)
            if err is exc:
                raise
            raise err from cause

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], Any]:
        n = self._n
        if len(args) > n:
            raise self._call_error(
                f"{self.name}() takes {n} positional argument(s) but {len(args)} were given"
            )
        values = list(args) + [MISSING] * (n - len(args))
        for key, value in kwargs.items():
            try:
                index = self.names.index(key)
            except ValueError:
                raise self._call_error(f"{self.name}() got an unexpected keyword argument {key!r}")
            if index < len(args):
                raise self._call_error(f"{self.name}() got multiple values for argument {key!r}")
            values[index] = value
        passed = [v is not MISSING for v in values]
        missing = []
        for index, value in enumerate(values):
            if value is MISSING:
                if self.defaults[index] is MISSING:
                    missing.append(self.names[index])
                else:
                    values[index] = self.defaults[index]
        if missing:
            raise self._call_error(
                f"{self.name}() missing required argument(s): {', '.join(map(repr, missing))}"
            )
        return tuple(values), passed

    def _call_error(self, message: str) -> KediExecutionError:
        """A call with wrong arguments: it never entered the procedure, so it is located
        at the call (as Python's ``TypeError`` is), not in the procedure."""
        error = KediTypeExecutionError(message)
        error.at_call = True
        return error

    def _invoke(self, values: tuple[Any, ...], passed: list[bool] | None) -> Any:
        if passed is None or self._defaults_valid:
            fn = self._fast_fn()
            if fn is not None:
                try:
                    return fn(*values)
                except BaseException as exc:
                    err, cause = self._failed(exc, values)
                    if err is exc:
                        raise
                    raise err from cause
        return self._interpret(values, passed)

    def _interpret(self, values: tuple[Any, ...], passed: list[bool] | None) -> Any:
        """The interpreter's path: check the arguments, run the body statement by statement."""
        try:
            for check, value in zip(self.checks, values, strict=False):
                if not check(value):
                    error = self.argument_error(values, passed)
                    if error is not None:  # else a used default fails (it is not checked)
                        raise error
        except KediExecutionError:
            raise
        except BaseException as exc:  # user code run by a check (`check_error`)
            located = check_error(exc)
            if located is exc or not isinstance(located, KediExecutionError):
                raise
            raise located.with_outer_frame(self.frame) from None
        frame = Scope(
            dict(zip(self.names, values, strict=False)), self.closure, "frame", self.state
        )
        frame.params = self.param_set
        ctx = Frame(frame, self.unit, self.name, self, self._check_return)
        try:
            result = exec_body(self._body, ctx)
            if result is not None:
                return result.value
            if self._str_return:
                return ""
            self._check_return(None, self.node)
            return None
        except KediExecutionError as err:
            raise err.with_outer_frame(self.frame)

    def argument_error(
        self, values: tuple[Any, ...], passed: list[bool] | None = None
    ) -> KediTypeExecutionError | None:
        """The error for the first passed argument that fails its parameter's type."""
        failing = [
            index
            for index, value in enumerate(values)
            if (passed is None or passed[index]) and not self.checks[index](value)
        ]
        if not failing:
            return None
        index = failing[0]
        param = self.node.params[index]
        return KediTypeExecutionError(
            f"{param.span.path}:{param.span.start_line}: parameter {param.name!r} of "
            f"{self.name} expects {expectation(self.param_types[index], values[index])}",
            frames=(self.frame,),
        )

    def violation(self, node: nodes.Node, value: Any) -> KediTypeExecutionError:
        """The error for a return value that fails the return type."""
        return _violation(self, node, value)

    def _check_return(self, value: Any, node: nodes.Node) -> None:
        if not checked(self._return_check, value):  # (user code it runs: `check_error`)
            raise _violation(self, node, value)


def _violation(proc: KediProcedure, node: nodes.Node, value: Any) -> KediTypeExecutionError:
    span = node.span
    return KediTypeExecutionError(
        f"{span.path}:{span.start_line}: return value of {proc.name} expects "
        f"{expectation(proc.return_type, value)}"
    )


# ----------------------------------------------------------------------------- definitions


def _default(code: nodes.PyCode | None, ctx: Frame) -> Any:
    return MISSING if code is None else eval_code(code, ctx)


def define_procedure(stmt: nodes.Procedure, ctx: Frame) -> None:
    if has_auto(stmt):
        cached = cached_procedure(ctx.unit, stmt.name)
        if cached is not None:
            node, cache_unit = cached
            ctx = Frame(ctx.scope, cache_unit, ctx.label, ctx.proc, ctx.returns)
            stmt = node
    param_types = tuple(resolve_type(p.type, ctx) for p in stmt.params)
    defaults = tuple(_default(p.default, ctx) for p in stmt.params)
    return_type = resolve_type(stmt.return_type, ctx)
    tool = next((s for s in stmt.body if isinstance(s, nodes.Directive) and s.name == "tool"), None)
    if tool is not None:  # its `retry_on` names what is visible here (docs/language.md §8.11)
        from pytest_kedi.runtime.directive_effects import check_retry_on

        check_retry_on(tool, ctx)
    proc = KediProcedure(
        stmt, ctx.scope, ctx.unit, ctx.scope.state, param_types, defaults, return_type
    )
    ctx.scope.bind(stmt.name, proc)
    return None


def define_type(stmt: nodes.TypeDecl, ctx: Frame) -> None:
    fields = [(f.name, resolve_type(f.type, ctx), _default(f.default, ctx)) for f in stmt.fields]
    from pytest_kedi.runtime.customtypes import make_custom_type, shadow_warner  # pydantic

    warner = shadow_warner(stmt, ctx.unit.prelude_scope.vars)
    model = make_custom_type(stmt.name, fields, f"kedi:{os.path.basename(ctx.unit.path)}", warner)
    ctx.scope.bind(stmt.name, model)
    return None
