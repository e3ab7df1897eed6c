"""The parse cache loads AST nodes through `pytest_kedi.lang.nodeload`: one loader per node
class, of the same layout, whose ``__init__`` takes the node's fields in order. What a
load gives must be exactly the nodes the parser builds: same classes, equal, frozen."""

from __future__ import annotations

import dataclasses
import inspect
import io
import pickle
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.lang import nodes, parse_file
from pytest_kedi.lang.nodeload import LOADERS, TWINS
from pytest_kedi.plugin.parsecache import _node_reducers, _unpickle

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.kedi"))

PROGRAM = """\
```
import math
```

~Point(x: int, y: int = `0`)

@double(x: int, y: `list[int]` = `[]`) -> int:

  > model: test
  [a] = `x * 2`
  [a] := <double(1)>
  > if: `a > 2`:
    > show: big <a>
  > else:
    > show: small
  > loop [i]: `range(2)`:
    `a += i`
  > loop: `a < 0`:
    `a += 1`
  >> Say <a> in [word: str]
  [raw] << plain <a>
  = `a`

@eval: double:
  > data: numbers:
    = `[(n, n * 2) for n in range(3)]`
  > metric: exact(numbers):
    = `double(numbers) == expected`

@test: cases:
  > case: one:
    `assert double(1) == 2`
  > case: two:
    ```
    assert double(2) == 4
    ```
"""


def node_classes() -> list[type]:
    return [
        cls
        for cls in vars(nodes).values()
        if inspect.isclass(cls)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == nodes.__name__
        and cls is not nodes.Node
    ]


@pytest.mark.parametrize("cls", node_classes(), ids=lambda cls: cls.__name__)
def test_each_node_class_has_a_loader_of_its_fields_and_layout(cls: type) -> None:
    loader = TWINS[cls]
    fields = [field.name for field in dataclasses.fields(cls)]
    assert list(inspect.signature(loader).parameters) == fields
    assert loader.__base__ is cls.__base__
    assert loader.__slots__ == cls.__slots__
    made = loader(*range(len(fields)))
    assert type(made) is cls
    assert made == cls(*range(len(fields)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(fields[-1], None)


def test_the_loaders_are_the_node_classes_loaders_only() -> None:
    assert set(TWINS) == set(node_classes())
    assert tuple(TWINS.values()) == LOADERS


def walk(value: Any) -> list[Any]:
    found = [value]
    if isinstance(value, tuple):
        for item in value:
            found += walk(item)
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            found += walk(getattr(value, field.name))
    return found


def pickled(module: nodes.Module) -> bytes:
    stream = io.BytesIO()
    pickler = pickle.Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _node_reducers()
    pickler.dump(module)
    return stream.getvalue()


@pytest.mark.parametrize("name", [None, *(path.name for path in EXAMPLES)])
def test_a_loaded_module_is_the_parsed_one(name: str | None, tmp_path: Path) -> None:
    source = tmp_path / "program.kedi"
    if name is None:
        source.write_text(PROGRAM, encoding="utf-8")
    else:
        source = EXAMPLES[0].with_name(name)
    module = parse_file(str(source))
    loaded = _unpickle(pickled(module))
    assert loaded == module
    assert repr(loaded) == repr(module)
    assert hash(loaded) == hash(module)
    expected, got = walk(module), walk(loaded)
    assert [type(node) for node in got] == [type(node) for node in expected]
    assert any(type(node) is nodes.Procedure for node in got)
    for node in got:
        assert type(node) not in LOADERS
        if dataclasses.is_dataclass(node):
            field = dataclasses.fields(node)[0].name
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(node, field, None)


def test_the_program_uses_most_node_classes(tmp_path: Path) -> None:
    source = tmp_path / "program.kedi"
    source.write_text(PROGRAM, encoding="utf-8")
    used = {type(node) for node in walk(parse_file(str(source)))}
    assert len(used & set(node_classes())) >= 20
