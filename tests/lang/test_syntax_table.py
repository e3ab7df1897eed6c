"""The directive table and the identifier rule are the one source every layer reads."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import KediParseError, parse
from pytest_kedi.lang.grammars import header_parser, text_parser
from pytest_kedi.lang.syntax import DIRECTIVES, IDENT, Runtime, is_identifier
from pytest_kedi.runtime import directive_effects


def test_every_runtime_directive_has_an_action() -> None:
    reached = {name for name, spec in DIRECTIVES.items() if spec.runtime is not Runtime.NODE}
    assert set(directive_effects.ACTIONS) == reached


@pytest.mark.parametrize("parser", [header_parser, text_parser], ids=["header", "text"])
def test_grammars_use_the_identifier_rule(parser) -> None:
    assert parser().get_terminal("NAME").pattern.value == IDENT


@pytest.mark.parametrize(
    ("text", "ok"),
    [("a", True), ("_a1", True), ("A_b", True), ("1a", False), ("a-b", False), ("", False)],
)
def test_identifier_rule(text: str, ok: bool) -> None:
    assert is_identifier(text) is ok


@pytest.mark.parametrize("name", sorted(DIRECTIVES))
def test_every_directive_is_known_to_the_parser(name: str) -> None:
    try:
        parse(f"> {name}: x\n")
    except KediParseError as exc:
        assert "unknown directive" not in exc.message


def test_unknown_directive_is_rejected() -> None:
    with pytest.raises(KediParseError, match=r"unknown directive '> nosuch:'"):
        parse("> nosuch: x\n")


@pytest.mark.parametrize(
    ("written", "meant"),
    [("modle", "model"), ("Model", "model"), ("setings", "settings"), ("cases", "case")],
)
def test_a_misspelled_directive_names_the_one_it_is_close_to(written: str, meant: str) -> None:
    with pytest.raises(KediParseError) as info:
        parse(f"@test: t:\n  > {written}: x\n")
    assert info.value.message == f"unknown directive '> {written}:' (did you mean '> {meant}:'?)"


def test_an_unknown_directive_close_to_none_suggests_nothing() -> None:
    with pytest.raises(KediParseError) as info:
        parse("> frobnicate: x\n")
    assert info.value.message == "unknown directive '> frobnicate:'"
