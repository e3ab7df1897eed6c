"""`AgentState`: the agent configuration active at one model call (docs/language.md#agent-state)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

__all__ = ["AgentState"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class AgentState:
    """Immutable snapshot of the lexical agent state.

    * ``adapter``: the ``> adapter:`` name (only ``pydantic`` runs).
    * ``model``: the source ``> model:`` in scope (already normalized), or ``None``.
    * ``instructions``: a thunk rendering ``> instructions:`` at call time, or ``None``.
    * ``settings``: the merged ``> settings:`` (validated with `validate_settings`).
    * ``unsupported``: ``(construct, line)`` markers raised at the next model call.
    * ``requires``: capabilities accumulated from ``> requires:``; ``requires_at``: the
      line of the ``> requires:`` that first named each, for the error naming it.
    """

    adapter: str = "pydantic"
    model: str | None = None
    instructions: Callable[[], str] | None = None
    settings: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    unsupported: tuple[tuple[str, int], ...] = ()
    requires: frozenset[str] = frozenset()
    requires_at: tuple[tuple[str, int], ...] = ()

    def replace(self, **changes: Any) -> AgentState:
        """A copy with ``changes`` applied (dataclasses.replace semantics)."""
        return replace(self, **changes)

    def render_instructions(self) -> str | None:
        """Render the instructions thunk; an empty rendering counts as no instructions."""
        if self.instructions is None:
            return None
        text = self.instructions()
        return text or None
