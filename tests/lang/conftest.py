"""Shared helpers for the front-end tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.lang import KediParseError, parse
from pytest_kedi.lang.diagnostics import Diagnostic

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "kedi"
ALLOWLIST = Path(__file__).with_name("corpus_allowlist.txt")


def error_of(source: str) -> Diagnostic:
    """Parse ``source`` expecting failure; return the first diagnostic."""
    with pytest.raises(KediParseError) as info:
        parse(source, "t.kedi")
    return info.value.diagnostics[0]


def load_manifest() -> list[dict[str, Any]]:
    manifest = CORPUS / "MANIFEST.json"
    if not manifest.is_file():
        pytest.skip("Kedi corpus not available (../shared/corpus)")
    data = json.loads(manifest.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def read_corpus(name: str) -> str:
    return (CORPUS / name).read_text(encoding="utf-8")


def load_allowlist() -> dict[str, str]:
    entries: dict[str, str] = {}
    for raw in ALLOWLIST.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition("#")
        entries[name.strip()] = reason.strip()
    return entries
