"""The adapter contract (Kedi's `AgentAdapter`, `KEDI.md` §6.4) and the pydantic-ai adapter."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models import Model

from pytest_kedi.runtime.model.errors import ModelError, one_line
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.names import describe_model
from pytest_kedi.runtime.model.providers import resolve_model
from pytest_kedi.runtime.model.schema import (
    SchemaKey,
    build_output_model,
    describe_output_error,
    normalize_schema,
    read_output,
)

__all__ = ["Adapter", "AdapterCapabilities", "PydanticAIAdapter"]

#: Capabilities the built-in adapter advertises to `> requires:` (§9.11 reading).
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
    """Runs each call as one pydantic-ai `Agent` run (§6.2, §6.3).

    The synchronous methods run the call on ``loop`` (a `ModelLoop`; without one the
    adapter owns a private loop, closed when the adapter is garbage-collected or at
    exit). Models built from names are cached per loop: on the loop they are entered
    (their provider keeps one HTTP client, shared by every call) and the loop closes
    their clients when it closes. Injected `Model` instances are used as given.
    """

    kind = "agent-framework"
    shortname = "pydantic"
    capabilities = AdapterCapabilities()

    def __init__(self, loop: ModelLoop | None = None) -> None:
        if loop is None:
            loop = ModelLoop()
            loop.close_at_exit(self)
        self.loop = loop
        self._models: dict[tuple[str, int | None], Model] = {}
        self._agents: dict[tuple[Any, Any], tuple[Model, Agent[None, Any]]] = {}

    # ------------------------------------------------------------------ caches
    async def _model(self, spec: Model | str) -> Model:
        if isinstance(spec, Model):
            return spec
        on_loop = self.loop.in_loop_thread()
        key = (spec, self.loop.generation if on_loop else None)
        model = self._models.get(key)
        if model is None:
            model = resolve_model(spec)
            if on_loop:  # one client per provider for the loop's lifetime, closed with it
                await model.__aenter__()
                self.loop.adopt(_exit_closer(model))
            self._models[key] = model
        return model

    async def _agent(
        self, spec: Model | str, output: type[BaseModel] | type[str]
    ) -> Agent[None, Any]:
        model = await self._model(spec)
        key = (spec if isinstance(spec, str) else id(spec), output)
        hit = self._agents.get(key)
        if hit is not None and hit[0] is model:
            return hit[1]
        agent: Agent[None, Any] = Agent(model, output_type=output, name="kedi")
        self._agents[key] = (model, agent)
        return agent

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

    @staticmethod
    def _run_kwargs(instructions: str | None, settings: Mapping[str, Any] | None) -> dict[str, Any]:
        model_settings = dict(settings) if settings else None
        return {"instructions": instructions or None, "model_settings": model_settings}

    async def _prepare(
        self, spec: Model | str, output_schema: Mapping[str, Any]
    ) -> tuple[SchemaKey, Agent[None, Any]]:
        key = normalize_schema(output_schema)
        if not key:
            raise ModelError("a structured model call needs at least one output field")
        return key, await self._agent(spec, build_output_model(key))

    def produce_sync(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return self.loop.run(
            self.produce(
                template=template,
                output_schema=output_schema,
                model=model,
                instructions=instructions,
                settings=settings,
            )
        )

    async def produce(
        self,
        *,
        template: str,
        output_schema: Mapping[str, Any],
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        key: SchemaKey = ()
        try:
            key, agent = await self._prepare(model, output_schema)
            result = await agent.run(template, **self._run_kwargs(instructions, settings))
        except Exception as error:
            raise self._failure(model, error, key) from error
        return read_output(result.output, key)

    def invoke_sync(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> str:
        return self.loop.run(
            self.invoke(prompt=prompt, model=model, instructions=instructions, settings=settings)
        )

    async def invoke(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> str:
        try:
            agent = await self._agent(model, str)
            result = await agent.run(prompt, **self._run_kwargs(instructions, settings))
        except Exception as error:
            raise self._failure(model, error) from error
        return str(result.output)


def _exit_closer(model: Model) -> Callable[[], Awaitable[object]]:
    async def close() -> None:
        await model.__aexit__(None, None, None)

    return close
