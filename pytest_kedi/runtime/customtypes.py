"""Custom ``~Types`` as pydantic models (docs/language.md#custom-types): positional and keyword
construction,
strict field checks, per-instance deep copies of mutable defaults."""

from __future__ import annotations

import contextlib
import copy
import functools
import re
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from pytest_kedi.errors import KediTypeExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.kediwarnings import python_module, warn_at
from pytest_kedi.runtime.scope import MISSING
from pytest_kedi.runtime.typenames import is_url_type
from pytest_kedi.runtime.types import (
    expectation,
    field_description,
    validator_for,
    without_descriptions,
)

__all__ = ["KediModel", "make_custom_type", "shadow_warner"]

_IMMUTABLE = (str, int, float, bool, bytes, type(None), frozenset)
_PROTECTED = re.compile("model_(?:dump|validate)")
#: pydantic's warning about a field named after an attribute of the base (``json``).
_SHADOWS = r'Field name "\w+" in "[^"]*" shadows an attribute in parent'
#: (path, line, field) of the shadowing warnings given: once per location (filters that
#: `make_custom_type` sets clear Python's registries of warnings given).
_WARNED: set[tuple[str, int, str]] = set()


def _is_immutable(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)


def _call_error(message: str) -> KediTypeExecutionError:
    """A custom type's constructor called wrongly: located at the call (`at_call`)."""
    error = KediTypeExecutionError(message)
    error.at_call = True
    return error


class KediModel(BaseModel):
    """Base class of every custom Kedi type."""

    # pydantic protects the `model_dump*`/`model_validate*` prefixes, warning (at its own
    # source) of any field starting so (`model_dumpling`), which works; only the names of
    # its methods stay errors.
    model_config = ConfigDict(
        arbitrary_types_allowed=True,
        protected_namespaces=(
            re.compile("(?:" + "|".join(n for n in dir(BaseModel) if _PROTECTED.match(n)) + ")$"),
        ),
    )

    __kedi_type__: ClassVar[bool] = True
    __kedi_fields__: ClassVar[tuple[str, ...]] = ()
    __kedi_types__: ClassVar[dict[str, Any]] = {}
    __kedi_required__: ClassVar[frozenset[str]] = frozenset()

    # `self` is positional-only: a field may be named `self` (``T(self=1)``).
    def __init__(self, /, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        names = cls.__kedi_fields__
        if len(args) > len(names):
            raise _call_error(
                f"{cls.__name__}() takes at most {len(names)} positional argument(s) "
                f"but {len(args)} were given"
            )
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise _call_error(f"{cls.__name__}() got multiple values for field {name!r}")
            kwargs[name] = value
        for name, value in kwargs.items():
            tp = cls.__kedi_types__.get(name, MISSING)
            if tp is MISSING:
                raise _call_error(f"{cls.__name__}() got an unexpected field {name!r}")
            if not validator_for(tp)(value):
                raise _call_error(f"{cls.__name__}.{name} expects {expectation(tp, value)}")
        missing = [n for n in names if n in cls.__kedi_required__ and n not in kwargs]
        if missing:
            raise _call_error(f"{cls.__name__}() missing required field(s): {', '.join(missing)}")
        super().__init__(**kwargs)
        # Bind the original objects (strict checks passed; pydantic may have copied). A URL
        # given as text stays pydantic's URL object, the field's type: as text it drew
        # pydantic's serializer warning at every `model_dump` (docs/language.md#custom-types).
        fields = self.__dict__
        for name, value in kwargs.items():
            if not (isinstance(value, str) and is_url_type(type(fields[name]))):
                fields[name] = value

    # Pydantic validation (model outputs, ``model_validate``) must not route through
    # the positional/strict constructor above; only direct construction does.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


def make_custom_type(
    name: str,
    fields: list[tuple[str, Any, Any]],
    module: str = "kedi",
    shadowing: Callable[[str], None] | None = None,
) -> type[KediModel]:
    """``fields``: ``(name, annotation, default or MISSING)`` in declaration order.
    ``module``: the class's ``__module__``, ``kedi:<file name>`` for a `.kedi` file's type
    (never its path: two types of one name in an output schema are told apart by it in the
    JSON schema a model is sent, which must be alike on every machine).
    ``shadowing(field)`` is called for a field named after an attribute of pydantic's
    ``BaseModel`` (``json``), which works; pydantic's own warning would name its source."""
    definitions: dict[str, Any] = {}
    types_: dict[str, Any] = {}
    required: set[str] = set()
    for field_name, annotation, default in fields:
        base = without_descriptions(annotation)  # constraints (`Field(gt=0)`) kept
        try:  # an annotation that is no type fails here, not at the first construction
            validator_for(base)
        except KediTypeExecutionError as exc:
            raise _call_error(f"field {field_name!r} of {name}: {exc.message}") from exc
        description = field_description(annotation)
        # without one, a `Field(description=...)` inside the type stays (an explicit
        # ``description=None`` would override it)
        described: dict[str, Any] = {} if description is None else {"description": description}
        types_[field_name] = base
        if default is MISSING:
            required.add(field_name)
            info = Field(**described)
        elif _is_immutable(default):
            info = Field(default=default, **described)
        else:
            info = Field(default_factory=functools.partial(copy.deepcopy, default), **described)
        definitions[field_name] = (base, info)
    # pydantic warns (naming its own source) of a field named after an attribute of the
    # base (``json``); the field works, and `shadowing` warns at its `.kedi` line instead.
    shadowed = [f[0] for f in fields if hasattr(KediModel, f[0])]
    for field_name in shadowed:
        if field_name == "model_config" or _PROTECTED.match(field_name):
            raise _call_error(
                f"cannot build type {name}: field {field_name!r} is a name pydantic's "
                "BaseModel reserves"
            )
    try:
        with warnings.catch_warnings() if shadowed else contextlib.nullcontext():
            if shadowed:
                warnings.filterwarnings("ignore", _SHADOWS, UserWarning)
            model: type[KediModel] = create_model(
                name, __base__=KediModel, __module__=module, **definitions
            )
    except Exception as exc:  # e.g. an unsupported type
        raise _call_error(f"cannot build type {name}: {exc}") from exc
    if shadowing is not None:
        for field_name in shadowed:
            shadowing(field_name)
    model.__kedi_fields__ = tuple(f[0] for f in fields)
    model.__kedi_types__ = types_
    model.__kedi_required__ = frozenset(required)
    return model


def shadow_warner(stmt: nodes.TypeDecl, prelude: dict[str, Any]) -> Callable[[str], None]:
    """Warns, at a field's `.kedi` line, that it shadows an attribute of pydantic's
    ``BaseModel`` (``~T(json: int)``): as for output fields (docs/language.md#model-calls),
    once per location, as a warning of the file's Python (``prelude``: its globals)."""
    spans = {field.name: field.span for field in stmt.fields}
    module, registry = python_module(prelude)

    def warn(field: str) -> None:
        key = (spans[field].path, spans[field].start_line, field)
        if key in _WARNED:
            return
        _WARNED.add(key)
        warn_at(
            f'field "{field}" of {stmt.name} shadows an attribute of pydantic.BaseModel',
            spans[field].path,
            spans[field].start_line,
            module,
            registry,
        )

    return warn
