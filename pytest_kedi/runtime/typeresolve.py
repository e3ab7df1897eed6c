"""Resolving a type annotation to the type it names (docs/language.md#types): a direct
annotation (``list[str]``, ``str | None``, ``Shipment``) and the strings of one, which are
forward references (``"P"``, ``list["P"]``)."""

from __future__ import annotations

import ast
import keyword
import types
import typing
from collections.abc import Callable
from typing import Annotated as _Annotated
from typing import Any, Literal, Union, get_args, get_origin

from pytest_kedi.errors import KediTypeExecutionError
from pytest_kedi.lang.pycheck import parse_snippet
from pytest_kedi.runtime.typenames import TYPE_BUILTINS, Annotated
from pytest_kedi.runtime.types import describe_value

__all__ = ["resolve_strings", "resolve_type_source"]


def _is_type_like(value: Any) -> bool:
    if value is None or value is Any or isinstance(value, type):
        return True
    if get_origin(value) is not None:
        return True
    return isinstance(value, (type(Annotated), typing._SpecialForm, types.UnionType))


def resolve_type_source(
    source: str,
    lookup: Callable[[str], Any],
    where: tuple[str, int] | None = None,
    shown: str | None = None,
) -> Any:
    """Resolve a direct annotation (``list[str]``, ``str | None``, ``Shipment``).

    Names resolve to built-ins first, then via ``lookup`` (Kedi types in scope, then
    prelude globals); ``lookup`` returns ``MISSING``-like sentinels by raising
    ``KeyError`` for unknown names. Raises ``KediTypeExecutionError`` for unknown or
    non-type names and malformed annotations. ``where``: the annotation's `.kedi` file and
    line, which Python's warnings about it name (``Literal["\\d"]``: an invalid escape).
    ``shown``: the whole annotation, which an unknown name's error quotes, when ``source`` is
    one of its strings (``P`` of ``list["P"]``).
    """
    name = source.strip()
    if name in TYPE_BUILTINS and not keyword.iskeyword(name):
        # One built-in name (``int``, ``str``: most annotations) is what the full path
        # below resolves it to, without parsing and compiling the annotation.
        return _type_like(source, TYPE_BUILTINS[name])
    path, line = where or ("<unknown>", 1)
    try:
        tree = parse_snippet(name, True, line, path)[0]
    except SyntaxError:
        raise KediTypeExecutionError(f"invalid type annotation {source!r}") from None
    assert isinstance(tree, ast.Expression)
    namespace: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in namespace:
            if node.id in TYPE_BUILTINS:
                namespace[node.id] = TYPE_BUILTINS[node.id]
                continue
            try:
                value = lookup(node.id)
            except KeyError:
                raise KediTypeExecutionError(
                    f"unknown type {node.id!r} in annotation {(shown or source).strip()!r}"
                ) from None
            namespace[node.id] = value
    try:
        code = compile(tree, "<annotation>", "eval", dont_inherit=True)
        result = eval(code, {"__builtins__": {}}, namespace)
    except Exception as exc:
        raise KediTypeExecutionError(f"invalid type annotation {source!r}: {exc}") from None
    if isinstance(tree.body, ast.Constant) and isinstance(result, str):
        # a quoted annotation (``"P"``) is a forward reference, as ``list["P"]``'s string is
        whole = shown or source
        return resolve_strings(result, lambda text: resolve_type_source(text, lookup, where, whole))
    return _type_like(source, result)


def _type_like(source: str, result: Any) -> Any:
    """``result``, the value of the annotation ``source``, when it is a type."""
    if not _is_type_like(result):
        raise KediTypeExecutionError(f"{source!r} is not a type (it is {describe_value(result)})")
    return result


def resolve_strings(tp: Any, evaluate: Callable[[str], Any], depth: int = 0) -> Any:
    """``tp``, a backtick type's value, with its string forward references (``"Node"``,
    ``list["int"]``, ``Optional["T"]``) replaced by ``evaluate(text)``, the string evaluated
    in the annotation's own namespace (as `typing.get_type_hints` does), never in
    pytest-kedi's. `Literal` values and `Annotated` metadata are values, not types."""
    if isinstance(tp, str | typing.ForwardRef):
        text = tp if isinstance(tp, str) else tp.__forward_arg__
        if depth > 8:
            raise KediTypeExecutionError(f"invalid type annotation {text!r}: it names itself")
        found = evaluate(text.strip())
        if isinstance(found, str):  # a name for a string is no type
            raise KediTypeExecutionError(f"{text!r} is not a type (it is {describe_value(found)})")
        return resolve_strings(found, evaluate, depth + 1)
    origin = get_origin(tp)
    if origin is None or origin is Literal:
        return tp
    args = get_args(tp)
    if origin is _Annotated:
        base = resolve_strings(args[0], evaluate, depth)
        return tp if base is args[0] else _Annotated[(base, *tp.__metadata__)]
    new = tuple(resolve_strings(a, evaluate, depth) for a in args)
    if all(a is b for a, b in zip(new, args, strict=True)):
        return tp
    if origin in (Union, types.UnionType):
        return Union[new]  # noqa: UP007 (built from a tuple)
    return origin[new] if isinstance(tp, types.GenericAlias) else tp.copy_with(new)
