"""What Python reports only when it compiles code, not when it parses it (``break`` outside
a loop, ``await`` outside an async function, a misplaced ``from __future__`` import, a
duplicate argument name, ``nonlocal`` with no binding, ...): `compile_error` compiles a
parsed snippet as the runtime compiles it, so that `check_python` reports these errors where
it reports syntax errors (docs/language.md#line-kinds).

The runtime (`pytest_kedi.runtime.pyinterop`) compiles a backtick expression in ``"eval"``
mode, the prelude as a module, and a block (a fence, a backtick statement line, a case
body) as the body of a plain function named `BLOCK_NAME`. Wrapped so, a ``yield`` at the
block's own level would make the block a generator, which never runs its code: Python
refuses a ``yield`` outside a function, and so does Kedi (`generator_error`).
"""

from __future__ import annotations

import ast
import types
import warnings
from typing import Any

__all__ = ["BLOCK_NAME", "compile_error", "generator_error", "is_generator"]

#: The name of the function a block is compiled as.
BLOCK_NAME = "__kedi_block__"

#: ``inspect.CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR`` (not importing `inspect`):
#: a function with one of these flags returns an object instead of running its body.
_NOT_RUN = 0x20 | 0x80 | 0x200

#: Per node class whose body is a scope of its own (a ``yield`` there is not the block's),
#: the fields evaluated where it is defined (decorators, defaults, annotations, bases).
_SCOPES = {
    ast.FunctionDef: ("decorator_list", "args", "returns"),
    ast.AsyncFunctionDef: ("decorator_list", "args", "returns"),
    ast.Lambda: ("args",),
    ast.ClassDef: ("decorator_list", "bases", "keywords"),
}


def compile_error(tree: ast.AST, kind: str, path: str) -> SyntaxError | None:
    """The `SyntaxError` compiling ``tree`` (a snippet parsed by `parse_snippet`; not
    changed) raises as ``kind`` (``"expr"``, ``"prelude"`` or ``"block"``), located as
    Python locates it (the tree's line numbers; the column a UTF-8 byte offset, plus one),
    or None. Compiling may warn; the runtime compiles the code again and gives those
    warnings then, so they are not given here."""
    if isinstance(tree, ast.Expression) and _compiles(tree):
        return None  # (most expressions: no compile, and the warning filters left alone)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if isinstance(tree, ast.Expression):
                compile(tree, path, "eval", dont_inherit=True)
                return None
            assert isinstance(tree, ast.Module)
            if kind == "prelude":
                compile(tree, path, "exec", dont_inherit=True)
                return None
            code = compile(_as_function(tree.body), path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return exc
    function = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return generator_error(tree.body, path) if is_generator(function) else None


#: Per expression node class whose compiling cannot fail (a call's keywords aside), the
#: fields holding its child expressions. Compiling an expression fails only where it binds
#: a name (`:=`, a comprehension), yields, awaits, defines a function (a lambda's argument
#: names), unpacks (``*x``) or names a keyword argument twice or ``__debug__``: an
#: expression of these nodes alone, the most common kind, need not be compiled to check it.
_PLAIN: dict[type, tuple[str, ...]] = {
    ast.Name: (),
    ast.Constant: (),
    ast.Attribute: ("value",),
    ast.Subscript: ("value", "slice"),
    ast.Slice: ("lower", "upper", "step"),
    ast.BinOp: ("left", "right"),
    ast.UnaryOp: ("operand",),
    ast.BoolOp: ("values",),
    ast.Compare: ("left", "comparators"),
    ast.IfExp: ("test", "body", "orelse"),
    ast.List: ("elts",),
    ast.Tuple: ("elts",),
    ast.Set: ("elts",),
    ast.Dict: ("keys", "values"),
    ast.JoinedStr: ("values",),
    ast.FormattedValue: ("value", "format_spec"),
}


#: At most this many nodes: Python's compiler gives up on a tree too deep for its recursion
#: limit (about 1,000 levels), which its parser may accept.
_PLAIN_NODES = 100


def _compiles(tree: ast.AST) -> bool:
    """Whether ``tree`` (an `ast.Expression`) surely compiles: it holds at most
    `_PLAIN_NODES` nodes, only `_PLAIN` nodes and calls whose keyword arguments are
    distinct and not ``__debug__``."""
    stack: list[ast.AST | None] = [tree.body]  # type: ignore[attr-defined]
    pop, push, extend = stack.pop, stack.append, stack.extend
    budget = _PLAIN_NODES
    while stack:
        budget -= 1
        if budget < 0:
            return False
        node = pop()
        kind = type(node)
        if kind is ast.Call:
            keywords = node.keywords  # type: ignore[union-attr]
            if keywords:
                names = [keyword.arg for keyword in keywords if keyword.arg is not None]
                if "__debug__" in names or len(set(names)) != len(names):
                    return False
                extend([keyword.value for keyword in keywords])
            push(node.func)  # type: ignore[union-attr]
            extend(node.args)  # type: ignore[union-attr]
            continue
        fields = _PLAIN.get(kind)
        if fields is None:
            if node is None:  # an absent part (a slice's bound, a `**` item's key)
                continue
            return False
        for name in fields:
            value = getattr(node, name)
            if type(value) is list:
                extend(value)
            else:
                push(value)
    return True


def _as_function(body: list[ast.stmt]) -> ast.Module:
    """``def BLOCK_NAME(): <body>`` (a new tree holding ``body``'s own statements)."""
    end = max((getattr(stmt, "end_lineno", None) or 1 for stmt in body), default=1)
    at: dict[str, Any] = {"lineno": 1, "col_offset": 0, "end_lineno": end, "end_col_offset": 0}
    func = ast.FunctionDef(
        name=BLOCK_NAME,
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body or [ast.Pass(**at)],
        decorator_list=[],
        returns=None,
        **at,
    )
    return ast.Module(body=[func], type_ignores=[])


def is_generator(code: types.CodeType) -> bool:
    """Whether calling a function of ``code`` would not run its body (a generator or a
    coroutine)."""
    return bool(code.co_flags & _NOT_RUN)


def generator_error(body: list[ast.stmt], path: str) -> SyntaxError:
    """Python's error for the first ``yield`` (or ``yield from``) of a block's ``body``
    outside the scopes nested in it, located as a compile error is (the tree's line
    numbers; the column a UTF-8 byte offset, plus one)."""
    found: list[ast.expr] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        outer = _SCOPES.get(type(node))
        if isinstance(node, ast.Yield | ast.YieldFrom):
            found.append(node)
        if outer is None:
            stack.extend(ast.iter_child_nodes(node))
            continue
        for name in outer:
            value = getattr(node, name)
            if isinstance(value, list):
                stack.extend(value)
            elif value is not None:
                stack.append(value)
    first = min(found, key=lambda yielded: (yielded.lineno, yielded.col_offset), default=None)
    if first is None:  # not found (not expected): at the block's first line
        return SyntaxError("'yield' outside function", (path, 1, 1, None, 1, 1))
    line, column = first.lineno, first.col_offset + 1
    end = (first.end_lineno or line, (first.end_col_offset or 0) + 1)
    return SyntaxError("'yield' outside function", (path, line, column, None, *end))
