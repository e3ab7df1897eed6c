"""Conformance against tree-sitter-kedi's verdicts on the shared corpus, and exact spans.

A file is accepted when it parses and its embedded Python passes `check_python`, as pytest's
collection, ``python -m pytest_kedi`` and `load` accept it."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import KediParseError, check_python, parse

from .conftest import load_allowlist, load_manifest, read_corpus
from .spans import span_problems


def test_corpus_conformance(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = load_manifest()
    allow = load_allowlist()
    assert len(allow) <= 20, "the allowlist must stay short (docs/language.md#reference-parser)"
    for reason in allow.values():
        assert reason.startswith("KEDI.md §"), reason
    ts_ok = [e for e in manifest if e["treesitter_ok"]]
    accepted = 0
    unexpected: list[str] = []
    stale: list[str] = []
    for entry in ts_ok:
        name = entry["file"]
        try:
            check_python(parse(read_corpus(name), name))
        except KediParseError as exc:
            if name not in allow:
                d = exc.diagnostics[0]
                unexpected.append(f"{name}:{d.line}:{d.column}: {d.message}")
            continue
        accepted += 1
        if name in allow:
            stale.append(name)
    ts_rejected = [e for e in manifest if not e["treesitter_ok"]]
    also = 0
    for entry in ts_rejected:
        try:
            check_python(parse(read_corpus(entry["file"]), entry["file"]))
        except KediParseError:
            continue
        also += 1
    with capsys.disabled():
        print(
            f"\ncorpus: {accepted}/{len(ts_ok)} accepted, {len(ts_ok) - accepted} allowlisted;"
            f" tree-sitter-rejected files we accept: {also}/{len(ts_rejected)}"
        )
    assert not unexpected, "\n".join(unexpected)
    assert not stale, f"allowlisted files that now parse: {stale}"
    assert accepted + len(allow) == len(ts_ok)


def test_corpus_spans_are_exact() -> None:
    manifest = load_manifest()
    checked = 0
    problems: list[str] = []
    for entry in manifest:
        name = entry["file"]
        try:
            module = parse(read_corpus(name), name)
        except KediParseError:
            continue
        checked += 1
        problems.extend(f"{name}: {p}" for p in span_problems(module))
    assert checked > 300
    assert not problems, "\n".join(problems[:30])
