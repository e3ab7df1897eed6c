"""Type environment and strict validation (docs/language.md#custom-types, docs/language.md#types,
docs/language.md#strict-validation)."""

from __future__ import annotations

import datetime as dt
import re
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from pytest_kedi.runtime.errors import KediTypeExecutionError
from pytest_kedi.runtime.typeresolve import resolve_type_source
from pytest_kedi.runtime.types import TYPE_BUILTINS, check


def _resolve(source: str, **scope: Any) -> Any:
    def lookup(name: str) -> Any:
        if name in scope:
            return scope[name]
        raise KeyError(name)

    return resolve_type_source(source, lookup)


@pytest.mark.parametrize(
    ("annotation", "value", "ok"),
    [
        ("int", 5, True),
        ("int", "5", False),
        ("int", True, False),
        ("bool", 1, False),
        ("bool", False, True),
        ("float", 2, True),
        ("float", 2.5, True),
        ("float", "2.5", False),
        ("str", 3, False),
        ("bytes", b"x", True),
        ("list[str]", ["a"], True),
        ("list[str]", ("a",), False),
        ("list[int]", [1, "2"], False),
        ("dict[str, int]", {"a": 1}, True),
        ("dict[str, int]", {"a": "1"}, False),
        ("tuple[int, str]", (1, "a"), True),
        ("tuple[int, ...]", (1, 2, 3), True),
        ("set[int]", {1}, True),
        ("str | None", None, True),
        ("Optional[int]", None, True),
        ("Union[int, str]", "x", True),
        ('Literal["a", "b"]', "a", True),
        ('Literal["a", "b"]', "c", False),
        ("Literal[1]", True, False),
        ('Annotated[int, "a count"]', 3, True),
        ("Annotated[int]", 3, True),
        ("Any", object(), True),
        ("object", 1, True),
        ("date", dt.date(2024, 1, 1), True),
        ("date", "2024-01-01", False),
        ("datetime", dt.datetime(2024, 1, 1), True),
        ("time", dt.time(1), True),
        ("timedelta", dt.timedelta(1), True),
        ("Regex", re.compile("a"), True),
        ("Email", "ada@example.com", True),
        ("Email", "not-an-email", False),
        ("HttpUrl", "https://example.com", True),
    ],
)
def test_strict_validation_table(annotation: str, value: Any, ok: bool) -> None:
    assert check(value, _resolve(annotation)) is ok


def test_unknown_type_is_an_error_never_str() -> None:
    with pytest.raises(KediTypeExecutionError, match="unknown type 'Mystery'"):
        _resolve("list[Mystery]")


def test_non_type_name_is_an_error() -> None:
    with pytest.raises(KediTypeExecutionError, match="not a type"):
        _resolve("thing", thing="a string")


def test_custom_type_resolves_from_scope() -> None:
    class Point(BaseModel):
        x: int

    tp = _resolve("list[Point]", Point=Point)
    assert check([Point(x=1)], tp)
    assert not check([{"x": 1}], tp)


def test_custom_types_positional_keyword_and_defaults(run):
    src = """
    ~Shipment(
      sku: str,
      qty: int,
      note,
      tags: list[str] = `[]`
    )
    [a: Shipment] = `Shipment("A1", 2, "n")`
    [b: Shipment] = `Shipment(sku="B2", qty=1, note="m")`
    [c: Shipment] = `Shipment("C3", 3, note="o", tags=["x"])`
    `a.tags.append("mutated")`
    = `(a.tags, b.tags, c.tags, a.qty, b.sku)`
    """
    assert run(src) == (["mutated"], [], ["x"], 2, "B2")


def test_custom_type_construction_is_strict(run):
    src = """
    ~Shipment(sku: str, qty: int)
    = `Shipment("A1", "2")`
    """
    with pytest.raises(KediTypeExecutionError, match=r"Shipment\.qty expects int, got '2'"):
        run(src)


def test_dict_never_satisfies_custom_type(run):
    src = """
    ~Point(x: int)
    [p: Point] = `{"x": 1}`
    """
    with pytest.raises(KediTypeExecutionError, match="expects Point, got"):
        run(src)


def test_custom_type_pydantic_api_works(run):
    src = """
    ~Point(x: int, label: Annotated[str, "what it is"] = `"p"`)
    [label: dict] = `Point.model_json_schema()["properties"]["label"]`
    = `(Point.model_validate({"x": 4}).x, Point(1).model_dump(), label["description"])`
    """
    assert run(src) == (4, {"x": 1, "label": "p"}, "what it is")


def test_type_must_be_declared_before_use(run):
    src = """
    [p: Later] = `None`
    ~Later(x: int)
    """
    with pytest.raises(KediTypeExecutionError, match="unknown type 'Later'"):
        run(src)


