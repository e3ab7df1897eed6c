"""Layout that the language says does not matter does not change what a program means:
``\\r\\n`` line ends, a leading byte-order mark, and a tab for every four columns of
indentation (docs/language.md#lines, #indentation)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_kedi.lang import KediParseError, check_python, parse
from pytest_kedi.lang import nodes as n

from .conftest import CORPUS, load_manifest, read_corpus

_ACCEPTED: list[str] = []


def _accepted() -> list[str]:
    """The corpus snippets the parser accepts (Python included)."""
    if not _ACCEPTED:
        for entry in load_manifest():
            source = read_corpus(entry["file"])
            try:
                check_python(parse(source, entry["file"]))
            except KediParseError:
                continue
            _ACCEPTED.append(source)
    return _ACCEPTED


def _tabs(source: str) -> str:
    """Every four leading spaces of a Kedi line as a tab (fence and block-comment bodies,
    Python and opaque text, are left as they are)."""
    out: list[str] = []
    opaque = None  # the delimiter of the block being skipped
    for line in source.split("\n"):
        stripped = line.strip()
        width = len(line) - len(line.lstrip(" "))
        if opaque is None and width >= 4:
            line = "\t" * (width // 4) + " " * (width % 4) + line[width:]
        marker = "###" if stripped == "###" else "```" if line.count("```") % 2 else None
        if marker is not None:  # an opening fence may be followed by a comment
            opaque = marker if opaque is None else None if opaque == marker else opaque
        out.append(line)
    return "\n".join(out)


def _shape(module: n.Module) -> list[tuple[str, int]]:
    """What each top-level statement is and where it starts."""
    return [(type(s).__name__, s.span.start_line) for s in module.body]


_LAYOUTS = {
    "crlf": lambda s: s.replace("\n", "\r\n"),
    "bom": lambda s: "\ufeff" + s,
    "tabs": _tabs,
    "all": lambda s: "\ufeff" + _tabs(s).replace("\n", "\r\n"),
}


@pytest.mark.skipif(not (CORPUS / "MANIFEST.json").is_file(), reason="corpus not available")
@given(data=st.data(), layout=st.sampled_from(sorted(_LAYOUTS)))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_program_means_the_same_whatever_its_layout(data: st.DataObject, layout: str) -> None:
    source = data.draw(st.sampled_from(_accepted()))
    changed = _LAYOUTS[layout](source)
    try:
        module = check_python(parse(changed, "l.kedi"))
    except KediParseError as exc:
        pytest.fail(f"{layout}: {exc.message}\n{changed!r}")
    assert _shape(module) == _shape(parse(source, "l.kedi"))
