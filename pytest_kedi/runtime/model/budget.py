"""A cap on the model requests a run issues (``--kedi-max-requests``).

`BudgetModel` wraps the model of every program of the process; each request (every retry
attempt included) takes one unit from the shared `RequestBudget`, and once it is spent a
request raises `BudgetExhausted` without being issued (its row errors with class
``budget``). Answers replayed from a cassette are not requests.
"""

from __future__ import annotations

import threading

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from pytest_kedi.errors import BudgetExhausted

__all__ = ["BudgetModel", "RequestBudget"]


class RequestBudget:
    """At most ``limit`` requests; ``scope`` says whose budget it is (for the message)."""

    def __init__(self, limit: int, scope: str = "the run") -> None:
        self.limit = limit
        self.scope = scope
        self.spent = 0
        self.refused = 0  # requests not issued because it was spent
        self._lock = threading.Lock()

    def take(self) -> None:
        """Spend one request, or raise `BudgetExhausted` when none is left."""
        with self._lock:
            if self.spent >= self.limit:
                self.refused += 1
                raise BudgetExhausted(
                    f"model request budget spent: {self.limit} request(s) for {self.scope}; "
                    "no request was issued"
                )
            self.spent += 1


class BudgetModel(WrapperModel):
    """Takes one request from ``budget`` before each request of the wrapped model."""

    def __init__(self, wrapped: Model, budget: RequestBudget) -> None:
        super().__init__(wrapped)
        self.budget = budget

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self.budget.take()
        return await self.wrapped.request(messages, model_settings, model_request_parameters)
