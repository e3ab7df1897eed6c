"""`parse_file` caches by (path, content hash)."""

from __future__ import annotations

from pathlib import Path

from pytest_kedi.lang import parse, parse_file
from pytest_kedi.lang.cache import ModuleCache
from pytest_kedi.lang.nodes import Module
from pytest_kedi.lang.parser import _CACHE


def test_unchanged_file_is_not_reparsed(tmp_path: Path) -> None:
    path = tmp_path / "a.kedi"
    path.write_text("[x] = a\n", encoding="utf-8")
    first = parse_file(path)
    second = parse_file(str(path))
    assert first is second
    path.write_text("[x] = b\n", encoding="utf-8")
    third = parse_file(path)
    assert third is not first and third.path == str(path)


def test_cache_is_bounded_and_counts() -> None:
    cache = ModuleCache(limit=2)
    calls: list[str] = []

    def fake(source: str, path: str) -> Module:
        calls.append(source)
        return parse(source, path)

    for text in ("[a] = 1", "[b] = 2", "[a] = 1", "[c] = 3", "[b] = 2"):
        cache.get_or_parse("p.kedi", text, fake)
    assert calls == ["[a] = 1", "[b] = 2", "[c] = 3", "[b] = 2"]
    assert cache.hits == 1 and cache.misses == 4
    assert _CACHE.limit >= 1
