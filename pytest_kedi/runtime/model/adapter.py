"""The adapter contract (Kedi's `AgentAdapter`, docs/language.md#adapter) and the pydantic-ai
adapter."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models import Model

from pytest_kedi.errors import ModelError
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.names import describe_model
from pytest_kedi.runtime.model.policy import ModelPolicy
from pytest_kedi.runtime.model.providers import resolve_model
from pytest_kedi.runtime.model.schema import (
    SchemaKey,
    build_output_model,
    describe_output_error,
    normalize_schema,
    read_output,
)
from pytest_kedi.text import one_line

__all__ = ["Adapter", "AdapterCapabilities", "PydanticAIAdapter"]

#: Capabilities the built-in adapter advertises to `> requires:` (docs/language.md#newer-directives
#: reading).
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
    returns every requested name; ``invoke`` returns plain text.
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
    ) -> dict[str, Any]: ...

    def produce_sync(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]: ...

    async def invoke(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> str: ...

    def invoke_sync(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> str: ...


class PydanticAIAdapter:
    """Runs each call as one pydantic-ai `Agent` run (docs/language.md#model-calls, #raw-invoke).

    The synchronous methods run the request on ``loop`` (a `ModelLoop`; without one the
    adapter owns a private loop, closed when the adapter is garbage-collected or at
    exit). Agents are built in the calling thread (so the loop only does I/O). A model
    built from a name is entered on the loop once per loop lifetime: its provider keeps
    one HTTP client shared by every call, closed when the loop closes. Injected `Model`
    instances are used as given.
    """

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
        self._agents: dict[tuple[Any, Any], tuple[Model, Agent[None, Any]]] = {}
        self._entered: set[tuple[int, int]] = set()

    # ------------------------------------------------------------------ caches
    def _model(self, spec: Model | str) -> Model:
        model = self._resolved(spec)
        return model if self.policy is None else self.policy.wrap(model)

    def _resolved(self, spec: Model | str) -> Model:
        if isinstance(spec, Model):
            return spec
        model = self._models.get(spec)
        if model is None:
            model = self._models.setdefault(spec, resolve_model(spec))
        return model

    def _agent(self, spec: Model | str, output: type[BaseModel] | type[str]) -> Agent[None, Any]:
        model = self._model(spec)
        key = (spec if isinstance(spec, str) else id(spec), output)
        hit = self._agents.get(key)
        if hit is not None and hit[0] is model:
            return hit[1]
        agent: Agent[None, Any] = Agent(model, output_type=output, name="kedi")
        self._agents[key] = (model, agent)
        return agent

    async def _enter(self, spec: Model | str) -> None:
        """On the loop: enter a model built from a name once per loop lifetime."""
        if isinstance(spec, Model) or not self.loop.in_loop_thread():
            return
        model = self._model(spec)
        key = (id(model), self.loop.generation)
        if key in self._entered:
            return
        self._entered.add(key)
        await model.__aenter__()
        self.loop.adopt(_exit_closer(model))

    # ------------------------------------------------------------------ running
    @staticmethod
    def _failure(spec: Model | str, error: Exception, key: SchemaKey = ()) -> ModelError:
        if isinstance(error, ModelError):
            return error
        detail = describe_output_error(error, key)
        return ModelError(
            f"model call failed ({describe_model(spec)}): {type(error).__name__}: {one_line(error)}"
            + (f"; {detail}" if detail else "")
        )

    def _prepare(
        self, spec: Model | str, output_schema: Mapping[str, Any] | None
    ) -> tuple[SchemaKey, Agent[None, Any]]:
        """The output key and agent of a call (``None`` schema: text output)."""
        if output_schema is None:
            try:
                return (), self._agent(spec, str)
            except Exception as error:
                raise self._failure(spec, error) from error
        key: SchemaKey = ()
        try:
            key = normalize_schema(output_schema)
            if not key:
                raise ModelError("a structured model call needs at least one output field")
            return key, self._agent(spec, build_output_model(key))
        except Exception as error:
            raise self._failure(spec, error, key) from error

    def _start(
        self,
        spec: Model | str,
        output_schema: Mapping[str, Any] | None,
        prompt: str,
        instructions: str | None,
        settings: Mapping[str, Any] | None,
    ) -> Coroutine[Any, Any, Any]:
        """Prepare a call in the calling thread; the returned coroutine makes it."""
        key, agent = self._prepare(spec, output_schema)
        return self._run(spec, agent, key, prompt, instructions, settings)

    async def _run(
        self,
        spec: Model | str,
        agent: Agent[None, Any],
        key: SchemaKey,
        prompt: str,
        instructions: str | None,
        settings: Mapping[str, Any] | None,
    ) -> Any:
        try:
            await self._enter(spec)
            options: dict[str, Any] = {
                "instructions": instructions or None,
                "model_settings": dict(settings) if settings else None,
            }
            result = await agent.run(prompt, **options)
        except Exception as error:
            raise self._failure(spec, error, key) from error
        return read_output(result.output, key) if key else str(result.output)

    def produce_sync(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        call = self._start(model, output_schema, template, instructions, settings)
        output: dict[str, Any] = self.loop.run(call)
        return output

    async def produce(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        call = self._start(model, output_schema, template, instructions, settings)
        output: dict[str, Any] = await call
        return output

    def invoke_sync(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> str:
        text: str = self.loop.run(self._start(model, None, prompt, instructions, settings))
        return text

    async def invoke(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> str:
        text: str = await self._start(model, None, prompt, instructions, settings)
        return text


def _exit_closer(model: Model) -> Callable[[], Awaitable[object]]:
    async def close() -> None:
        await model.__aexit__(None, None, None)

    return close
