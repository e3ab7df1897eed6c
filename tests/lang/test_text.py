"""The text sub-grammar (docs/language.md#text-and-escapes, docs/language.md#substitutions)."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang import parse


def text_of(rhs: str) -> n.Text:
    stmt = parse(f"[x] = {rhs}\n").body[0]
    assert isinstance(stmt, n.Assign) and stmt.value.text is not None
    return stmt.value.text


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (r"a \< \> \[ \] \( \) \, \= \@ \# \~ \` \\", "a < > [ ] ( ) , = @ # ~ ` \\"),
        (r"tab\there", "tab\there"),
        (r"nl\nhere", "nl\nhere"),
        (r"kept\s", "kept "),
        ("tilde ~~ and ~", "tilde ~ and ~"),
        ("mid = > ] ) literal", "mid = > ] ) literal"),
    ],
)
def test_escapes_and_literals(raw: str, value: str) -> None:
    parts = text_of(raw).parts
    assert len(parts) == 1 and isinstance(parts[0], n.Literal)
    assert parts[0].value == value


def test_inline_comment_is_stripped_but_not_in_code() -> None:
    text = text_of("a `'#'` b  # comment")
    assert [type(p) for p in text.parts] == [n.Literal, n.InlinePython, n.Literal]
    assert text.parts[-1].span.end_col == 16


def test_substitution_forms() -> None:
    text = text_of("<a> <`a.b`> `c` <f()>")
    kinds = [type(p) for p in text.parts if not isinstance(p, n.Literal)]
    assert kinds == [n.Subst, n.ExprSubst, n.InlinePython, n.CallSubst]
    expr = text.parts[2]
    assert isinstance(expr, n.ExprSubst) and expr.code.source == "a.b"
    call = text.parts[-1]
    assert isinstance(call, n.CallSubst) and call.args == ()


def test_call_arguments_nested_backtick_and_escaped_commas() -> None:
    text = text_of(r"<f( a\, b , `2`, <g(<h>)>, id <n>, (p, q), <`e`>)>")
    (call,) = text.parts
    assert isinstance(call, n.CallSubst) and call.callee == "f"
    args = call.args
    assert len(args) == 6
    assert [p.value for p in args[0].parts if isinstance(p, n.Literal)] == ["a, b"]
    assert isinstance(args[1].parts[0], n.InlinePython)
    inner = args[2].parts[0]
    assert isinstance(inner, n.CallSubst) and inner.callee == "g"
    assert isinstance(inner.args[0].parts[0], n.Subst)
    assert [type(p) for p in args[3].parts] == [n.Literal, n.Subst]
    assert [p.value for p in args[4].parts if isinstance(p, n.Literal)] == ["(p, q)"]
    assert isinstance(args[5].parts[0], n.ExprSubst)


def test_backtick_content_is_opaque() -> None:
    stmt = parse('= `<prefix> + ":" + canonical(name)`\n').body[0]
    assert isinstance(stmt, n.Return) and stmt.value.mode == "expr"


def test_field_spans_cover_brackets() -> None:
    src = ">> a [ x : list[str] ] b [y]\n"
    tpl = parse(src).body[0]
    assert isinstance(tpl, n.Template)
    spans = [src[o.span.start_offset : o.span.end_offset] for o in tpl.outputs]
    assert spans == ["[ x : list[str] ]", "[y]"]
