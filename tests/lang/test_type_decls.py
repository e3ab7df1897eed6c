"""A ``~Type`` declaration's static checks (docs/language.md#custom-types): a name that is a
built-in type name, and a field starting with ``_``, are located parse errors."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import parse
from pytest_kedi.lang.typedecls import BUILTIN_TYPE_NAMES
from pytest_kedi.runtime.typenames import TYPE_BUILTINS

from .conftest import error_of


@pytest.mark.parametrize(
    ("source", "line", "column", "message"),
    [
        # it was `parameter 'x' of f expects str, got str(a=1) (str)` at the first call
        ("~str(a: int)\n@f(x: str) -> int:\n  = `x.a`\n", 1, 2, "cannot be named 'str'"),
        ("~list(a: int)\n", 1, 2, "a custom type cannot be named 'list'"),
        ("@f() -> int:\n  ~Email(a: int)\n  = `1`\n", 2, 4, "cannot be named 'Email'"),
        ("~HttpUrl(a: int)\n", 1, 2, "a custom type cannot be named 'HttpUrl'"),
        # it was pydantic's "Fields must not use names with leading underscores; e.g., use
        # 'b' instead of '_b'." at the declaration's line, when it ran
        ("~T(a: int, _b: int)\n", 1, 12, "field '_b' of T: a custom type's field cannot start"),
        ("~T(\n  a: int,\n  __b: str = `''`\n)\n", 3, 3, "field '__b' of T: a custom type's"),
        ("@f() -> int:\n  ~T(_: int)\n  = `1`\n", 2, 6, "field '_' of T: a custom type's"),
    ],
)
def test_a_type_declaration_error_is_located(
    source: str, line: int, column: int, message: str
) -> None:
    diag = error_of(source)
    assert message in diag.message, diag.message
    assert (diag.line, diag.column) == (line, column)
    assert diag.source_line == source.splitlines()[line - 1]


def test_the_messages_say_why() -> None:
    assert error_of("~str(a: int)\n").message == (
        "a custom type cannot be named 'str': it is a built-in type name, and a direct "
        "annotation 'str' always means the built-in type; choose another name"
    )
    assert error_of("~T(_b: int)\n").message == (
        "field '_b' of T: a custom type's field cannot start with '_' (pydantic keeps such "
        "names for private attributes, not fields); rename it ('b', say)"
    )


def test_the_built_in_names_are_the_runtime_s() -> None:
    assert set(TYPE_BUILTINS) == BUILTIN_TYPE_NAMES


def test_other_names_still_work() -> None:
    parse("~Path(a: int, b_: int, c__d: int)\n~Item(a: int)\n", "t.kedi")
