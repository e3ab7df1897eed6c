"""A container rejected at a boundary names its first rejected item and why, also when the
item is of the wrong type (docs/language.md#types): the message gave only the container,
whose repr is cut at 80 characters, so the item at fault might not show at all."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_kedi.runtime.errors import KediTypeExecutionError

ITEM = "~Item(name: str, price: float)\n"


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("[x: list[int]] = `list(range(100)) + ['z']`\n", "item 100: expects int, got 'z' (str)"),
        (
            "[x: dict[str, list[int]]] = `{'a': [1], 'b': [1, '2']}`\n",
            "key 'b': item 1: expects int, got '2' (str)",
        ),
        ("[x: tuple[int, str]] = `(1, 2)`\n", "item 1: expects str, got 2 (int)"),
        ("[x: tuple[int, ...]] = `(1, None)`\n", "item 1: expects int, got None (NoneType)"),
        ("[x: set[int]] = `{'a'}`\n", "an item: expects int, got 'a' (str)"),
        (  # a parameter
            ITEM + "@f(o: list[Item]) -> int:\n  = `len(o)`\n= `f([Item('a', 1.0), {'n': 1}])`\n",
            "item 1: expects Item, got {'n': 1} (dict)",
        ),
        (  # a custom type's field
            ITEM + "~Order(items: list[Item])\n= `Order([{'name': 'b', 'price': 2.0}])`\n",
            "item 0: expects Item, got {'name': 'b', 'price': 2.0} (dict)",
        ),
        (  # a return
            "@f() -> list[int | None]:\n  = `[1, 'x']`\n= `f()`\n",
            "item 1: expects int | None, got 'x' (str)",
        ),
    ],
)
def test_the_rejected_item_is_named(run: Any, source: str, reason: str) -> None:
    with pytest.raises(KediTypeExecutionError) as caught:
        run(source)
    assert caught.value.message.endswith(f"): {reason}"), caught.value.message


@pytest.mark.parametrize(
    "source",
    [
        "[x: list[int]] = `(1,)`\n",  # not a list at all: nothing inside to name
        "[x: tuple[int, str]] = `(1, 'a', 3)`\n",  # the wrong length
        "[x: int] = `'1'`\n",
    ],
)
def test_a_value_of_the_wrong_kind_is_named_alone(run: Any, source: str) -> None:
    with pytest.raises(KediTypeExecutionError) as caught:
        run(source)
    assert caught.value.message.endswith(")"), caught.value.message
