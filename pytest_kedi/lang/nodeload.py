"""The AST's nodes as the parse cache loads them: fast, and exactly the nodes of `nodes`.

Unpickling a node calls its class with its field values (`pytest_kedi.plugin.parsecache`),
and a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, the
dearest part of loading a file's syntax tree. Each node class gets a loader class here,
made from it: the same base and ``__slots__`` without the frozen check, and an
``__init__`` that stores the fields directly (plain attribute stores, about a third of
the cost), then makes the object an instance of the node class (``__class__``), so what
the load gives is that node, equal to the one the parser builds. The loaders' methods are
compiled together when the parse cache first loads or stores a module (one compilation,
a few milliseconds), and are module attributes (``_Span``, ``_Module`` ...) so a pickle
can name them. `TWINS` maps each node class to its loader.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from pytest_kedi.lang import nodes

__all__ = ["LOADERS", "TWINS"]


def _node_classes() -> list[type]:
    """The node classes whose instances a parse makes (not their base class)."""
    return [
        cls
        for cls in vars(nodes).values()
        if inspect.isclass(cls)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == nodes.__name__
        and cls is not nodes.Node
    ]


def _loaders() -> dict[type, type]:
    """Each node class -> its loader class, made as the module docstring says."""
    classes = _node_classes()
    lines: list[str] = []
    for cls in classes:
        names = [field.name for field in dataclasses.fields(cls)]
        lines.append(f"def _init_{cls.__name__}(self, {', '.join(names)}):")
        lines += [f"    self.{name} = {name}" for name in names]
        lines.append(f"    self.__class__ = {cls.__name__}")
    scope: dict[str, Any] = {cls.__name__: cls for cls in classes}
    exec(compile("\n".join(lines), __file__ + ":loaders", "exec"), scope)
    twins: dict[type, type] = {}
    for cls in classes:
        name = "_" + cls.__name__
        twin = type(
            name,
            cls.__bases__,
            {
                "__slots__": vars(cls)["__slots__"],
                "__init__": scope["_init_" + cls.__name__],
                "__setattr__": object.__setattr__,  # (the node's frozen check undone)
                "__delattr__": object.__delattr__,
                "__module__": __name__,
                "__qualname__": name,
            },
        )
        globals()[name] = twins[cls] = twin
    return twins


#: Each node class -> the class its pickled instances are loaded through.
TWINS: dict[type, type] = _loaders()

#: The classes of `TWINS` (what a pickle of nodes names).
LOADERS = tuple(TWINS.values())
