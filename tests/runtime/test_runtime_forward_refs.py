"""A string in a backtick type is Python's forward reference (docs/language.md#types): it is
evaluated in the annotation's own namespace, and an unknown name in it is the located
"unknown type" error of a direct annotation, never pydantic's `class-not-fully-defined`
advice nor a name from pytest-kedi's own modules."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_kedi.runtime.errors import KediTypeExecutionError

BOUNDARIES = {
    "assignment": ("[x: `{t}`] = `1`\n", 1),
    "parameter": ("[a] = x\n@f(x: `{t}`) -> str:\n  = ok\n= <f(`1`)>\n", 2),
    "return": ("@f() -> `{t}`:\n  = `1`\n= <f()>\n", 1),
    "output_field": ("[a] = x\n>> hi [x: `{t}`]\n", 2),
    "type_field": ("~V(a: int, b: `{t}`)\n= `V(1, 2)`\n", 1),
    "case_type": ("~V(a: `{t}` = `1`)\n", 1),
}


@pytest.mark.parametrize("where", BOUNDARIES)
@pytest.mark.parametrize(
    ("annotation", "unknown"),
    [
        ('"Nope"', "Nope"),
        ('list["Nope"]', "Nope"),
        ('Optional["Nope"]', "Nope"),
        ('dict[str, "Nope"]', "Nope"),
        ('Annotated["Nope", "d"]', "Nope"),
        ('"list[Nope]"', "Nope"),
        # names of pytest-kedi's own modules were found: "Checker" was a type
        ('"Checker"', "Checker"),
        ('"adapter"', "adapter"),
    ],
)
def test_an_unknown_name_in_a_string_is_an_unknown_type_at_the_annotation(
    run: Any, where: str, annotation: str, unknown: str
) -> None:
    """It was pydantic's `PydanticUserError: TypeAdapter[...] is not fully defined; you should
    define ... then call .rebuild()`, raised at the first value checked against the type."""
    template, line = BOUNDARIES[where]
    with pytest.raises(KediTypeExecutionError) as info:
        run(template.format(t=annotation))
    assert info.value.message.endswith(
        f"prog.kedi:{line}: unknown type {unknown!r} in annotation {annotation!r}"
    ) or info.value.message.endswith(
        f"prog.kedi:{line}: field 'b' of V: unknown type {unknown!r} in annotation {annotation!r}"
    ), info.value.message
    rendered = info.value.render()
    assert "rebuild" not in rendered and "Pydantic" not in rendered


def test_a_self_reference_by_string_fails_at_the_declaration(run: Any) -> None:
    """As `list[Node]` does: a type must be declared before it is named (it failed with
    pydantic's advice at the first construction, line 2)."""
    src = """
    ~Node(name: str, children: `list["Node"]` = `[]`)
    [n: Node] = `Node("a", [Node("b")])`
    """
    with pytest.raises(KediTypeExecutionError) as info:
        run(src)
    assert info.value.message.endswith(
        "prog.kedi:1: unknown type 'Node' in annotation 'list[\"Node\"]'"
    ), info.value.message


def test_strings_resolve_in_the_program_namespace(run: Any) -> None:
    src = """
    ```
    Checker = int
    ```
    ~P(a: int)
    [a: `"Checker"`] = `1`
    [b: `list["P"]`] = `[P(1)]`
    [c: `Optional["P"]`] = `None`
    [d: `dict[str, "list[int]"]`] = `{"k": [1]}`
    [e: `Literal["P"]`] = `"P"`
    = `(a, b, c, d, e)`
    """
    assert repr(run(src)) == "(1, [P(a=1)], None, {'k': [1]}, 'P')"


@pytest.mark.parametrize(
    ("annotation", "value"),
    [('"int"', '"1"'), ('list["int"]', '["1"]'), ('Optional["int"]', "1.5")],
)
def test_a_resolved_string_is_checked_strictly(run: Any, annotation: str, value: str) -> None:
    with pytest.raises(KediTypeExecutionError, match="assignment to 'x' expects"):
        run(f"[x: `{annotation}`] = `{value}`\n")


def test_a_string_output_field_type_reaches_the_schema(kedi: Any) -> None:
    program = kedi('~P(a: int)\n>> give [x: `list["P"]`] [y: `"int"`]\n= `(x, y)`\n')
    assert repr(program.run()) == "([P(a=0)], 0)"


def test_a_prelude_alias_holding_strings_resolves_them_as_a_direct_annotation(run: Any) -> None:
    """`Alias = list["Nope"]` named directly gave pydantic's `.rebuild()` advice, and
    `Optional["Checker"]` expected `ForwardRef('Checker') | None`."""
    src = """
    ```
    from typing import Optional
    Good = list["P"]
    Bad = Optional["Checker"]
    ```
    ~P(a: int)
    [x: Good] = `[P(1)]`
    [y: Bad] = `None`
    """
    with pytest.raises(KediTypeExecutionError) as info:
        run(src)
    assert info.value.message.endswith("prog.kedi:8: unknown type 'Checker' in annotation 'Bad'")
    assert repr(run(src.replace("[y: Bad] = `None`", "= `x`"))) == "[P(a=1)]"
    with pytest.raises(KediTypeExecutionError, match="expects list\\[P\\], got \\[1\\]"):
        run(src.replace("[y: Bad] = `None`", "[z: Good] = `[1]`"))


@pytest.mark.parametrize(
    ("prelude", "annotation", "message"),
    [
        ("s = 'docs'", '`"s"`', "'s' is not a type (it is 'docs' (str))"),
        ("s = 's'", '`"s"`', "'s' is not a type (it is 's' (str))"),
        ("A = list['A']", "A", "invalid type annotation 'A': it names itself"),
        ("A = list['A']", "`A`", "invalid type annotation 'A': it names itself"),
    ],
)
def test_a_string_naming_no_type_is_a_located_error(
    run: Any, prelude: str, annotation: str, message: str
) -> None:
    with pytest.raises(KediTypeExecutionError) as info:
        run(f"```\n{prelude}\n```\n[x: {annotation}] = `[]`\n")
    assert info.value.message.endswith(f"prog.kedi:4: {message}"), info.value.message


def test_a_typing_alias_naming_itself_names_its_text(run: Any) -> None:
    src = "```\nfrom typing import List\nA = List['A']\n```\n[x: A] = `[]`\n"
    with pytest.raises(KediTypeExecutionError) as info:
        run(src)
    assert info.value.message.endswith("prog.kedi:5: invalid type annotation 'A': it names itself")


DIRECT = {
    "assignment": "[x: {t}] = `{v}`\n= `x`\n",
    "parameter": "@f(x: {t}) -> str:\n  = `str(x)`\n= `f({v})`\n",
    "return": "@f() -> {t}:\n  = `{v}`\n= `f()`\n",
    "type_field": "~V(b: {t})\n= `V({v}).b`\n",
    "in_a_body": "@f() -> str:\n  [x: {t}] = `{v}`\n  = `str(x)`\n= `f()`\n",
}


@pytest.mark.parametrize("where", DIRECT)
@pytest.mark.parametrize(
    ("annotation", "value", "shown"),
    [
        ('"P"', "P(1)", "a=1"),
        ('list["P"]', "[P(1)]", "[P(a=1)]"),
        ('"P | None"', "None", "None"),
        ('"int"', "3", "3"),
    ],
)
def test_a_quoted_direct_annotation_is_a_forward_reference(
    run: Any, where: str, annotation: str, value: str, shown: str
) -> None:
    """`[x: "P"]` is what `[x: list["P"]]` makes of its string: the type `P` (it was
    `'"P"' is not a type (it is 'P' (str))`, while `list["P"]` worked)."""
    src = "~P(a: int)\n" + DIRECT[where].format(t=annotation, v=value)
    assert str(run(src)) == shown


@pytest.mark.parametrize("annotation", ['"P"', 'list["P"]'])
def test_a_quoted_name_declared_later_is_an_unknown_type_either_way(
    run: Any, annotation: str
) -> None:
    """A procedure's body resolves its annotations when it runs (a type declared after the
    procedure is then visible); a header resolves them at the definition, before it."""
    body = f"@f() -> str:\n  [x: {annotation}] = `P(1)`\n  = ok\n~P(a: int)\n= `f()`\n"
    if annotation == '"P"':
        assert run(body) == "ok"
    header = f"@f(x: {annotation}) -> str:\n  = ok\n~P(a: int)\n"
    with pytest.raises(KediTypeExecutionError) as info:
        run(header)
    assert info.value.message.endswith(
        f"prog.kedi:1: unknown type 'P' in annotation {annotation!r}"
    ), info.value.message
