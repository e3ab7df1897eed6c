"""`KeylessModel`: a provider's model built without its key, for answers from cassettes.

Replayed answers need no key (`pytest_kedi.runtime.model.providers.resolve_model`): the
model is built with a placeholder key so that its cassette keys, its profile and its
output modes are those of the model the answers were recorded with; any request that
would reach the provider raises the error building it with the environment gave, as the
`ModelUnavailable` it would be without a cassette: no request leaves the process, so none is
counted as a model call or spends the ``--kedi-max-requests`` budget (`ModelPolicy` puts no
budget in front of this model).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from pytest_kedi.errors import ModelError, ModelUnavailable

__all__ = ["KeylessModel"]


class KeylessModel(WrapperModel):
    """``wrapped``, built with a placeholder key: its requests raise ``unavailable``."""

    def __init__(self, wrapped: Model, unavailable: ModelError) -> None:
        super().__init__(wrapped)
        self.unavailable = unavailable

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        raise self._error()

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        raise self._error()
        yield  # pragma: no cover

    def _error(self) -> ModelUnavailable:
        error = ModelUnavailable(str(self.unavailable))
        error.__cause__ = self.unavailable.__cause__
        return error
