"""The Kedi type environment and strict validation (docs/language.md#types, #strict-validation).

Validation never coerces: ``"5"`` is not an ``int``, ``1`` is not a ``bool``, a tuple is
not a list and a ``dict`` is not a custom type. A successful check binds the original
object (aliasing is preserved).
"""

from __future__ import annotations

import collections.abc
import datetime as _dt
import re
import types
from collections.abc import Callable
from typing import Annotated as _Annotated
from typing import Any, Literal, Union, get_args, get_origin

from pytest_kedi.errors import KediTypeExecutionError
from pytest_kedi.runtime.caches import ProcessCache
from pytest_kedi.runtime.rowscope import short_repr
from pytest_kedi.runtime.typenames import EMAIL, EMAIL_RE, TYPE_BUILTINS, Annotated, is_url_type
from pytest_kedi.text import exception_text

__all__ = [
    "EMAIL",
    "TYPE_BUILTINS",
    "Annotated",
    "check",
    "describe_type",
    "describe_value",
    "error_reason",
    "expectation",
    "field_description",
    "is_kedi_type",
    "strip_annotated",
    "without_descriptions",
    "validator_for",
]

Checker = Callable[[Any], bool]


def is_kedi_type(value: Any) -> bool:
    return isinstance(value, type) and getattr(value, "__kedi_type__", False) is True


# ----------------------------------------------------------------------------- descriptions


def describe_type(tp: Any) -> str:
    if tp is None or tp is type(None):
        return "None"
    if tp is Any:
        return "Any"
    if EMAIL in getattr(tp, "__metadata__", ()):
        return "Email"
    if tp is re.Pattern:
        return "Regex"
    origin = get_origin(tp)
    if origin is None:
        if isinstance(tp, type):
            return tp.__name__
        return _repr(tp).replace("typing.", "")
    args = get_args(tp)
    if origin is _Annotated:
        constraints = [_describe_meta(m) for m in tp.__metadata__ if not isinstance(m, str)]
        constraints = [text for text in constraints if text]
        if not constraints:
            return describe_type(args[0])
        return f"Annotated[{describe_type(args[0])}, {', '.join(constraints)}]"
    if origin in (Union, types.UnionType):
        return " | ".join(describe_type(a) for a in args)
    if origin is Literal:
        return "Literal[" + ", ".join(_repr(a) for a in args) + "]"
    name = getattr(origin, "__name__", None) or _repr(origin).replace("typing.", "")
    inner = ", ".join("..." if a is Ellipsis else describe_type(a) for a in args)
    return f"{name}[{inner}]"


def _describe_meta(meta: Any) -> str:
    """A constraint of ``Annotated`` as a user wrote it: ``Gt(gt=0)`` for ``Field(gt=0)``,
    ``AfterValidator(positive)``."""
    if meta is EMAIL:
        return ""
    inner = getattr(meta, "metadata", None)  # a pydantic `FieldInfo`: its constraints
    if isinstance(inner, list):
        return ", ".join(map(repr, inner))
    func = getattr(meta, "func", None)
    if func is not None:
        return f"{type(meta).__name__}({getattr(func, '__name__', 'validator')})"
    return _repr(meta)


def _repr(value: Any) -> str:
    """``repr(value)``; a backtick annotation's object whose ``__repr__`` raises is described
    (``<unrepresentable Odd: ValueError>``), so the error reported is the type's."""
    return short_repr(value, 10_000)


def describe_value(value: Any) -> str:
    """``'abc' (str)``: the value's repr, cut to 80 characters, and its type's name; a repr
    that raises is described instead (``<unrepresentable Answer: RuntimeError> (Answer)``),
    so the error being reported is the one raised."""
    return f"{short_repr(value, 80)} ({type(value).__name__})"


def expectation(tp: Any, value: Any) -> str:
    """``Annotated[int, Gt(gt=0)], got -1 (int): Input should be greater than 0``: the type
    a rejected value was checked against, the value and, when a constraint or validator of
    the type said why, that reason; in a container, its first rejected item, with that
    reason or its own mismatch (``item 2: expects int, got 'z' (str)``). Made for a failure
    only: the checks themselves stay yes/no."""
    text = f"{describe_type(tp)}, got {describe_value(value)}"
    try:
        reason = _reason(tp, value)
    except Exception:  # user code that fails a second time: the check's own verdict stands
        reason = None
    return f"{text}: {reason}" if reason else text


