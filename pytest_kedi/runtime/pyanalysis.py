"""What an embedded Python block binds: the analysis behind compiling a fence's new names
as function locals (`pytest_kedi.runtime.pyinterop`)."""

from __future__ import annotations

import ast

__all__ = ["INTROSPECTION", "child_nodes", "nested_globals", "tree_nodes", "top_level_targets"]

#: Calls that read a block's namespace by name: a block using one keeps every name global.
INTROSPECTION = frozenset({"locals", "globals", "vars", "eval", "exec"})

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` as a list, read from the node's ``__dict__`` (where a node
    keeps its fields): a block's code is analysed and relocated in a few passes over
    every node, once per compiled block."""
    fields = node.__dict__
    found: list[ast.AST] = []
    for name in node._fields:
        value = fields.get(name)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def tree_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree``, as `ast.walk` yields them (in another order)."""
    found = [tree]
    for node in found:  # grows as it is read
        found.extend(child_nodes(node))
    return found


def top_level_targets(body: list[ast.stmt]) -> set[str]:
    """Names bound at the top level of a block (not inside nested scopes)."""
    found: set[str] = set()
    stack: list[ast.AST] = list(body)
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                found.add(node.id)
            continue  # its only child is its context
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    found.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.Global):
            found.update(node.names)
        extend(child_nodes(node))
    return found


def nested_globals(body: list[ast.stmt]) -> tuple[set[str], bool]:
    """Names that nested scopes of a block declare ``global``, and whether the block
    names an `INTROSPECTION` call (one walk over the block for both)."""
    names: set[str] = set()
    introspects = False
    for stmt in body:
        for node in tree_nodes(stmt):
            kind = type(node)
            if kind is ast.Name:
                introspects = introspects or node.id in INTROSPECTION  # type: ignore[attr-defined]
            elif kind is ast.Global:
                names.update(node.names)  # type: ignore[attr-defined]
    return names, introspects
