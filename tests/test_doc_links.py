"""Links in the user docs resolve: every `[text](#anchor)` and `[text](file#anchor)` of README.md
and docs/*.md names an existing file and a heading or `<a id>` in it, and every
`docs/language.md#anchor` cited in code comments, tests and docs is one of that page's anchors
(code comments cite docs/language.md by anchor)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
_ANCHOR_ID = re.compile(r'<a\s+(?:id|name)="([^"]+)"')
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CITED = re.compile(r"docs/language\.md#([^\s)`'\",:;]+)")


def _prose(path: Path) -> str:
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub makes for `path`'s headings (duplicates get `-1`, `-2`, ...), and its
    `<a id>` targets."""
    text = _prose(path)
    anchors: set[str] = set(_ANCHOR_ID.findall(text))
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", re.sub(r"<[^>]+>", "", heading).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_anchor_rules() -> None:
    page = ROOT / "docs" / "language.md"
    anchors = _anchors(page)
    assert {"support-matrix", "line-kinds", "1-lexical-structure"} <= anchors
    assert "lexical" not in anchors


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_links_resolve(doc: Path) -> None:
    broken = []
    for link in _LINK.findall(_prose(doc)):
        if re.match(r"[a-z]+:", link):  # https:, mailto:
            continue
        target, _, fragment = link.partition("#")
        path = (doc.parent / target).resolve() if target else doc
        if not path.exists():
            broken.append(f"{link}: no file {target}")
        elif fragment and path.suffix == ".md" and fragment not in _anchors(path):
            broken.append(f"{link}: no anchor #{fragment} in {path.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_cited_language_anchors_exist() -> None:
    anchors = _anchors(ROOT / "docs" / "language.md")
    sources = [*DOCS]
    for folder in ("pytest_kedi", "tests", "benchmarks", "examples"):
        sources += [p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".kedi", ".md"}]
    broken = [
        f"{path.relative_to(ROOT)}: docs/language.md#{anchor}"
        for path in sources
        if path.name != "test_doc_links.py"
        for anchor in _CITED.findall(path.read_text(encoding="utf-8"))
        if anchor.rstrip(".") not in anchors
    ]
    assert not broken, "cited anchors missing from docs/language.md:\n" + "\n".join(broken)
