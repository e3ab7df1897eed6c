"""The adapter contract (Kedi's `AgentAdapter`, `KEDI.md` §6.4) and the pydantic-ai adapter."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models import Model

from pytest_kedi.runtime.model.errors import ModelError, one_line
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


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class PydanticAIAdapter:
    """Runs each call as one pydantic-ai `Agent` run (§6.2, §6.3).

    Models built from names and their Agents are cached per thread, so each thread
    (each with its own event loop under ``run_sync``) owns its provider clients;
    injected `Model` instances are shared.
    """

    kind = "agent-framework"
    shortname = "pydantic"
    capabilities = AdapterCapabilities()

    def __init__(self) -> None:
        self._local = threading.local()

    # ------------------------------------------------------------------ caches
    def _models(self) -> dict[str, Model]:
        cache: dict[str, Model] | None = getattr(self._local, "models", None)
        if cache is None:
            cache = self._local.models = {}
        return cache

    def _agents(self) -> dict[tuple[Any, Any], tuple[Model, Agent[None, Any]]]:
        cache: dict[tuple[Any, Any], tuple[Model, Agent[None, Any]]] | None = getattr(
            self._local, "agents", None
        )
        if cache is None:
            cache = self._local.agents = {}
        return cache

    def _model(self, spec: Model | str) -> Model:
        if isinstance(spec, Model):
            return spec
        models = self._models()
        model = models.get(spec)
        if model is None:
            model = models[spec] = resolve_model(spec)
        return model

    def _agent(self, spec: Model | str, output: type[BaseModel] | type[str]) -> Agent[None, Any]:
        model = self._model(spec)
        key = (spec if isinstance(spec, str) else id(spec), output)
        agents = self._agents()
        hit = agents.get(key)
        if hit is not None and hit[0] is model:
            return hit[1]
        agent: Agent[None, Any] = Agent(model, output_type=output, name="kedi")
        agents[key] = (model, agent)
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

    def _run_sync(self, agent: Agent[None, Any], prompt: str, kwargs: dict[str, Any]) -> Any:
        def run() -> Any:
            return agent.run_sync(prompt, **kwargs).output

        if _in_running_loop():  # run_sync cannot drive a loop that is already running here
            with ThreadPoolExecutor(max_workers=1) as pool:
                return pool.submit(run).result()
        return run()

    def _prepare(
        self, spec: Model | str, output_schema: Mapping[str, Any]
    ) -> tuple[SchemaKey, Agent[None, Any]]:
        key = normalize_schema(output_schema)
        if not key:
            raise ModelError("a structured model call needs at least one output field")
        return key, self._agent(spec, build_output_model(key))

    def produce_sync(
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
            key, agent = self._prepare(model, output_schema)
            output = self._run_sync(agent, template, self._run_kwargs(instructions, settings))
        except Exception as error:
            raise self._failure(model, error, key) from error
        return read_output(output, key)

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
            key, agent = self._prepare(model, output_schema)
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
        try:
            agent = self._agent(model, str)
            output = self._run_sync(agent, prompt, self._run_kwargs(instructions, settings))
        except Exception as error:
            raise self._failure(model, error) from error
        return str(output)

    async def invoke(
        self,
        *,
        prompt: str,
        model: Model | str,
        instructions: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> str:
        try:
            agent = self._agent(model, str)
            result = await agent.run(prompt, **self._run_kwargs(instructions, settings))
        except Exception as error:
            raise self._failure(model, error) from error
        return str(result.output)
