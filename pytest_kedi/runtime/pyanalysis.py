"""What an embedded Python block binds: the analysis behind compiling a fence's new names
as function locals (`pytest_kedi.runtime.pyinterop`)."""

from __future__ import annotations

import ast
import copy
import types

__all__ = [
    "INTROSPECTION",
    "binding_line",
    "child_nodes",
    "code_names",
    "compile_may_warn",
    "nested_globals",
    "top_level_targets",
    "tree_nodes",
]

#: Calls that read a block's namespace by name: a block using one keeps every name global.
INTROSPECTION = frozenset({"locals", "globals", "vars", "dir", "eval", "exec"})

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
        if isinstance(node, ast.Lambda):  # its defaults are evaluated at this level
            extend(node.args.defaults)
            extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, _COMPREHENSIONS):  # its first iterable is evaluated at this
            extend([node.generators[0].iter])  # level, and its `:=` binds at this level
            found.update(_comprehension_walrus_targets(node))
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                found.add(node.id)
            continue  # its only child is its context
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    found.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            found.add(node.name)  # (`case [*rest]`, `case x`, `case int() as x`)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)  # `case {**rest}`
        elif isinstance(node, ast.Global):
            found.update(node.names)
        extend(child_nodes(node))
    return found


def binding_line(source: str, expr: bool, name: str) -> int | None:
    """The line (1-based, in ``source``) of the first statement that binds or deletes
    ``name`` in the block's own scope (for an expression, ``expr``: its ``:=``), also
    through ``global name`` in a nested function; None when none does so visibly
    (``globals()["n"] = 5``, ``exec``)."""
    text = source.lstrip() if expr else source
    try:
        tree = ast.parse(text, mode="eval" if expr else "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    found: list[int] = []
    stack: list[tuple[ast.AST, bool]] = [(tree, True)]  # a node; whether its binding counts
    while stack:
        node, counts = stack.pop()
        if counts and _binds(node, name):
            found.append(node.lineno)  # type: ignore[attr-defined]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            inner = not isinstance(node, ast.Lambda) and any(
                isinstance(sub, ast.Global) and name in sub.names
                for stmt in node.body
                for sub in tree_nodes(stmt)
            )
            for child in child_nodes(node):
                in_body = child in node.body if type(node.body) is list else child is node.body
                stack.append((child, inner if in_body else counts))
        elif isinstance(node, _COMPREHENSIONS):  # its targets are its own; `:=` binds out
            for child in child_nodes(node):
                if isinstance(child, ast.comprehension):
                    stack.append((child.target, False))
                    stack.extend((part, counts) for part in (child.iter, *child.ifs))
                else:
                    stack.append((child, counts))
        else:
            stack.extend((child, counts) for child in child_nodes(node))
    lead = source.count("\n", 0, len(source) - len(text))
    return min(found) + lead if found else None


def _binds(node: ast.AST, name: str) -> bool:
    """Whether ``node`` itself binds or deletes ``name``."""
    if isinstance(node, ast.Name):
        return node.id == name and isinstance(node.ctx, ast.Store | ast.Del)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    if isinstance(node, ast.Import | ast.ImportFrom):
        return any((alias.asname or alias.name.split(".")[0]) == name for alias in node.names)
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return node.name == name
    if isinstance(node, ast.MatchMapping):
        return node.rest == name
    return False


def _comprehension_walrus_targets(node: ast.AST) -> set[str]:
    """The names assignment expressions (``:=``) in a comprehension bind: in the scope
    that contains the comprehension (PEP 572), through nested comprehensions but not into
    a lambda's or function's own scope."""
    found: set[str] = set()
    stack = child_nodes(node)
    while stack:
        inner = stack.pop()
        if isinstance(inner, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(inner, ast.NamedExpr) and isinstance(inner.target, ast.Name):
            found.add(inner.target.id)
        stack.extend(child_nodes(inner))
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


_SINGLETONS = (None, True, False, ...)
_NOT_CALLABLE = (
    ast.Constant, ast.Tuple, ast.List, ast.ListComp, ast.Dict, ast.DictComp, ast.Set,
    ast.SetComp, ast.GeneratorExp, ast.JoinedStr, ast.FormattedValue,
)  # fmt: skip
_LITERAL_SUBSCRIPTED = (
    ast.Constant, ast.Set, ast.SetComp, ast.GeneratorExp, ast.Lambda, ast.List, ast.ListComp,
    ast.Tuple, ast.JoinedStr,
)  # fmt: skip


def compile_may_warn(tree: ast.AST) -> bool:
    """Whether compiling ``tree`` may make Python's compiler warn (a `SyntaxWarning`,
    given each time the code is compiled): ``is`` with a literal, a literal called or
    subscripted, an assertion on a tuple, a jump out of ``finally``. Conservative: True
    for some code that compiles silently."""
    for node in tree_nodes(tree):
        kind = type(node)
        if kind is ast.Compare:
            if any(type(op) in (ast.Is, ast.IsNot) for op in node.ops):  # type: ignore[attr-defined]
                operands = [node.left, *node.comparators]  # type: ignore[attr-defined]
                if any(_literal(operand) for operand in operands):
                    return True
        elif kind is ast.Call:
            if isinstance(node.func, _NOT_CALLABLE):  # type: ignore[attr-defined]
                return True
        elif kind is ast.Subscript:
            if isinstance(node.value, _LITERAL_SUBSCRIPTED):  # type: ignore[attr-defined]
                return True
        elif kind is ast.Assert:
            test = node.test  # type: ignore[attr-defined]
            if isinstance(test, ast.Tuple) and test.elts:
                return True
        elif isinstance(node, ast.Try | ast.TryStar) and any(
            isinstance(inner, ast.Return | ast.Break | ast.Continue)
            for stmt in node.finalbody
            for inner in tree_nodes(stmt)
        ):
            return True
    return False


#: Nodes whose value is not known when compiling (what constant folding stops at).
_RUNTIME = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.NamedExpr, ast.Await)


def _literal(node: ast.expr) -> bool:
    """Whether ``node`` may be a constant once Python folds it (``()``, ``1 + 1``), other
    than ``None``, ``True``, ``False`` or ``...``."""
    if type(node) is ast.Constant:
        return not any(node.value is singleton for singleton in _SINGLETONS)
    return not any(isinstance(inner, _RUNTIME) for inner in tree_nodes(node))


def code_names(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the code nested in it use, among them every name an
    assignment expression (``:=``) binds outside a function: its own level's, and a
    comprehension's, which Python binds at that level too."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def unannotated(body: list[ast.stmt], shared: frozenset[str]) -> list[ast.stmt]:
    """``body`` with each annotated assignment at the block's own level to a name in
    ``shared`` (declared ``global`` in the block's function) made a plain one: at a
    module's top level, as the block is written, ``x: int = 1`` binds the global ``x``,
    but a function may not annotate a name it declares global. A bare annotation
    (``x: int``) binds nothing and is dropped. Nodes are copied where changed."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id in shared:
                if stmt.value is None:
                    stmt = ast.copy_location(ast.Pass(), stmt)
                else:
                    stmt = ast.copy_location(ast.Assign([stmt.target], stmt.value), stmt)
        elif not isinstance(stmt, _OWN_SCOPES):
            changed = {}
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(stmt, field, None)
                if inner:
                    new = unannotated(inner, shared)
                    if any(a is not b for a, b in zip(new, inner, strict=True)):
                        changed[field] = new
            if changed:
                stmt = copy.copy(stmt)
                for field, new in changed.items():
                    setattr(stmt, field, new)
        out.append(stmt)
    return out
