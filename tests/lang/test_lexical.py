"""Lexical details (docs/language.md#lexical-structure): comments, strings in types."""

from __future__ import annotations

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang import parse


def test_hash_in_a_quoted_string_of_a_parameter_type_is_not_a_comment() -> None:
    module = parse('@f(x: Literal["#a", "b"]) -> Literal["#a", "b"]:  # note\n  = <x>\n')
    (proc,) = module.body
    assert isinstance(proc, n.Procedure)
    assert proc.params[0].type is not None
    assert proc.params[0].type.source == 'Literal["#a", "b"]'
    assert proc.return_type is not None and proc.return_type.source == 'Literal["#a", "b"]'


def test_hash_in_an_annotated_description_of_a_field_is_not_a_comment() -> None:
    module = parse('~Issue(\n  ref: Annotated[str, "issue # here"],  # note\n  n: int\n)\n')
    (decl,) = module.body
    assert isinstance(decl, n.TypeDecl)
    assert [f.name for f in decl.fields] == ["ref", "n"]
    ref = decl.fields[0].type
    assert ref is not None and ref.source == 'Annotated[str, "issue # here"]'


def test_hash_in_a_quoted_string_of_a_target_or_output_type_is_not_a_comment() -> None:
    module = parse(
        "[x: Literal['#1']] = `'#1'`  # note\n"
        '>> Pick one [c: Literal["#1", "#2"]] of "them # all"  # note\n'
    )
    assign, template = module.body
    assert isinstance(assign, n.Assign) and assign.type is not None
    assert assign.type.source == "Literal['#1']"
    assert isinstance(template, n.Template)
    parts = template.rows[0].parts
    assert isinstance(parts[1], n.OutputField) and parts[1].type is not None
    assert parts[1].type.source == 'Literal["#1", "#2"]'
    # Outside brackets a quote is plain text, so '#' still starts a comment there.
    assert isinstance(parts[2], n.Literal) and parts[2].value == ' of "them'
