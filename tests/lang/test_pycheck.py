"""Syntax errors in embedded Python are located Kedi diagnostics (``check_python``,
used by ``python -m pytest_kedi parse`` and collection)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_kedi.lang import KediParseError, check_python, parse, parse_file

CASES = {
    # name: (source, line, column of the caret)
    "assignment": ("[y: int] = `  1 +* 2`\n", 1, 18),
    "procedure_return": ("@f(x: int) -> int:\n  = `(x + 1`\n", 2, 6),
    "fence_line": ("@g() -> int:\n  = ```\n  a = 1\n  if a\n     pass\n  ```\n", 4, 7),
    "case_statement": ("@test: t:\n  > case: c:\n    `assert 1 ==`\n", 3, 17),
    "dataset": (
        "@eval: e:\n  > data: d:\n    = `[1, 2`\n  > metric: m(d):\n    = `1.0`\n",
        3,
        8,
    ),
    "backtick_type": ("@h() -> `list[`:\n  = `[]`\n", 1, 14),
    "prelude": ("```\ndef f(:\n    pass\n```\n[x] = a\n", 2, 7),
    "substitution": ("@k(v: str) -> str:\n  = value <`v +`>\n", 2, 13),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_syntax_error_is_a_located_diagnostic(tmp_path: Path, name: str) -> None:
    source, line, column = CASES[name]
    path = tmp_path / "b.kedi"
    path.write_text(source, encoding="utf-8")
    parse(source, str(path))  # the fast parse leaves embedded Python unchecked
    with pytest.raises(KediParseError) as info:
        check_python(parse_file(path))
    diagnostic = info.value.diagnostics[0]
    assert (diagnostic.path, diagnostic.line, diagnostic.column) == (str(path), line, column)
    assert diagnostic.message.startswith("Python syntax error: ")
    assert diagnostic.source_line == source.splitlines()[line - 1]
    rendered = info.value.render()
    assert f'File "{path}", line {line}, column {column}' in rendered
    assert "<kedi" not in rendered


def test_every_syntax_error_is_reported_in_source_order() -> None:
    source = textwrap.dedent(
        """\
        [a] = `1 +`
        [b] = `2`
        [c] = `(`
        """
    )
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    assert [d.line for d in info.value.diagnostics] == [1, 3]


def test_valid_python_passes() -> None:
    module = parse("[a: int] = `1`\n@f() -> int:\n  = ```\n  return a\n  ```\n", "ok.kedi")
    assert check_python(module) is module
