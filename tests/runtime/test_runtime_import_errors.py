"""A module that fails to parse as it is imported is reported with the import lines that
loaded it, after its own diagnostic (docs/language.md#modules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.lang.diagnostics import KediParseError


@pytest.mark.parametrize("mode", ["run", "validate"])
def test_a_parse_error_in_an_imported_module_names_the_import(
    kedi: Any, tmp_path: Path, mode: str
) -> None:
    (tmp_path / "bad.kedi").write_text('@f() -> str:\n  = `"x"\n', encoding="utf-8")
    with pytest.raises(KediParseError) as info:
        kedi("# a comment\n> import: bad\n", mode=mode).run()
    error = info.value
    assert (Path(error.path).name, error.line) == ("bad.kedi", 2)  # the module's own error
    text = str(error)
    assert text.startswith("Kedi parse error:\n\n")
    assert text.index("unbalanced backtick") < text.index("Imported from:")
    assert text.endswith(
        f'Imported from:\n  File "{tmp_path / "prog.kedi"}", line 2\n  > import: bad'
    )


def test_a_nested_import_lists_every_import_innermost_first(kedi: Any, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.kedi").write_text("```\nx = (\n```\n", encoding="utf-8")
    (tmp_path / "b.kedi").write_text("> import: sub/c\n> export: *\n", encoding="utf-8")
    with pytest.raises(KediParseError) as info:
        kedi("> import: b\n", mode="validate")
    text = str(info.value)
    assert "Python syntax error: '(' was never closed" in text
    sites = text.split("Imported from:\n", 1)[1].splitlines()
    assert sites == [
        f'  File "{tmp_path / "b.kedi"}", line 1',
        "  > import: sub/c",
        f'  File "{tmp_path / "prog.kedi"}", line 1',
        "  > import: b",
    ]


def test_the_imported_file_parsed_alone_shows_no_import(tmp_path: Path) -> None:
    from pytest_kedi.runtime import load

    (tmp_path / "bad.kedi").write_text('@f() -> str:\n  = `"x"\n', encoding="utf-8")
    with pytest.raises(KediParseError) as info:
        load(tmp_path / "bad.kedi")
    assert "Imported from" not in str(info.value)