def _reason(tp: Any, value: Any) -> str | None:
    """Why ``value`` fails ``tp``, as a constraint or validator says or, in a container, as
    its first rejected item does; or None."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is _Annotated:
        if not validator_for(args[0])(value):
            return _reason(args[0], value)
        kept = tuple(m for m in tp.__metadata__ if not isinstance(m, str) and m is not EMAIL)
        return _pydantic_reason(_Annotated[(args[0], *kept)], value) if kept else None
    items: Any  # (label, item, the item's type)
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        items = ((f"key {short_repr(k, 40)}", v, args[1]) for k, v in value.items())
    elif origin in (list, set, frozenset) and len(args) == 1 and isinstance(value, origin):
        form = "item {}" if origin is list else "an item"
        items = ((form.format(i), v, args[0]) for i, v in enumerate(value))
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis and isinstance(value, tuple):
        items = ((f"item {i}", v, args[0]) for i, v in enumerate(value))
    elif origin is tuple and isinstance(value, tuple) and len(value) == len(args) != 0:
        items = ((f"item {i}", v, a) for i, (v, a) in enumerate(zip(value, args, strict=True)))
    else:
        return None
    for label, item, inner in items:
        if not validator_for(inner)(item):
            why = _reason(inner, item)  # else the item's own mismatch: a long value's
            # repr is cut, and the item at fault may not show in it
            why = why or f"expects {describe_type(inner)}, got {describe_value(item)}"
            return f"{label}: {why}"
    return None


def _pydantic_reason(tp: Any, value: Any) -> str | None:
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(tp).validate_python(value, strict=True)
    except ValidationError as exc:
        errors = exc.errors()
        return error_reason(errors[0]) if errors else None
    return None


def error_reason(error: Any) -> str:
    """A pydantic error's reason: the message a validator raised (``must be positive``,
    not pydantic's ``Value error, must be positive``), else pydantic's own."""
    raised = (error.get("ctx") or {}).get("error")
    text = str(raised) if isinstance(raised, BaseException) else ""
    return text or str(error.get("msg", ""))


def strip_annotated(tp: Any) -> Any:
    while get_origin(tp) is _Annotated:
        tp = get_args(tp)[0]
    return tp


def without_descriptions(tp: Any) -> Any:
    """``tp`` without the descriptions of ``Annotated[T, "d"]``, its constraints kept
    (``Annotated[int, Field(gt=0), "d"]`` is ``Annotated[int, Field(gt=0)]``)."""
    if get_origin(tp) is not _Annotated:
        return tp
    kept = tuple(meta for meta in tp.__metadata__ if not isinstance(meta, str))
    if len(kept) == len(tp.__metadata__):
        return tp  # nothing to drop (`Email` stays `Email`)
    base = get_args(tp)[0]
    return _Annotated[(base, *kept)] if kept else base


def field_description(tp: Any) -> str | None:
    """The first string metadata of ``Annotated[T, "d"]`` (the schema description)."""
    if get_origin(tp) is _Annotated:
        for meta in tp.__metadata__:
            if isinstance(meta, str):
                return meta
    return None


# ----------------------------------------------------------------------------- validators


def _accept(_v: Any) -> bool:
    return True


def _is_str(v: Any) -> bool:
    return type(v) is str or isinstance(v, str)


def _is_int(v: Any) -> bool:
    return type(v) is int or (isinstance(v, int) and not isinstance(v, bool))


def _is_float(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_none(v: Any) -> bool:
    return v is None


def _is_date(v: Any) -> bool:
    return isinstance(v, _dt.date) and not isinstance(v, _dt.datetime)


_SIMPLE: dict[Any, Checker] = {
    Any: _accept,
    object: _accept,
    str: _is_str,
    int: _is_int,
    float: _is_float,
    bool: _is_bool,
    None: _is_none,
    type(None): _is_none,
    _dt.date: _is_date,
    re.Pattern: lambda v: isinstance(v, re.Pattern),
}


def _pydantic_checker(tp: Any) -> Checker:
    from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

    try:
        adapter = TypeAdapter(tp)
    except Exception as exc:
        # pydantic's advice on its schema error (`arbitrary_types_allowed` in a model_config,
        # `__get_pydantic_core_schema__`) is for code building models, not for a Kedi user
        reason = (
            "not a type pydantic can validate"
            if isinstance(exc, PydanticSchemaGenerationError)
            else exception_text(exc)
        )
        error = KediTypeExecutionError(f"unsupported type {describe_type(tp)}: {reason}")
        error.at_call = True  # located by the statement that uses the type
        raise error from exc

    def checker(v: Any) -> bool:
        try:
            adapter.validate_python(v, strict=True)
        except ValidationError:
            return False
        return True

    return checker


def _instance(cls: type) -> Checker:
    return lambda v: isinstance(v, cls)


def _homogeneous(container: Any, item: Checker) -> Checker:
    def checker(v: Any) -> bool:
        if not isinstance(v, container):
            return False
        return all(item(x) for x in v)

    return checker


def _build(tp: Any) -> Checker:
    simple = _SIMPLE.get(tp) if _hashable(tp) else None
    if simple is not None:
        return simple
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is _Annotated:
        base = _build(args[0])
        if EMAIL in tp.__metadata__:
            return lambda v: base(v) and bool(EMAIL_RE.match(v))
        constraints = tuple(m for m in tp.__metadata__ if not isinstance(m, str))
        if constraints:  # pydantic's own: `Field(gt=0)`, `annotated_types.MaxLen`, validators
            valid = _pydantic_checker(_Annotated[(args[0], *constraints)])
            return lambda v: base(v) and valid(v)
        return base
    if origin in (Union, types.UnionType):
        options = tuple(_build(a) for a in args)
        return lambda v: any(opt(v) for opt in options)
    if origin is Literal:
        allowed = tuple(args)
        return lambda v: any(type(v) is type(a) and v == a for a in allowed)
    if origin in (list, collections.abc.Sequence, collections.abc.MutableSequence):
        if origin is not list:
            return _pydantic_checker(tp)
        return _homogeneous(list, _build(args[0]) if args else _accept)
    if origin in (set, frozenset):
        return _homogeneous(origin, _build(args[0]) if args else _accept)
    if origin is dict:
        key = _build(args[0]) if args else _accept
        val = _build(args[1]) if len(args) > 1 else _accept
        return lambda v: isinstance(v, dict) and all(key(k) and val(x) for k, x in v.items())
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _homogeneous(tuple, _build(args[0]))
        if args == ((),):
            return lambda v: isinstance(v, tuple) and len(v) == 0
        items = tuple(_build(a) for a in args)
        return lambda v: (
            isinstance(v, tuple)
            and len(v) == len(items)
            and all(c(x) for c, x in zip(items, v, strict=False))
        )
    if origin is type:
        return lambda v: isinstance(v, type)
    if origin is not None:
        return _pydantic_checker(tp)
    if isinstance(tp, type):
        if is_url_type(tp):
            return _pydantic_checker(tp)
        if issubclass(tp, (list, dict, set, frozenset, tuple, bytes)) or is_kedi_type(tp):
            return _instance(tp)
        if tp.__module__ in ("builtins", "datetime") or hasattr(tp, "model_fields"):
            return _instance(tp)
        return _instance(tp)
    return _pydantic_checker(tp)


def _hashable(tp: Any) -> bool:
    try:
        hash(tp)
    except TypeError:
        return False
    return True


#: Strict checkers by (hashable) type. Owner: this module (`validator_for`).
CHECKERS: ProcessCache[Any, Checker] = ProcessCache("type checkers", "pytest_kedi.runtime.types")


def validator_for(tp: Any) -> Checker:
    """A cached strict checker for ``tp`` (``checker(value) -> bool``)."""
    if _hashable(tp):
        found = CHECKERS.get(tp)
        if found is None:
            found = CHECKERS[tp] = _build(tp)
        return found
    return _build(tp)


def check(value: Any, tp: Any) -> bool:
    return validator_for(tp)(value)