def test_backtick_annotation_evaluates_in_python_namespace(run):
    src = """
    ```
    from typing import List
    ```
    [xs: `List[int]`] = `[1, 2]`
    = `xs`
    """
    assert run(src) == [1, 2]


def test_violation_names_location_expected_type_and_value(run):
    with pytest.raises(KediTypeExecutionError) as info:
        run("[a] = x\n[n: list[int]] = `[1, 'two']`\n")
    message = info.value.message
    assert "prog.kedi:2" in message
    assert "list[int]" in message
    assert "[1, 'two']" in message


def test_strict_float_binds_original_object(run):
    src = """
    [n: float] = `3`
    = `type(n).__name__`
    """
    assert run(src) == "int"


def test_a_url_given_as_text_to_a_custom_types_url_field_is_a_url(run):
    """The field held the text, and every `model_dump` drew pydantic's serializer warning
    (`Expected HttpUrl but got str`, pointing into pydantic): an error under `-W error`."""
    src = """
    ~Site(home: HttpUrl, files: FileUrl | None = `None`)
    [s: Site] = `Site("https://x.com", files="file:///tmp/a")`
    [u: HttpUrl] = `"https://y.org"`
    = `(type(s.home).__name__, s.model_dump_json(), type(u).__name__)`
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kind, dumped, bound = run(src)
    assert kind == "HttpUrl"
    assert dumped == '{"home":"https://x.com/","files":"file:///tmp/a"}'
    assert bound == "str"  # a binding keeps the object it was given


def test_aliasing_is_preserved(run):
    src = """
    [xs: list[int]] = `[1]`
    @add(items: list[int]) -> list[int]:
      `items.append(2)`
      = `items`
    [ys: list[int]] = <add(<xs>)>
    = `(xs is ys, xs)`
    """
    assert run(src) == (True, [1, 2])


@given(st.integers())
def test_ints_are_ints_and_their_text_never_is(value: int) -> None:
    assert check(value, int)
    assert not check(str(value), int)
    assert check(value, float)
    assert not check(bool(value), int)


@given(st.lists(st.integers()))
def test_lists_are_not_tuples(values: list[int]) -> None:
    assert check(values, list[int])
    assert not check(tuple(values), list[int])
    assert check(tuple(values), tuple[int, ...])


@pytest.mark.parametrize("name", sorted(TYPE_BUILTINS))
def test_a_builtin_type_name_resolves_as_the_full_annotation_path_resolves_it(name: str) -> None:
    """A bare built-in name takes a shortcut; it agrees with the parsed form of the same
    annotation (parenthesised, which only the full path accepts) and ignores the scope."""
    shadow = {name: "shadowed"}  # built-in names come before names in scope
    assert _resolve(f" {name} ", **shadow) is _resolve(f"({name})", **shadow)
    assert _resolve(name) is TYPE_BUILTINS[name]


def test_python_warnings_about_an_annotation_name_its_kedi_line() -> None:
    import typing
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tp = resolve_type_source('Literal["a\\d"]', _no_names, ("t.kedi", 7))
    assert tp == typing.Literal["a\\d"]
    assert [(w.filename, w.lineno) for w in caught] == [("t.kedi", 7)]
    assert "invalid escape sequence" in str(caught[0].message)


def _no_names(name: str) -> Any:
    raise KeyError(name)


CONSTRAINED = """
```
from typing import Annotated
from pydantic import AfterValidator, Field

def positive(v):
    if v <= 0:
        raise ValueError("must be positive")
    return v

Gt0 = Annotated[int, Field(gt=0)]
Pos = Annotated[int, AfterValidator(positive)]
Short = Annotated[str, Field(max_length=3), "a short text"]
```

~Box(
  n: Gt0,
  e: Email = `"a@b.co"`
)

@param(n: Gt0) -> int:
  = `n`

@validated(n: Pos) -> int:
  = `n`

@returned() -> Short:
  = `"toolong"`

@assigned() -> int:
  [x: Gt0] = `-5`
  = `x`
