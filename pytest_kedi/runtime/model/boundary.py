"""`ModelBoundary`: state checks and model selection in front of the adapter
(docs/language.md#models, #model-selection)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pytest_kedi.constants import ENV_MODEL
from pytest_kedi.errors import (
    BudgetExhausted,
    CassetteMiss,
    ModelError,
    ModelUnavailable,
    UnsupportedFeature,
)
from pytest_kedi.runtime import rowscope
from pytest_kedi.runtime.caches import OnceNotice
from pytest_kedi.runtime.model.adapter import Adapter, PydanticAIAdapter
from pytest_kedi.runtime.model.cassettefiles import CassetteUnreadable
from pytest_kedi.runtime.model.direct import CallStats
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.names import TEST_MODEL, describe_model, normalize_model_name
from pytest_kedi.runtime.model.plans import StatePlan, account
from pytest_kedi.runtime.model.policy import ModelPolicy
from pytest_kedi.runtime.model.schema import OutputSchemaError
from pytest_kedi.runtime.model.settings import validate_settings
from pytest_kedi.runtime.model.state import AgentState
from pytest_kedi.runtime.rowscope import RowScope

if TYPE_CHECKING:  # pragma: no cover
    from pydantic_ai.models import Model

__all__ = ["MODEL_ENV", "SYNTHETIC_NOTICE", "ModelBoundary", "ModelSource"]

MODEL_ENV = ENV_MODEL
SYNTHETIC_NOTICE = (
    "model: test (synthetic output) — set KEDI_ADAPTER_MODEL (or pytest --kedi-model, CLI --model)"
    " for a real model"
)
T = TypeVar("T")

#: Where the model for a call came from, in precedence order.
ModelSource = Literal["injected", "source", "default", "builtin"]

#: Whether `SYNTHETIC_NOTICE` was printed in this process. Owner: this module.
NOTICE_ONCE = OnceNotice("synthetic-output notice", "pytest_kedi.runtime.model.boundary")


def _print_synthetic_notice() -> None:
    if NOTICE_ONCE.claim():
        print(SYNTHETIC_NOTICE, file=sys.stderr, flush=True)


class ModelBoundary:
    """Every model call of one program goes through here.

    Model precedence (docs/language.md#model-selection): ``injected`` (forces every call) > the
    state's
    source ``> model:`` > ``default`` (the configured default; env ``KEDI_ADAPTER_MODEL``
    when ``default`` is ``None``) > pydantic-ai's offline ``test`` model. Nothing is
    resolved or contacted before the first call.

    Requests run on ``loop`` (the owner's `ModelLoop`, shared by every program of a
    session; without one the default adapter owns a private loop).

    A call made inside an eval row (`pytest_kedi.runtime.rowscope.current()` in the calling
    thread) adds its usage to the row's scope, summed over its requests (an output
    validation retry included), and with ``scope.trace`` a `ModelCallTrace`.
    """

    def __init__(
        self,
        injected: Model | str | None = None,
        default: str | None = None,
        *,
        adapter: Adapter | None = None,
        loop: ModelLoop | None = None,
        policy: ModelPolicy | None = None,
    ) -> None:
        self.injected: Model | str | None = (
            normalize_model_name(injected) if isinstance(injected, str) else injected
        )
        self.default = normalize_model_name(default) if default else None
        self.adapter: Adapter = adapter if adapter is not None else PydanticAIAdapter(loop, policy)
        self._count_lock = threading.Lock()
        self.synthetic_calls = 0
        self._calls: dict[str, int] = {}
        #: per template node (by id): its output fields and schema (`calls.TemplateShape`)
        self.shapes: dict[int, Any] = {}
        self._labels: dict[int, tuple[Model, str]] = {}
        #: validated settings per merged-settings mapping of a state (never mutated)
        self._settings: dict[int, tuple[Mapping[str, Any], dict[str, Any]]] = {}
        #: what a call in a state needs that does not change between calls (`_plan`)
        self._plans: dict[int, StatePlan] = {}
        #: the adapter's replay route factory (``None``: the adapter has none)
        self._route: Callable[..., Any] | None = getattr(self.adapter, "replay_route", None)

    # ------------------------------------------------------------------ selection
    def configured_default(self) -> str | None:
        """The configured default model name (``default``, else the environment)."""
        if self.default:
            return self.default
        env = os.environ.get(MODEL_ENV, "").strip()
        return normalize_model_name(env) if env else None

    def select(self, state: AgentState) -> tuple[Model | str, ModelSource]:
        """The model a call in ``state`` uses, and where it came from."""
        if self.injected is not None:
            return self.injected, "injected"
        if state.model:
            return normalize_model_name(state.model), "source"
        default = self.configured_default()
        if default:
            return default, "default"
        return TEST_MODEL, "builtin"

    def describe(self, state: AgentState | None = None) -> str:
        """A label of the model used for ``state`` (default: no source ``> model:``)."""
        model, source = self.select(state or AgentState())
        label = describe_model(model)
        return f"{label} (synthetic output)" if self._synthetic(model, source) else label

    def prepare(self, names: Iterable[str]) -> None:
        """Build the default model and the models ``names`` (``> model:`` values) before
        any call (`pytest_kedi.runtime.warmup`)."""
        prepare = getattr(self.adapter, "prepare_model", None)
        if prepare is None:
            return
        default = self.select(AgentState())[0]
        prepare(default)
        if self.injected is not None:
            return  # every call uses it
        for name in dict.fromkeys(map(normalize_model_name, names)):
            if name != default:
                prepare(name)

    def call_counts(self) -> dict[str, int]:
        """Calls made so far per resolved model name (``describe_model``), e.g.
        ``{"openai-chat:gpt-4o-mini": 7, "test": 2}``."""
        with self._count_lock:
            return dict(self._calls)

    def _label(self, model: Model | str) -> str:
        """`describe_model` of ``model``, once per model instance."""
        if isinstance(model, str):
            return model
        hit = self._labels.get(id(model))
        if hit is None or hit[0] is not model:
            hit = self._labels[id(model)] = (model, describe_model(model))
        return hit[1]

    def _validated(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """`validate_settings` of a state's settings, once per mapping (a state's settings
        never change; the result is never mutated)."""
        hit = self._settings.get(id(settings))
        if hit is None or hit[0] is not settings:
            if len(self._settings) >= 256:
                self._settings.clear()
            hit = self._settings[id(settings)] = (settings, validate_settings(settings))
        return hit[1]

    @staticmethod
    def _synthetic(model: Model | str, source: ModelSource) -> bool:
        return source != "injected" and model == TEST_MODEL

    # ------------------------------------------------------------------ checks
    def _check(self, state: AgentState) -> None:
        if state.unsupported:
            construct, line = state.unsupported[0]
            raise UnsupportedFeature(construct, line)
        if state.adapter != self.adapter.shortname:
            raise UnsupportedFeature(f"> adapter: {state.adapter}")
        missing = sorted(state.requires - self.adapter.capabilities.advertised)
        if missing:
            at = dict(state.requires_at).get(missing[0])
            raise UnsupportedFeature(f"> requires: {missing[0]}", at)

    def _plan(self, state: AgentState) -> StatePlan:
        """The checks, model, settings and label of calls in ``state``, worked out once per
        state (a state never changes; a plan whose model came from the environment is
        worked out again when the environment variable changes)."""
        plan = self._plans.get(id(state))
        if (
            plan is not None
            and plan.state is state
            and (plan.env is None or os.environ.get(MODEL_ENV, "") == plan.env)
        ):
            return plan
        self._check(state)
        model, source = self.select(state)
        from_env = self.injected is None and not state.model and not self.default
        settings = self._validated(state.settings) if state.settings else {}
        plan = StatePlan(
            state,
            os.environ.get(MODEL_ENV, "") if from_env else None,
            model,
            settings,
            self._label(model),
            self._synthetic(model, source),
        )
        if len(self._plans) >= 256:
            self._plans.clear()
        self._plans[id(state)] = plan
        return plan

    def _prepare(self, state: AgentState) -> tuple[StatePlan, str | None]:
        """A call in ``state`` starts: its plan and rendered instructions; it is counted."""
        plan = self._plans.get(id(state))
        if plan is None or plan.state is not state or plan.env is not None:
            plan = self._plan(state)  # (the hot case written out: a plan not from the env)
        instructions = None if state.instructions is None else state.render_instructions()
        label = plan.label
        with self._count_lock:
            self._calls[label] = self._calls.get(label, 0) + 1
            self.synthetic_calls += plan.synthetic
        return plan, instructions

    def _not_called(self, plan: StatePlan) -> None:
        """A strict replay's miss, or a model or output schema that could not be built: no
        model was called (nor answered), so the call `_prepare` counted is taken back (the
        ``models:`` line counts the calls models received)."""
        label = plan.label
        with self._count_lock:
            left = self._calls.get(label, 0) - 1
            if left > 0:
                self._calls[label] = left
            else:
                self._calls.pop(label, None)
            self.synthetic_calls -= plan.synthetic

    def _unanswered(self, plan: StatePlan, exc: BaseException, stats: CallStats) -> None:
        """A call ended in ``exc`` (a strict replay's miss, a model or output schema that
        could not be built, a spent request budget): unless a model answered one of its
        requests first (a budget spent by an output-validation retry), no model was called."""
        if not stats.requests:
            self._not_called(plan)

    def _route_for(self, plan: StatePlan, schema: Mapping[str, Any]) -> Any:
        """The adapter's replay route for calls in ``plan``'s state with ``schema``, kept
        in the plan (``None``: such calls take the adapter's usual path)."""
        assert self._route is not None
        routes = plan.routes
        hit = routes.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        if len(routes) >= 64:
            routes.clear()
        route = self._route(plan.model, schema, plan.settings)
        routes[id(schema)] = (schema, route)
        return route

    @staticmethod
    def _recorded(
        scope: RowScope,
        label: str,
        prompt: str,
        instructions: str | None,
        stats: CallStats,
        call: Callable[[], T],
    ) -> T:
        """Run ``call``, which fills ``stats``, and add what it cost (and, tracing, what it
        said) to ``scope``."""
        start = time.perf_counter() if scope.trace else 0.0
        try:
            return call()
        finally:
            account(scope, stats, label, prompt, instructions, start)

    # ------------------------------------------------------------------ calls
    def produce(
        self, state: AgentState, template: str, schema: Mapping[str, Any]
    ) -> dict[str, Any]:
        """One structured call: ``{name: value}`` for every field of ``schema``."""
        if not self.adapter.capabilities.supports_structured_output:
            raise ModelError(
                f"adapter '{self.adapter.shortname}' has no structured output; "
                "output fields need it"
            )
        plan, instructions = self._prepare(state)
        route = None if self._route is None else self._route_for(plan, schema)
        return self._produce(plan, instructions, template, schema, rowscope.current(), route)

    def producer(
        self, state: AgentState, schema: Mapping[str, Any]
    ) -> Callable[[str], dict[str, Any]]:
        """`produce` in ``state`` with ``schema`` as a function of the template (what a
        ``>>`` of a built procedure body calls): the same calls, counts and errors. When the
        state's model replays from a cassette, its plan and replay route are worked out
        here, once, and a call in an eval row is answered by the route with no more work."""
        route = None
        try:
            if self.adapter.capabilities.supports_structured_output and self._route is not None:
                plan = self._plan(state)
                if plan.env is None:  # (a model chosen by the environment: `produce` checks)
                    route = self._route_for(plan, schema)
        except Exception:
            route = None  # `produce` raises it, call by call
        if route is None:
            return lambda template: self.produce(state, template, schema)
        count_lock, calls, label, synthetic = (
            self._count_lock,
            self._calls,
            plan.label,
            plan.synthetic,
        )
        render = None if state.instructions is None else state.render_instructions
        answer, rest, current = route.answer, self._produce, rowscope.current

        def produce(template: str) -> dict[str, Any]:
            instructions = None if render is None else render()
            with count_lock:  # (`_prepare`)
                calls[label] = calls.get(label, 0) + 1
                self.synthetic_calls += synthetic
            scope = current()
            if scope is None or scope.trace:
                return rest(plan, instructions, template, schema, scope, route)
            try:
                output = answer(template, instructions, scope.repeat, scope.seen, scope)
            except CassetteUnreadable:
                self._not_called(plan)
                raise
            if output is None:  # the usual path, the route tried
                return rest(plan, instructions, template, schema, scope, None)
            if synthetic:  # an answer the offline model gave when recorded
                _print_synthetic_notice()
            return output

        return produce

    def _produce(
        self,
        plan: StatePlan,
        instructions: str | None,
        template: str,
        schema: Mapping[str, Any],
        scope: RowScope | None,
        route: Any,
    ) -> dict[str, Any]:
        """`produce` once the call is counted: answered by the cassette in this thread
        (``route``, the adapter's replay route; ``None``: none, or tried), or the usual path
        below, which behaves as without the route."""
        model, settings, label = plan.model, plan.settings, plan.label
        if route is not None:
            start = time.perf_counter() if scope is not None and scope.trace else 0.0
            stats = CallStats()
            try:
                if scope is not None:
                    output = route.answer(template, instructions, scope.repeat, scope.seen, stats)
                else:
                    counts = rowscope.outside()
                    seen = counts[0] if counts else {}
                    output = route.answer(template, instructions, 0, seen, stats)
            except CassetteUnreadable as exc:
                self._unanswered(plan, exc, stats)
                raise
            if output is not None:
                if scope is not None:
                    stats.output = output
                    account(scope, stats, label, template, instructions, start)
                if plan.synthetic:  # an answer the offline model gave when recorded
                    _print_synthetic_notice()
                replayed: dict[str, Any] = output
                return replayed
        stats = CallStats()
        try:
            if scope is None:
                result = self.adapter.produce_sync(
                    template=template,
                    output_schema=schema,
                    model=model,
                    instructions=instructions,
                    settings=settings,
                    stats=stats,
                )
            else:
                result = self._recorded(
                    scope,
                    label,
                    template,
                    instructions,
                    stats,
                    lambda: self.adapter.produce_sync(
                        template=template,
                        output_schema=schema,
                        model=model,
                        instructions=instructions,
                        settings=settings,
                        stats=stats,
                    ),
                )
        except (
            CassetteMiss,
            CassetteUnreadable,
            ModelUnavailable,
            BudgetExhausted,
            OutputSchemaError,
        ) as exc:
            self._unanswered(plan, exc, stats)
            raise
        if plan.synthetic:  # the offline model answered (said once, when it first does)
            _print_synthetic_notice()
        missing = [name for name in schema if name not in result]
        if missing:
            raise ModelError(f"model output is missing field(s): {', '.join(missing)}")
        return {name: result[name] for name in schema}

    def invoke(self, state: AgentState, prompt: str) -> str:
        """One text call (raw capture, output-less template)."""
        plan, instructions = self._prepare(state)
        model, settings, label = plan.model, plan.settings, plan.label
        scope = rowscope.current()
        stats = CallStats()
        try:
            if scope is None:
                text = self.adapter.invoke_sync(
                    prompt=prompt,
                    model=model,
                    instructions=instructions,
                    settings=settings,
                    stats=stats,
                )
            else:
                text = self._recorded(
                    scope,
                    label,
                    prompt,
                    instructions,
                    stats,
                    lambda: self.adapter.invoke_sync(
                        prompt=prompt,
                        model=model,
                        instructions=instructions,
                        settings=settings,
                        stats=stats,
                    ),
                )
        except (CassetteMiss, CassetteUnreadable, ModelUnavailable, BudgetExhausted) as exc:
            self._unanswered(plan, exc, stats)
            raise
        if plan.synthetic:  # as in `produce`
            _print_synthetic_notice()
        if not isinstance(text, str):
            raise ModelError(f"model returned {type(text).__name__}, expected text")
        return text
