"""The adapter contract (`AgentAdapter`, docs/language.md#adapter) and the pydantic-ai adapter."""

from __future__ import annotations

from asyncio import CancelledError
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import BaseModel
from pydantic_ai.models import Model

from pytest_kedi.errors import ModelError
from pytest_kedi.runtime.model.cassettes import CassetteModel
from pytest_kedi.runtime.model.direct import (
    CallStats,
    OutputPlan,
    replayed_output,
    request_output,
)
from pytest_kedi.runtime.model.errors import failure_text, shortened
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.names import describe_model
from pytest_kedi.runtime.model.policy import ModelPolicy
from pytest_kedi.runtime.model.providers import own_client_without_sdk_retries, resolve_model
from pytest_kedi.runtime.model.replaying import ReplayRoute
from pytest_kedi.runtime.model.schema import (
    SchemaKey,
    build_output_model,
    describe_output_error,
    normalize_schema,
    read_output,
)
from pytest_kedi.runtime.usererrors import user_error

__all__ = ["Adapter", "AdapterCapabilities", "PydanticAIAdapter", "ReplayRoute"]

#: a call's model (behind the session's policy), output plan and schema key
Prepared = tuple[Model, "OutputPlan | None", SchemaKey]
#: prepared calls one adapter keeps (one per template schema and model in use)
_PREPARED = 256

#: What the built-in adapter advertises to `> requires:` (docs/language.md#newer-directives)
PYDANTIC_CAPABILITIES = frozenset({"structured_output", "model_override", "settings"})


@dataclass(frozen=True, slots=True)
class AdapterCapabilities:
    supports_structured_output: bool = True
    advertised: frozenset[str] = PYDANTIC_CAPABILITIES