"""


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("param(-1)", "parameter 'n' of param expects Annotated[int, Gt(gt=0)], got -1 (int)"),
        ("validated(0)", "expects Annotated[int, AfterValidator(positive)], got 0 (int)"),
        ("returned()", "expects Annotated[str, MaxLen(max_length=3)], got 'toolong' (str)"),
        ("assigned()", "assignment to 'x' expects Annotated[int, Gt(gt=0)], got -5 (int)"),
        ("Box(-1)", "Box.n expects Annotated[int, Gt(gt=0)], got -1 (int)"),
        ("Box(1, 'nope')", "Box.e expects Email, got 'nope' (str)"),
    ],
)
def test_annotated_constraints_are_checked_at_every_boundary(
    kedi: Any, call: str, message: str
) -> None:
    """``Field(gt=0)``, ``MaxLen`` and validators in ``Annotated`` were dropped: every value
    of the base type passed (and a custom type's ``Email`` field took any string)."""
    program = kedi(CONSTRAINED, mode="validate")
    assert program.procedures["param"](1) == 1 and program.procedures["returned"] is not None
    with pytest.raises(KediTypeExecutionError) as caught:
        eval(call, {**program.procedures, "Box": program.get("Box")})
    assert message in str(caught.value).splitlines()[-1]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "validated(0)",
            "expects Annotated[int, AfterValidator(positive)], got 0 (int): "
            "must be positive, got 0",
        ),
        (
            "param(-1)",
            "expects Annotated[int, Gt(gt=0)], got -1 (int): Input should be greater than 0",
        ),
        (
            "Box(-1)",
            "Box.n expects Annotated[int, Gt(gt=0)], got -1 (int): Input should be greater than 0",
        ),
        (
            "listed([1, 0])",
            "parameter 'ns' of listed expects "
            "list[Annotated[int, AfterValidator(positive)]], got [1, 0] (list): "
            "item 1: must be positive, got 0",
        ),
        (
            "keyed({'a': 0})",
            "parameter 'ns' of keyed expects "
            "dict[str, Annotated[int, AfterValidator(positive)]], got {'a': 0} (dict): "
            "key 'a': must be positive, got 0",
        ),
    ],
)
def test_a_rejected_value_keeps_the_validators_reason(kedi: Any, call: str, message: str) -> None:
    """A validator's own message (``must be positive, got 0``) was lost: the failure said
    only ``expects Annotated[int, AfterValidator(positive)], got 0``."""
    source = CONSTRAINED.replace('"must be positive"', 'f"must be positive, got {v}"') + (
        "\n@listed(ns: list[Pos]) -> int:\n  = `len(ns)`\n"
        "\n@keyed(ns: dict[str, Pos]) -> int:\n  = `len(ns)`\n"
    )
    program = kedi(source, mode="validate")
    with pytest.raises(KediTypeExecutionError) as caught:
        eval(call, {**program.procedures, "Box": program.get("Box")})
    assert str(caught.value).splitlines()[-1].endswith(message)


def test_a_custom_types_schema_keeps_constraints_and_descriptions(kedi: Any) -> None:
    program = kedi(CONSTRAINED, mode="validate")
    schema = program.get("Box").model_json_schema()["properties"]
    assert schema["n"]["exclusiveMinimum"] == 0
    assert schema["e"]["format"] == "email"


