"""The built-in type names of Kedi's type environment (docs/language.md#types) and the
types they stand for; those pydantic provides (``Email``, ``HttpUrl``, ``FileUrl``) are made
on first use, so a run that names none of them does not import pydantic."""

from __future__ import annotations

import datetime as _dt
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Annotated as _Annotated
from typing import Any, Literal, Optional, Union

__all__ = ["EMAIL", "EMAIL_RE", "TYPE_BUILTINS", "Annotated", "is_url_type"]

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class _EmailFormat:
    """Annotated marker for the ``Email`` type (no email-validator dependency)."""

    def __repr__(self) -> str:
        return "Email"


EMAIL = _EmailFormat()


def _validate_email(value: str) -> str:
    if not EMAIL_RE.match(value):
        raise ValueError(f"{value!r} is not a valid email address")
    return value


def _pydantic_types() -> dict[str, Any]:
    """The built-in types pydantic provides (``Email``, ``HttpUrl``, ``FileUrl``), made on
    first use: importing pydantic costs a process about 0.13 s of CPU, which a run whose
    annotations name none of them, and that defines no ``~Type`` and calls no model, does
    not pay."""
    from pydantic import AfterValidator, FileUrl, HttpUrl, WithJsonSchema

    email = _Annotated[
        str,
        AfterValidator(_validate_email),
        WithJsonSchema({"type": "string", "format": "email"}),
        EMAIL,
    ]
    return {"Email": email, "HttpUrl": HttpUrl, "FileUrl": FileUrl}


_PYDANTIC_TYPES = ("Email", "HttpUrl", "FileUrl")


class _KediAnnotated:
    """``Annotated[T, "desc"]``; ``Annotated[T]`` alone means ``T``
    (docs/language.md#custom-types)."""

    def __getitem__(self, params: Any) -> Any:
        if not isinstance(params, tuple):
            return params
        if len(params) == 1:
            return params[0]
        return _Annotated[params]

    def __repr__(self) -> str:
        return "Annotated"


Annotated: Any = _KediAnnotated()


class _TypeBuiltins(Mapping[str, Any]):
    """The built-in type names and their types; those pydantic provides are made when one
    of them is first looked up (`_pydantic_types`)."""

    def __init__(self, plain: dict[str, Any]) -> None:
        self._types = plain
        self._names = (*plain, *_PYDANTIC_TYPES)
        self._known = frozenset(self._names)
        self._lock = threading.Lock()  # rows on threads may name ``Email`` at once

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def __getitem__(self, name: str) -> Any:
        try:
            return self._types[name]
        except KeyError:
            if name not in self._known:
                raise
        with self._lock:
            if name not in self._types:
                self._types.update(_pydantic_types())
        return self._types[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


TYPE_BUILTINS: Mapping[str, Any] = _TypeBuiltins(
    {
        "str": str,
        "int": int,
        "float": float,
        "bool": bool,
        "bytes": bytes,
        "object": object,
        "list": list,
        "dict": dict,
        "tuple": tuple,
        "set": set,
        "frozenset": frozenset,
        "None": None,
        "Any": Any,
        "Union": Union,
        "Optional": Optional,
        "Literal": Literal,
        "Annotated": Annotated,
        "datetime": _dt.datetime,
        "date": _dt.date,
        "time": _dt.time,
        "timedelta": _dt.timedelta,
        "Regex": re.Pattern,
    }
)


def is_url_type(tp: type) -> bool:
    """Whether ``tp`` is pydantic's ``HttpUrl`` or ``FileUrl`` (a class of another package
    is not: pydantic is not imported to tell)."""
    module = getattr(tp, "__module__", None)  # user code may set any value, even None
    if not (isinstance(module, str) and module.startswith("pydantic")):
        return False
    return tp in (TYPE_BUILTINS["HttpUrl"], TYPE_BUILTINS["FileUrl"])
