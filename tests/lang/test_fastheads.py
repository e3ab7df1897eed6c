"""The regex fast paths (heads, text) agree with the lark grammar wherever they apply."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import KediParseError, grammars, parse
from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.context import classify, split_target
from pytest_kedi.lang.fastheads import fast_metric_head, fast_signature, fast_target
from pytest_kedi.lang.heads import lark_metric_head, lark_signature, lark_target
from pytest_kedi.lang.scanner import Item, scan
from pytest_kedi.lang.source import KediSyntaxError, Source
from pytest_kedi.lang.text import parse_text_with_grammar

from .conftest import load_manifest, read_corpus
from .spans import walk

HEADS = [
    "@f():",
    "@f(a, b: int, c: list[str] = `[]`) -> dict[str, int]:",
    "@f(\n  a: int,  \n  b: `T` = `1`\n) -> `R`:",
    "@f(a: str | None, b: Literal) -> str|None:",
    "~T(a: int, b)",
    "~T(\n  a: int,\n  b: str = `'x'`\n)",
]
TARGETS = ["[x]", "[ x ]", "[x: int]", "[x: list[str]]", "[x: `T`]", "[x: str | None]"]
METRIC_HEADS = ["exact", "exact(rows)", " exact ( rows ) ", "exact()", "exact(\n  rows\n)", "m ( )"]


def _items(source: str) -> list[Item]:
    out: list[Item] = []
    stack = scan(Source(source, "x"))
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(item.children)
    return out


@pytest.mark.parametrize("text", HEADS)
def test_fast_signature_matches_lark(text: str) -> None:
    start = "proc_header" if text.startswith("@") else "type_header"
    fast = fast_signature(text, start)
    assert fast is not None
    assert fast == lark_signature(text, start)


@pytest.mark.parametrize("text", TARGETS)
def test_fast_target_matches_lark(text: str) -> None:
    assert fast_target(text) is not None
    assert fast_target(text) == lark_target(text)


@pytest.mark.parametrize("text", METRIC_HEADS)
def test_fast_metric_head_matches_lark(text: str) -> None:
    assert fast_metric_head(text) is not None
    assert fast_metric_head(text) == lark_metric_head(text)


@pytest.mark.parametrize("text", ["exact(a, b)", "exact(a", "ex act", "exact(a)(b)", "(a)", ""])
def test_fast_metric_head_declines_what_it_cannot_decide(text: str) -> None:
    assert fast_metric_head(text) is None


def test_a_typical_file_parses_without_building_a_lark_parser() -> None:
    """Procedure heads, targets, types, templates and a suite's metric head all take the
    fast paths: a process that parses such a file never builds the grammar's parsers."""
    source = (
        "@fast_typical_a(x: int, y: dict[str | None, list[int]] = `{}`) -> list[str]:\n"
        "  = `[str(x)]`\n\n"
        "@fast_typical_b(text: str) -> str:\n"
        "  >> Summarize <text> as [summary: str].\n"
        "  = <summary>\n\n"
        "@eval: fast_typical_a:\n"
        "  > data: rows:\n"
        "    = `[(1, ['1'])]`\n"
        "  > metric: fast_typical_exact(rows):\n"
        "    = `fast_typical_a(rows) == expected`\n"
    )
    grammars.header_parser.cache_clear()
    grammars.text_parser.cache_clear()
    parse(source, "typical.kedi")
    assert grammars.header_parser.cache_info().currsize == 0
    assert grammars.text_parser.cache_info().currsize == 0


@pytest.mark.parametrize("text", ["@f(a,)", "@f(a: A[B[C[D]]]) -> str:", "@f(a = ```):", "@f(a)"])
def test_fast_signature_declines_what_it_cannot_decide(text: str) -> None:
    assert fast_signature(text, "proc_header") is None


def test_fast_paths_agree_on_the_corpus() -> None:
    compared = 0
    for entry in load_manifest():
        try:
            items = _items(read_corpus(entry["file"]))
        except KediSyntaxError:
            continue
        for item in items:
            kind = classify(item)
            if kind in ("procedure", "type"):
                start = "proc_header" if kind == "procedure" else "type_header"
                fast = fast_signature(item.text, start)
                if fast is not None:
                    assert fast == lark_signature(item.text, start), item.text
                    compared += 1
            elif kind == "target":
                split = split_target(item.text)
                assert split is not None
                head = item.text[: split[0]]
                fast_t = fast_target(head)
                if fast_t is not None:
                    assert fast_t == lark_target(head), head
                    compared += 1
    assert compared > 300


def test_text_fast_path_matches_the_grammar_on_the_corpus() -> None:
    compared = 0
    for entry in load_manifest():
        source = read_corpus(entry["file"])
        try:
            module = parse(source, entry["file"])
        except KediParseError:
            continue
        src = Source(source, entry["file"])
        for node in walk(module):
            if not isinstance(node, n.Text) or not node.parts:
                continue
            if node.span.start_line != node.span.end_line:
                continue  # a '\\'-continued return: joined from several lines
            expected = parse_text_with_grammar(
                src, node.span.start_offset, node.span.end_offset, True
            )
            assert node == expected, source[node.span.start_offset : node.span.end_offset]
            compared += 1
    assert compared > 500
