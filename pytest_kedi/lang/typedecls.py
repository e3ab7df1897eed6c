"""Static checks of a ``~Type(...)`` declaration (docs/language.md#custom-types): its name
may not be a built-in type name, which a direct annotation would never reach, and its
fields may not start with ``_``, which pydantic keeps for private attributes."""

from __future__ import annotations

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.source import KediSyntaxError

__all__ = ["BUILTIN_TYPE_NAMES", "check_type_decl"]

#: The built-in type names of a direct annotation (docs/language.md#types): they resolve
#: before the Kedi types in scope. (``runtime.typenames.TYPE_BUILTINS`` maps each to its type.)
BUILTIN_TYPE_NAMES = frozenset(
    {
        "str", "int", "float", "bool", "bytes", "object", "list", "dict", "tuple", "set",
        "frozenset", "None", "Any", "Union", "Optional", "Literal", "Annotated", "datetime",
        "date", "time", "timedelta", "Regex", "Email", "HttpUrl", "FileUrl",
    }
)  # fmt: skip


def check_type_decl(name: str, name_at: int, fields: tuple[n.FieldDecl, ...]) -> None:
    """Raise the located error of a type named after a built-in type, or of a field whose
    name starts with ``_``."""
    if name in BUILTIN_TYPE_NAMES:
        raise KediSyntaxError(
            name_at,
            f"a custom type cannot be named {name!r}: it is a built-in type name, and a "
            f"direct annotation {name!r} always means the built-in type; choose another name",
        )
    for field in fields:
        if field.name.startswith("_"):
            raise KediSyntaxError(
                field.span.start_offset,
                f"field {field.name!r} of {name}: a custom type's field cannot start with '_' "
                "(pydantic keeps such names for private attributes, not fields); "
                f"rename it ({field.name.lstrip('_') or 'value'!r}, say)",
            )
