"""The regex fast paths are assembled from the grammar's own terminals and accept nothing the
grammar rejects: on generated heads and text, whenever a fast path answers, the grammar gives
the same answer."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark.exceptions import LarkError

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.fastheads import fast_metric_head, fast_signature, fast_target, fast_type
from pytest_kedi.lang.grammars import header_parser, terminals, text_parser
from pytest_kedi.lang.heads import lark_metric_head, lark_signature, lark_target
from pytest_kedi.lang.source import KediSyntaxError, Source
from pytest_kedi.lang.syntax import IDENT
from pytest_kedi.lang.text import _PIECE, _Builder, _fast_parts, parse_text_with_grammar

from .conftest import error_of


@pytest.mark.parametrize(
    ("name", "parser"), [("header.lark", header_parser), ("text.lark", text_parser)]
)
def test_terminals_are_the_ones_lark_builds(name: str, parser: object) -> None:
    found = terminals(name)
    assert found["NAME"] == IDENT
    lark = parser()  # type: ignore[operator]
    for terminal, regex in found.items():
        assert lark.get_terminal(terminal).pattern.to_regexp() == _as_lark_reads(regex), terminal


def _as_lark_reads(regex: str) -> str:
    """Lark turns the escapes \\n, \\r and \\t of a grammar regex into the characters."""
    controls = {"n": "\n", "r": "\r", "t": "\t"}
    return re.sub(r"\\(.)", lambda m: controls.get(m.group(1), m.group()), regex)


def test_the_text_fast_path_uses_the_grammar_field_type() -> None:
    assert terminals("text.lark")["FTYPE"] in _PIECE.pattern


@pytest.mark.parametrize(
    ("source", "column", "message"),
    [
        ("@f(x: str.) -> str:\n  = `x`\n", 11, "unexpected ')' in procedure header"),
        ("@f(x: str) -> a..b:\n  = `x`\n", 17, "unexpected '.' in procedure header"),
        ("~T(a: b.)\n", 9, "unexpected ')' in custom type header"),
        ("[y: a.] = `1`\n", 7, "unexpected ']' in assignment target"),
    ],
)
def test_malformed_dotted_types_are_rejected_in_heads(
    source: str, column: int, message: str
) -> None:
    # The hand-written fast path used to accept `str.` and `a..b` as types.
    d = error_of(source)
    assert (d.line, d.column) == (1, column)
    assert d.message.startswith(message)


_NAMES = st.sampled_from(["a", "x_1", "Str", "list", "_p", "café", "1a", "if", "args"])
_TYPE_BITS = [
    "int", "str", "a.b", "a.", "a..b", ".a", "list[str]", "dict[str, int]", "list[]",
    "Literal[1, 2]", "x[1.]", "A | None", "a |", "| a", "list[str | int]", "t[a[b]]",
    "`T`", "``", '"s"', "...", "a . b", "list [ str ]", "dict[str, list[int]]",
    'Literal["a", "b"]', "tuple[int, ...]", "a[b[c[d]]]", "x[[int], str]", "d[str, l[1.]]",
]  # fmt: skip


@st.composite
def _annotation(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(_TYPE_BITS), min_size=1, max_size=3))
    return draw(st.sampled_from([" | ", "|", " ", ""])).join(parts)


@st.composite
def _param(draw: st.DrawFn) -> str:
    text = draw(_NAMES)
    if draw(st.booleans()):
        text += draw(st.sampled_from([": ", ":", " : "])) + draw(_annotation())
    if draw(st.booleans()):
        text += draw(st.sampled_from([" = ", "="])) + draw(
            st.sampled_from(["`0`", "``", "`f(1)`", "```", "0"])
        )
    return text


@st.composite
def _header(draw: st.DrawFn) -> tuple[str, str]:
    proc = draw(st.booleans())
    params = draw(st.lists(_param(), max_size=3))
    sep = draw(st.sampled_from([", ", ",", ",\n  "]))
    text = ("@" if proc else "~") + draw(_NAMES) + "(" + sep.join(params)
    text += draw(st.sampled_from([")", ",)", ""]))
    if proc and draw(st.booleans()):
        text += " -> " + draw(_annotation())
    if draw(st.booleans()) or proc:
        text += draw(st.sampled_from([":", "", " :"])) if proc else ""
    return text, "proc_header" if proc else "type_header"


@given(_header())
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fast_signature_agrees_with_the_grammar(case: tuple[str, str]) -> None:
    text, start = case
    fast = fast_signature(text, start)
    if fast is None:
        return
    assert fast == lark_signature(text, start), text


@given(st.tuples(_NAMES, st.none() | _annotation(), st.sampled_from(["", " ", "\n"])))
@settings(max_examples=300, deadline=None)
def test_fast_target_agrees_with_the_grammar(case: tuple[str, str | None, str]) -> None:
    name, annot, ws = case
    text = f"[{ws}{name}{ws}" + (f":{ws}{annot}{ws}" if annot is not None else "") + "]"
    fast = fast_target(text)
    if fast is None:
        return
    assert fast == lark_target(text), text


_METRIC_BITS = ["exact", "rows", "café", "1a", "if", " ", "\n", "(", ")", ",", "()", "a b"]


@given(st.lists(st.sampled_from(_METRIC_BITS), min_size=1, max_size=8).map("".join))
@settings(max_examples=400, deadline=None)
def test_fast_metric_head_agrees_with_the_grammar(text: str) -> None:
    fast = fast_metric_head(text)
    if fast is None:
        return
    try:
        expected = lark_metric_head(text)
    except KediSyntaxError:
        pytest.fail(f"the fast path accepted a metric head the grammar rejects: {text!r}")
    assert fast == expected, text


_TEXT_BITS = [
    "ab", " ", "x_1", "<", ">", "[", "]", "(", ")", ",", ":", "`", "\\", "\\<", "\\q", "~~",
    "<a>", "<`a + 1`>", "<f(a, b)>", "[x]", "[ x : int ]", "[x: `T`]", "[x: list[str]]",
    "[x: dict[str, \"a]\"]]", "[x: a[b[c]]]", "[x:]", "[if]", "<if>", "café", "\t",
    "<f(", "<g()>", "<f( )>", "<f(a,)>", "<f(<g(x)>)>", "<f((a))>", "<f(\\,)>", "<f(a, [b)>",
    "<f( a , <b> ,`c` )>", "<f(\\q)>", "<f(`x`)>",
]  # fmt: skip


@given(st.lists(st.sampled_from(_TEXT_BITS), min_size=1, max_size=12).map("".join))
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_text_fast_path_agrees_with_the_grammar(raw: str) -> None:
    raw = raw.strip()
    if not raw:
        return
    src = Source(raw, "t.kedi")
    try:
        fast = _fast_parts(_Builder(src, 0, True, "no fields"), raw)
    except KediSyntaxError as exc:  # escapes and field types are checked as they are read
        # The grammar reports the same fault, unless the text also has a syntax error
        # further on (the grammar reads the whole text before it builds any node).
        with pytest.raises((KediSyntaxError, LarkError)) as grammar_error:
            parse_text_with_grammar(src, 0, len(raw), True)
        if isinstance(grammar_error.value, KediSyntaxError):
            assert (grammar_error.value.offset, grammar_error.value.message) == (
                exc.offset,
                exc.message,
            )
        return
    if fast is None:
        return
    try:
        expected = parse_text_with_grammar(src, 0, len(raw), True)
    except LarkError:  # pragma: no cover - the assertion below reports it
        pytest.fail(f"the fast path accepted text the grammar rejects: {raw!r}")
    assert n.Text(src.span(0, len(raw)), tuple(fast)) == expected, raw


@given(_annotation())
@settings(max_examples=400, deadline=None)
def test_fast_type_accepts_only_what_the_grammar_accepts(text: str) -> None:
    if fast_type(text):
        header_parser().parse(text, start="annot")  # raises if the grammar rejects it


@pytest.mark.parametrize(
    "text",
    [
        "int",
        "list[str]",
        "dict[str, list[int]]",
        "a.b | None",
        "t[1, 2]",
        'Literal["a", "b"]',
        "list[str | int]",
        "dict[str | None, list[int | str] | None]",
        "tuple[int, ...]",
        "list[ ]",
        "x [ a , b | c ]",
    ],
)
def test_fast_type_covers_the_common_types(text: str) -> None:
    assert fast_type(text)


@pytest.mark.parametrize("text", ["a.", "a..b", "list[", "x[1.]", "`T`", "a |"])
def test_fast_type_declines_what_it_cannot_decide(text: str) -> None:
    assert not fast_type(text)


@pytest.mark.parametrize(
    "raw",
    ["a <f(b, <c>, `d`, e\\,f, \\[g)> h", "<f()>", "<f( )>", "<f( a , <b> ,`c` )>", "<g(`x`)>z"],
)
def test_plain_calls_take_the_fast_path_and_read_as_the_grammar_reads_them(raw: str) -> None:
    src = Source(raw, "t.kedi")
    fast = _fast_parts(_Builder(src, 0, True, "no fields"), raw)
    assert fast is not None
    assert n.Text(src.span(0, len(raw)), tuple(fast)) == parse_text_with_grammar(
        src, 0, len(raw), True
    )


@pytest.mark.parametrize(
    "raw", ["<f( )>", "<f(\t )>", "<f( )> and <g(<f( )>)>", "<g((a), <f( )>)>"]
)
def test_a_blank_argument_list_is_no_argument_on_both_paths(raw: str) -> None:
    """docs/language.md#substitutions: arguments are trimmed; `<f( )>` read as one empty
    argument while `<f()>` had none."""
    src = Source(raw, "t.kedi")
    grammar = parse_text_with_grammar(src, 0, len(raw), True)
    calls = [p for p in grammar.parts if isinstance(p, n.CallSubst)]
    while calls:
        call = calls.pop()
        if call.callee == "f":
            assert call.args == ()
        calls.extend(p for a in call.args for p in a.parts if isinstance(p, n.CallSubst))
    fast = _fast_parts(_Builder(src, 0, True, "no fields"), raw)
    assert fast is None or n.Text(src.span(0, len(raw)), tuple(fast)) == grammar


@pytest.mark.parametrize(
    ("raw", "offset"), [("<f([label])>", 3), ("a <f(b, c [x y])> d", 10), ("<f(x, (y [z]))>", 9)]
)
def test_an_unescaped_bracket_in_a_call_argument_is_an_error_on_both_paths(
    raw: str, offset: int
) -> None:
    """docs/language.md#text-and-escapes: in text an unescaped `[` opens an output field,
    which a call argument cannot hold. Both paths read it as a literal `[`: the prompt said
    ``Classify [label]``, no field was asked for, and the next read of ``label`` failed."""
    src = Source(raw, "t.kedi")
    try:  # the fast path raises at the bracket, or leaves the text to the grammar
        fast = _fast_parts(_Builder(src, 0, True, "no fields"), raw)
    except KediSyntaxError as exc:
        assert exc.offset == offset
    else:
        assert fast is None
    with pytest.raises(KediSyntaxError, match=r"unescaped '\[' in a call argument") as grammar:
        parse_text_with_grammar(src, 0, len(raw), True)
    assert grammar.value.offset == offset


@pytest.mark.parametrize("raw", ["<f(<g(x)>)>", "<f((a))>", "<f(a,)>", "<f(,)>"])
def test_nested_or_malformed_calls_go_to_the_grammar(raw: str) -> None:
    src = Source(raw, "t.kedi")
    assert _fast_parts(_Builder(src, 0, True, "no fields"), raw) is None
