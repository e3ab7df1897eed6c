"""`ModelPolicy`: how the models of a program are wrapped (cassettes, retries, budget).

The plugin builds one policy per session and binds it to each program's cassette file
(`for_cassette`); the adapter passes every model it resolves through `wrap`, so every
request goes through the wrappers, whichever model (name or injected instance) serves it.
Order, outermost first: the cassette (a replayed answer needs no retry and spends no
budget), the retries, the budget (every attempt that is issued is a request).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pydantic_ai.models import Model

    from pytest_kedi.runtime.model.budget import RequestBudget
    from pytest_kedi.runtime.model.cassettes import CassetteBook
    from pytest_kedi.runtime.model.retrying import RetryPolicy

__all__ = ["ModelPolicy"]


@dataclass(frozen=True)
class ModelPolicy:
    cassettes: CassetteBook | None = None
    cassette: Path | None = None  # this program's cassette file (with ``cassettes``)
    retry: RetryPolicy | None = None
    budget: RequestBudget | None = None
    _wrapped: dict[int, tuple[Model, Model]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    @property
    def active(self) -> bool:
        return self.cassette is not None or self.retry is not None or self.budget is not None

    def for_cassette(self, path: Path | None) -> ModelPolicy:
        """This policy for a program whose cassette file is ``path``."""
        return replace(self, cassette=path, _wrapped={}, _lock=threading.Lock())

    def wrap(self, model: Model) -> Model:
        """``model`` behind this policy's wrappers (the same wrapper for the same model)."""
        if not self.active:
            return model
        with self._lock:
            hit = self._wrapped.get(id(model))
            if hit is not None and hit[0] is model:
                return hit[1]
            wrapped = self._build(model)
            self._wrapped[id(model)] = (model, wrapped)
            return wrapped

    def _build(self, model: Model) -> Model:
        from pytest_kedi.runtime.model.keyless import KeylessModel

        # A keyless model's requests never leave the process (each is the error building the
        # model gave): they spend no budget, as without a cassette no request is made.
        if self.budget is not None and not isinstance(model, KeylessModel):
            from pytest_kedi.runtime.model.budget import BudgetModel

            model = BudgetModel(model, self.budget)
        if self.retry is not None and self.retry.retries > 0:
            from pytest_kedi.runtime.model.retrying import RetryingModel

            model = RetryingModel(model, self.retry)
        if self.cassettes is not None and self.cassette is not None:
            from pytest_kedi.runtime.model.cassettes import CassetteModel

            model = CassetteModel(model, self.cassettes, self.cassette)
        return model