def test_pydantic_types_are_made_when_first_named() -> None:
    """Checking plain types does not import pydantic (about 0.13 s of CPU a process); naming
    ``Email``, ``HttpUrl`` or ``FileUrl`` does, and they check as before."""
    import subprocess
    import sys

    script = """
import sys
from pytest_kedi.runtime.typeresolve import resolve_type_source
from pytest_kedi.runtime.types import TYPE_BUILTINS, check

def lookup(name):
    raise KeyError(name)

assert "Email" in TYPE_BUILTINS and len(TYPE_BUILTINS) == len(list(TYPE_BUILTINS))
assert check({"a": [1, None]}, resolve_type_source("dict[str, list[int | None]]", lookup))
print("before:", "pydantic" in sys.modules)
email = resolve_type_source("Email", lookup)
print("after:", "pydantic" in sys.modules)
print(check("ada@example.com", email), check("not an email", email))
url = resolve_type_source("HttpUrl | None", lookup)
print(check(None, url), check("not a url", url))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == [
        "before: False",
        "after: True",
        "True False",
    ]
    assert done.stdout.split("\n")[3] == "True False"


def test_a_class_without_a_module_is_a_type(run) -> None:
    """A parameter typed with a class whose ``__module__`` user code set to ``None`` stopped
    the program with an internal ``AttributeError`` (``'NoneType' ... 'startswith'``)."""
    source = """
    ```
    class Thing:
        pass
    Thing.__module__ = None
    ```

    @same(x: Thing) -> Thing:
      = `x`

    [y: Thing] = `same(Thing())`
    = `type(y).__name__`
    """
    assert run(source) == "Thing"


UNPRINTABLE = """
```
from typing import Literal
class Unprintable:
    def __repr__(self):
        raise ValueError("no repr")
odd = Unprintable()
```
"""


def test_an_annotation_object_without_a_repr_is_an_unsupported_type(kedi) -> None:
    """A backtick annotation naming an object whose ``__repr__`` raised stopped the load
    with that ``ValueError`` (``pytest-kedi internal error``), not a located type error."""
    source = UNPRINTABLE + "\n@p(x: `odd`) -> int:\n  = `1`\n"
    with pytest.raises(KediTypeExecutionError) as caught:
        kedi(source, mode="validate")
    assert "unsupported type <unrepresentable Unprintable: ValueError>" in str(caught.value)
    assert 'prog.kedi", line 9, in <program>' in str(caught.value)


@pytest.mark.parametrize(
    "source",
    [
        "@f(x: `3`) -> int:\n  = `1`\n= <f(`1`)>\n",
        "@f() -> `list[3]`:\n  = `1`\n= <f()>\n",
        "[x: `3`] = `1`\n",
        ">> hi [x: `3`]\n",
        "~V(a: `3`)\n",
    ],
    ids=["parameter", "return", "assignment", "output_field", "type_field"],
)
def test_an_annotation_that_is_no_type_is_located_without_pydantic_s_advice(
    run, source: str
) -> None:
    """The message was pydantic's, advising `arbitrary_types_allowed=True` in a model_config
    and `__get_pydantic_core_schema__` over five lines, and (but for a type's field) named
    no `.kedi` line."""
    with pytest.raises(KediTypeExecutionError) as info:
        run(source)
    message = info.value.message
    assert re.match(r".*prog\.kedi:1: ", message)
    assert message.endswith("unsupported type 3: not a type pydantic can validate")
    assert "arbitrary_types_allowed" not in str(info.value)


def test_a_literal_of_an_object_without_a_repr_describes_it(kedi) -> None:
    """A rejected argument of ``Literal[odd]`` raised the object's own ``ValueError`` while
    the error message was being written."""
    source = UNPRINTABLE + "\n@p(x: `Literal[odd]`) -> int:\n  = `1`\n"
    program = kedi(source, mode="validate")
    with pytest.raises(KediTypeExecutionError) as caught:
        program.procedures["p"](2)
    assert "expects Literal[<unrepresentable Unprintable: ValueError>], got 2 (int)" in str(
        caught.value
    )


@pytest.mark.parametrize("name", ["self", "args", "kwargs", "cls"])
def test_a_field_may_have_any_identifier_as_its_name(run, name: str) -> None:
    """`~T(self: int)` then `T(self=2)` raised `TypeError: KediModel.__init__() got multiple
    values for argument 'self'`, naming pytest-kedi's internal class."""
    src = f"""
    ~T({name}: int, other: str = `"o"`)
    = `(T({name}=2).{name}, T(3).{name}, T(other="x", {name}=4).model_dump())`
    """
    assert run(src) == (2, 3, {name: 4, "other": "x"})


def test_a_field_shadowing_basemodel_warns_at_its_kedi_line_once(kedi) -> None:
    """`~T(json: int)` worked but warned at pydantic's own source (`pydantic/main.py:1937`,
    showing `return meta(`), at every declaration; `model_dumpling` warned there too."""
    import warnings

    src = """
    @mk() -> int:
      ~T(
        a: int,
        json: int = `2`,
        model_dumpling: int = `3`
      )
      = `T(1).json + T(1).model_dumpling + len(T(1).model_dump())`
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        program = kedi(src, mode="validate")
        assert [program.procedures["mk"]() for _ in range(3)] == [8, 8, 8]
    assert [(str(w.message), w.lineno, w.filename.endswith("prog.kedi")) for w in caught] == [
        ('field "json" of T shadows an attribute of pydantic.BaseModel', 4, True)
    ]


@pytest.mark.parametrize("field", ["model_dump", "model_config", "model_validate_json"])
def test_a_field_named_like_a_basemodel_method_is_a_located_error(run, field: str) -> None:
    """`model_dump` gave pydantic's message with a function address and no `.kedi` line;
    `model_config` gave `'FieldInfo' object is not iterable`."""
    src = f"""
    [a] = x
    ~T(a: int, {field}: int)
    """
    with pytest.raises(KediTypeExecutionError) as info:
        run(src)
    reserved = f"cannot build type T: field '{field}' is a name pydantic's BaseModel reserves"
    assert info.value.message.endswith(f"prog.kedi:2: {reserved}")


def test_a_field_annotation_that_is_no_type_fails_at_the_declaration(run) -> None:
    """`~V(a: `3`)` was declared (with pydantic's `ArbitraryTypeWarning` at its own source)
    and failed only when `V(...)` was first called."""
    src = """
    ~V(a: int, b: `list[3]`)
    = `V(1, [2])`
    """
    with pytest.raises(KediTypeExecutionError) as info:
        run(src)
    assert "prog.kedi:1: field 'b' of V: unsupported type 3" in info.value.message
