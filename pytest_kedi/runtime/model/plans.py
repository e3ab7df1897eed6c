"""What the model boundary keeps per agent state (`StatePlan`) and adds to a row per call
(`account`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from pytest_kedi.runtime.model.direct import CallStats
from pytest_kedi.runtime.model.state import AgentState
from pytest_kedi.runtime.rowscope import ModelCallTrace, RowScope

if TYPE_CHECKING:  # pragma: no cover
    from pydantic_ai.models import Model

__all__ = ["StatePlan", "account"]


class StatePlan:
    """What calls in one agent state share (`ModelBoundary._plan`): the state, the value of
    the model environment variable the model was chosen by (``None``: not chosen by it), the
    model, validated settings, label, whether its output is synthetic, and the adapter's
    replay route per output schema."""

    __slots__ = ("env", "label", "model", "routes", "settings", "state", "synthetic")

    def __init__(
        self,
        state: AgentState,
        env: str | None,
        model: Model | str,
        settings: dict[str, Any],
        label: str,
        synthetic: bool,
    ) -> None:
        self.state = state
        self.env = env
        self.model = model
        self.settings = settings
        self.label = label
        self.synthetic = synthetic
        self.routes: dict[int, tuple[Mapping[str, Any], Any]] = {}


def account(
    scope: RowScope,
    stats: CallStats,
    label: str,
    prompt: str,
    instructions: str | None,
    start: float,
) -> None:
    """Add what a call cost to its row's ``scope`` and, tracing, what it said (``start``:
    when it started, by `time.perf_counter`)."""
    scope.requests += stats.requests
    scope.input_tokens += stats.input_tokens
    scope.output_tokens += stats.output_tokens
    if scope.trace:
        output = stats.output
        answer = (
            output
            if isinstance(output, str)
            else ""
            if output is None
            else to_json(output, fallback=repr).decode()
        )
        scope.calls.append(
            ModelCallTrace(
                model=label,
                prompt=prompt,
                instructions=instructions,
                answer=answer,
                input_tokens=stats.input_tokens,
                output_tokens=stats.output_tokens,
                duration_s=time.perf_counter() - start,
            )
        )
