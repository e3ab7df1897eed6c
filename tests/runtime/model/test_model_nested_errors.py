"""A model answer whose field is invalid deep inside (a custom type's list's item's field)
names the path to the value and that value's own type, as pydantic's ``loc`` does."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.errors import KediExecutionError

SOURCE = """\
~Item(name: str, price: float, tags: dict[str, int] = `{}`)
~Order(items: list[Item], note: str | int = `""`)
@get() -> Order:
  >> Give me an order [order: Order]
  = `order`
"""


def _program(kedi: Any, answer: dict[str, Any]) -> Any:
    def reply(messages: object, info: AgentInfo) -> ModelResponse:
        (tool,) = info.output_tools
        return ModelResponse(parts=[ToolCallPart(tool.name, answer)])

    return kedi(SOURCE, mode="validate", model=FunctionModel(reply))


def _items(third: dict[str, Any]) -> dict[str, Any]:
    good = {"name": "a", "price": 1.0}
    return {"order": {"items": [good, good, third]}}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        # it was "output field 'order' expects Order, got 'cheap' (str) at order.items.2.price"
        (
            _items({"name": "c", "price": "cheap"}),
            "output field 'order' (Order): order.items[2].price expects float, got 'cheap' (str)",
        ),
        (
            _items({"name": "c"}),
            "output field 'order' (Order): order.items[2].price (float) is missing",
        ),
        (
            _items({"name": "c", "price": 1.0, "tags": {"k": "v"}}),
            "output field 'order' (Order): order.items[2].tags.k expects int, got 'v' (str)",
        ),
        (
            {"order": {"items": "none"}},
            "output field 'order' (Order): order.items expects list[Item], got 'none' (str)",
        ),
        (  # through a union's member tag: its path as pydantic gives it, and pydantic's reason
            {"order": {"items": [], "note": [1]}},
            "output field 'order' (Order): order.note.str got [1] (list): Input should be a "
            "valid string; output field 'order' (Order): order.note.int got [1] (list): "
            "Input should be a valid integer",
        ),
    ],
)
def test_a_nested_invalid_value_is_named_by_its_path(
    kedi: Any, answer: dict[str, Any], message: str
) -> None:
    program = _program(kedi, answer)
    with pytest.raises(KediExecutionError) as caught:
        program.procedures["get"]()
    assert str(caught.value.message).endswith(message), caught.value.message
