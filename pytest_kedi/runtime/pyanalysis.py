"""What an embedded Python block binds: the analysis behind compiling a fence's new names
as function locals (`pytest_kedi.runtime.pyinterop`)."""

from __future__ import annotations

import ast

__all__ = ["INTROSPECTION", "nested_globals", "top_level_targets"]

#: Calls that read a block's namespace by name: a block using one keeps every name global.
INTROSPECTION = frozenset({"locals", "globals", "vars", "eval", "exec"})

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def top_level_targets(body: list[ast.stmt]) -> set[str]:
    """Names bound at the top level of a block (not inside nested scopes)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            for deco in node.decorator_list:
                visit(deco)
            return
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    found.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.Global):
            found.update(node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return found


def nested_globals(body: list[ast.stmt]) -> set[str]:
    """Names that nested scopes of a block declare ``global``."""
    names: set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Global):
                names.update(node.names)
    return names
