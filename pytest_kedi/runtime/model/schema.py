"""Output schemas: Kedi output fields -> the pydantic model used as `output_type`
(docs/language.md#model-calls)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_ai.tools import GenerateToolJsonSchema

from pytest_kedi.errors import ModelError
from pytest_kedi.runtime.caches import ProcessCache
from pytest_kedi.runtime.pymodule import without_digests
from pytest_kedi.text import one_line

__all__ = [
    "OutputSchemaError",
    "OutputSpec",
    "StableToolJsonSchema",
    "build_output_model",
    "field_names",
    "normalize_schema",
    "shadows_base_model",
]

#: One output field: its type and optional description.
OutputSpec = tuple[Any, str | None]
SchemaKey = tuple[tuple[str, Any, str | None], ...]

_CONFIG = ConfigDict(protected_namespaces=(), arbitrary_types_allowed=False)
_BASE_ATTRS = frozenset(dir(BaseModel))
#: Output models by schema. Owner: this module (`build_output_model`).
OUTPUT_MODELS: ProcessCache[SchemaKey, type[BaseModel]] = ProcessCache(
    "output models", "pytest_kedi.runtime.model.schema"
)


class OutputSchemaError(ModelError):
    """A template's output schema cannot be built (a field type pydantic has no schema or
    no JSON schema for): no request was sent."""


class StableToolJsonSchema(GenerateToolJsonSchema):
    """pydantic-ai's tool schema generator, whose definition names (two classes of one name
    in a schema are told apart by their module) are alike on every machine: a module of a
    file's Python is named without its digest of the file's path (`without_digests`)."""

    def normalize_name(self, name: str) -> str:
        return super().normalize_name(without_digests(name))


def schema_error(error: BaseException) -> OutputSchemaError:
    return OutputSchemaError(
        f"cannot build the output schema: {type(error).__name__}: {one_line(error)}"
    )


def _description_of(tp: Any) -> str | None:
    if get_origin(tp) is Annotated:
        for meta in get_args(tp)[1:]:
            if isinstance(meta, str):
                return meta
    return None


def normalize_schema(schema: Mapping[str, Any]) -> SchemaKey:
    """Accept ``{name: type}`` or ``{name: (type, description)}``; return a hashable key."""
    items: list[tuple[str, Any, str | None]] = []
    for name, spec in schema.items():
        pair = isinstance(spec, tuple) and len(spec) == 2
        if pair and (spec[1] is None or isinstance(spec[1], str)):
            tp, description = spec
        else:
            tp, description = spec, None
        if description is None:
            description = _description_of(tp)
        items.append((name, tp, description))
    return tuple(items)


def shadows_base_model(name: str) -> bool:
    """An output field named ``name`` shadows an attribute of pydantic's ``BaseModel``
    (``json``, ``copy``): it still works (every field is aliased), but only warns
    (docs/language.md#model-calls; the runtime warns at the field's `.kedi` line)."""
    return name in _BASE_ATTRS


def field_names(key: SchemaKey) -> tuple[str, ...]:
    return tuple(name for name, _, _ in key)


def _create(key: SchemaKey) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for index, (name, tp, description) in enumerate(key):
        # Every field gets a safe attribute name and the Kedi name as alias, so names
        # pydantic cannot take directly (``_x``, ``model_config``) still work.
        # (no description: one that pydantic's own `Field(description=...)` in the type
        # gives is kept, which an explicit ``description=None`` would override)
        described: dict[str, Any] = {} if description is None else {"description": description}
        fields[_attribute(index)] = (tp, Field(alias=name, **described))
    try:
        return create_model("KediOutput", __config__=_CONFIG, **fields)
    except Exception as error:
        raise schema_error(error) from error


def build_output_model(key: SchemaKey) -> type[BaseModel]:
    """The cached ``KediOutput`` model for ``key`` (built once per distinct schema)."""
    try:
        hash(key)
    except TypeError:  # an unhashable type inside the schema: build without caching
        return _create(key)
    return OUTPUT_MODELS.get_or_build(key, _create)


def read_output(output: BaseModel, key: SchemaKey) -> dict[str, Any]:
    """``{name: value}`` for every requested field, in schema order."""
    values = output.__dict__  # a model's field values, by attribute name
    return {name: values[_attribute(index)] for index, (name, _, _) in enumerate(key)}


def output_fields(key: SchemaKey) -> tuple[tuple[str, str], ...]:
    """Each requested field's name and its attribute on the output model (`read_output`
    reads them)."""
    return tuple((name, _attribute(index)) for index, (name, _, _) in enumerate(key))


def _attribute(index: int) -> str:
    """The attribute name of output field ``index`` (see `_create`)."""
    return _ATTRIBUTES[index] if index < len(_ATTRIBUTES) else f"kedi_field_{index}"


_ATTRIBUTES = tuple(f"kedi_field_{index}" for index in range(32))


#: pydantic error contexts of a validator (``error``) or a constraint (`Field(gt=0)`,
#: `max_length`, `pattern`, ...): their message is the reason; a type mismatch has none.
_CONSTRAINT_KEYS = frozenset(
    {
        "error",
        "gt",
        "ge",
        "lt",
        "le",
        "multiple_of",
        "min_length",
        "max_length",
        "pattern",
        "max_digits",
        "decimal_places",
        "whole_digits",
    }
)


def describe_output_error(error: BaseException, key: SchemaKey) -> str:
    """The invalid output fields behind a failed structured call (pydantic-ai gives up
    after its output retries and chains the last ``ValidationError``), or ``""``.

    Each entry names the field, its expected type and the value the model gave.
    """
    from pytest_kedi.runtime.types import describe_type, describe_value, error_reason

    cause = error.__cause__
    if not isinstance(cause, ValidationError):
        return ""
    types_ = {name: tp for name, tp, _ in key}
    parts: list[str] = []
    for item in cause.errors():
        loc = item.get("loc", ())
        if not loc:  # the answer as a whole: not JSON, or not an object
            parts.append(f"the answer is invalid: {item.get('msg', '')}")
            continue
        name = str(loc[0])
        if name not in types_:
            continue
        expected = describe_type(types_[name])
        if item.get("type") == "missing" and len(loc) == 1:
            parts.append(f"output field '{name}' ({expected}) is missing")
            continue
        got = describe_value(item.get("input"))
        if len(loc) > 1:  # a value inside the field: named by its path, with its own type
            path = _path(loc)
            inner = _inner_type(types_[name], loc[1:])
            shown = "" if inner is None else f" ({describe_type(inner)})"
            if item.get("type") == "missing":
                parts.append(f"output field '{name}' ({expected}): {path}{shown} is missing")
                continue
            text = f"output field '{name}' ({expected}): {path}"
            text += f" expects {describe_type(inner)}, got {got}" if inner else f" got {got}"
            if inner is None or _CONSTRAINT_KEYS & set(item.get("ctx") or {}):
                text += f": {error_reason(item)}"
            parts.append(text)
            continue
        text = f"output field '{name}' expects {expected}, got {got}"
        if _CONSTRAINT_KEYS & set(item.get("ctx") or {}):
            # a validator's or a constraint's own reason, as at every other boundary
            # (docs/language.md#types): `...: Input should be greater than 0`
            text += f": {error_reason(item)}"
        parts.append(text)
    return "; ".join(dict.fromkeys(parts))


def _path(loc: tuple[Any, ...]) -> str:
    """pydantic's ``loc`` as Python spells the access: ``order.items[2].price``."""
    out = str(loc[0])
    for part in loc[1:]:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _inner_type(tp: Any, loc: tuple[Any, ...]) -> Any:
    """The type a value at ``loc`` inside a value of ``tp`` was checked against, or None
    when the path goes through what this does not follow (a union's member tag)."""
    for part in loc:
        while get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        origin, args = get_origin(tp), get_args(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
            field = tp.model_fields.get(part)
            if field is None:
                return None
            tp = field.annotation
        elif origin in (list, set, frozenset) and len(args) == 1 and isinstance(part, int):
            tp = args[0]
        elif origin is tuple and args and isinstance(part, int):
            tp = args[0] if len(args) == 2 and args[1] is Ellipsis else args[part]
        elif origin is dict and len(args) == 2:
            tp = args[1]
        else:
            return None
    return tp