@runtime_checkable
class Adapter(Protocol):
    """What the model boundary needs from an adapter; tests may inject fakes.

    ``model`` is the selected model: a pydantic-ai `Model` or a model name.
    ``output_schema`` maps names to a type or ``(type, description)``. ``produce``
    returns every requested name; ``invoke`` returns plain text. ``stats``, when given,
    receives the call's usage and validated output (an adapter that cannot report them
    leaves it untouched); the boundary passes it only for calls made inside an eval row.
    """

    kind: str
    shortname: str
    capabilities: AdapterCapabilities

    async def produce(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> dict[str, Any]: ...

    def produce_sync(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> dict[str, Any]: ...

    async def invoke(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> str: ...

    def invoke_sync(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> str: ...


class PydanticAIAdapter:
    """Runs each call as pydantic-ai direct requests (docs/language.md#model-calls, #raw-invoke),
    one more when the answer fails output validation (`pytest_kedi.runtime.model.direct`).

    The synchronous methods run the request on ``loop`` (a `ModelLoop`; without one the
    adapter owns a private loop, closed when the adapter is garbage-collected or at
    exit). The model and the output plan are resolved in the calling thread (so the loop
    only does I/O), and a call the cassette answers is answered there, without the loop
    (`pytest_kedi.runtime.model.direct.replayed_output`). A model built from a name is
    entered on the loop once per loop lifetime: its provider keeps one HTTP client shared
    by every call, closed when the loop closes. Injected `Model` instances are used as given."""

    kind = "agent-framework"
    shortname = "pydantic"
    capabilities = AdapterCapabilities()

    def __init__(self, loop: ModelLoop | None = None, policy: ModelPolicy | None = None) -> None:
        #: wraps every resolved model (cassettes, retries, budget); None: models as given
        self.policy = policy
        if loop is None:
            loop = ModelLoop()
            loop.close_at_exit(self)
        self.loop = loop
        self._models: dict[str, Model] = {}
        self._plans: dict[type[BaseModel], OutputPlan] = {}
        #: `_prepare`'s result by the ids of a model and a schema: ``(spec, schema, prepared)``
        self._prepared: dict[tuple[int, int], tuple[Any, Any, Prepared]] = {}
        self._entered: set[tuple[int, int]] = set()

    # ------------------------------------------------------------------ caches
    def _model(self, spec: Model | str) -> Model:
        """The pydantic-ai `Model` for ``spec`` behind the session's policy (cassettes, retries,
        budget), if any; built once per name, on first use (no key or network before)."""
        model = self._resolved(spec)
        return model if self.policy is None else self.policy.wrap(model)

    def prepare_model(self, spec: Model | str) -> None:
        """Build ``spec``'s model now (imports, client); a failure is left for the call."""
        with suppress(Exception):
            self._model(spec)

    def _resolved(self, spec: Model | str) -> Model:
        if isinstance(spec, Model):
            return own_client_without_sdk_retries(spec)
        model = self._models.get(spec)
        if model is None:
            model = self._models.setdefault(
                spec, resolve_model(spec, answered_from_cassette=self._replays())
            )
        return model

    def _replays(self) -> bool:
        """Whether answers come from a cassette first (``replay`` and ``strict`` modes)."""
        policy = self.policy
        if policy is None or policy.cassette is None or policy.cassettes is None:
            return False
        return policy.cassettes.mode in ("replay", "strict")

    def _plan(self, output: type[BaseModel]) -> OutputPlan:
        plan = self._plans.get(output)
        if plan is None:
            plan = self._plans.setdefault(output, OutputPlan.build(output))
        return plan

    async def _enter(self, spec: Model | str, model: Model) -> None:
        """On the loop: enter the model once per loop lifetime, so that the HTTP client its
        provider made (bound to this loop) is closed with the loop. A model object (from the
        hook) is entered too: pydantic-ai then closes only a client its provider created,
        never one passed to it, and re-creates a closed one if the model is used again."""
        if not self.loop.in_loop_thread():
            return
        key = (id(model), self.loop.generation)
        if key in self._entered:
            return
        self._entered.add(key)
        await model.__aenter__()
        self.loop.adopt(_exit_closer(model))

    # ------------------------------------------------------------------ running
    @staticmethod
    def _failure(spec: Model | str, error: BaseException, key: SchemaKey = ()) -> ModelError:
        # a task group's lone failure (anyio's connect, say) is named, not its wrapper
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        if isinstance(error, ModelError):
            return error
        detail = describe_output_error(error, key)
        suffix = f"; {shortened(detail)}" if detail else ""
        raised = failure_text(error)
        return ModelError(f"model call failed ({describe_model(spec)}): {raised}{suffix}")

    def _prepare(self, spec: Model | str, output_schema: Mapping[str, Any] | None) -> Prepared:
        """The model, output plan and schema key of a call (``None`` schema: text output),
        resolved in the calling thread; once per model and schema object."""
        ids = (id(spec), id(output_schema))
        hit = self._prepared.get(ids)
        if hit is not None and hit[0] is spec and hit[1] is output_schema:
            return hit[2]
        prepared = self._resolve(spec, output_schema)
        if len(self._prepared) >= _PREPARED:
            self._prepared.clear()
        # the entry holds both objects, so their ids cannot be reused while it exists
        self._prepared[ids] = (spec, output_schema, prepared)
        return prepared

    def _resolve(self, spec: Model | str, output_schema: Mapping[str, Any] | None) -> Prepared:
        key: SchemaKey = ()
        try:
            model = self._model(spec)
            plan = None
            if output_schema is not None:
                key = normalize_schema(output_schema)
                if not key:
                    raise ModelError("a structured model call needs at least one output field")
                plan = self._plan(build_output_model(key))
        except Exception as error:
            raise self._failure(spec, error, key) from error
        return model, plan, key

    def _call(
        self,
        spec: Model | str,
        output_schema: Mapping[str, Any] | None,
        prompt: str,
        instructions: str | None,
        settings: Mapping[str, Any] | None,
        stats: CallStats | None,
    ) -> tuple[bool, Any]:
        """Prepare a call in the calling thread: ``(True, output)`` when the cassette
        answered it there, else ``(False, coroutine)``, the coroutine making it."""
        model, plan, key = self._prepare(spec, output_schema)
        stats = stats if stats is not None else CallStats()
        if isinstance(model, CassetteModel) and not self.loop.in_loop_thread():
            try:
                output = replayed_output(model, plan, prompt, instructions, settings, stats)
            except Exception as error:
                raise self._failure(spec, error, key) from error
            if output is not None:
                return True, self._values(plan, key, output, stats)
        return False, self._run(spec, model, plan, key, prompt, instructions, settings, stats)

    def replay_route(
        self, spec: Model | str, output_schema: Mapping[str, Any], settings: Mapping[str, Any]
    ) -> ReplayRoute | None:
        """How structured calls of ``spec`` with ``output_schema`` and ``settings`` are
        answered from the cassette in the calling thread, or ``None`` when their model
        replays nothing here (no cassette, record mode, or a call that cannot be prepared,
        whose usual path reports why)."""
        try:
            model, plan, key = self._prepare(spec, output_schema)
        except ModelError:
            return None
        if not isinstance(model, CassetteModel) or model.book.mode == "record" or plan is None:
            return None
        return ReplayRoute(model, plan, key, settings, self.loop)

    @staticmethod
    def _values(plan: OutputPlan | None, key: SchemaKey, output: Any, stats: CallStats) -> Any:
        if plan is None:
            return output
        stats.output = values = read_output(cast(BaseModel, output), key)
        return values

    async def _run(
        self,
        spec: Model | str,
        model: Model,
        plan: OutputPlan | None,
        key: SchemaKey,
        prompt: str,
        instructions: str | None,
        settings: Mapping[str, Any] | None,
        stats: CallStats,
    ) -> Any:
        try:
            await self._enter(spec, model)
            output = await request_output(model, plan, prompt, instructions, settings, stats)
        except BaseException as error:  # a model's sys.exit() too (docs/language.md#errors)
            if isinstance(error, CancelledError) or not user_error(error):
                raise
            raise self._failure(spec, error, key) from error
        return self._values(plan, key, output, stats)

    def produce_sync(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> dict[str, Any]:
        done, call = self._call(model, output_schema, template, instructions, settings, stats)
        output: dict[str, Any] = call if done else self.loop.run(call)
        return output

    async def produce(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> dict[str, Any]:
        done, call = self._call(model, output_schema, template, instructions, settings, stats)
        output: dict[str, Any] = call if done else await call
        return output

    def invoke_sync(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> str:
        done, call = self._call(model, None, prompt, instructions, settings, stats)
        text: str = call if done else self.loop.run(call)
        return text

    async def invoke(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
        stats: CallStats | None = None,
    ) -> str:
        done, call = self._call(model, None, prompt, instructions, settings, stats)
        text: str = call if done else await call
        return text


def _exit_closer(model: Model) -> Callable[[], Awaitable[object]]:
    async def close() -> None:
        await model.__aexit__(None, None, None)

    return close
