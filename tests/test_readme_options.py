"""The README's options table is generated from the plugin's `OPTIONS` table, and every pytest
option and ini entry of the plugin is declared there."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi import plugin
from pytest_kedi.plugin.options import OPTIONS, Option
from pytest_kedi.plugin.options_table import (
    END,
    START,
    main,
    markdown_table,
    marked_table,
    readme_table,
    replace_table,
)

README = Path(__file__).resolve().parents[1] / "README.md"
NONE = "\u2013"  # en dash
REGENERATE = "python -m pytest_kedi.plugin.options_table --write README.md"


def test_readme_options_table_is_generated() -> None:
    table = readme_table(README.read_text(encoding="utf-8"))
    if table is None:
        pytest.fail(
            f"README.md has no {START} / {END} markers; put this under '### Options':\n\n"
            + marked_table(),
            pytrace=False,
        )
    assert table == markdown_table(), f"README's options table is stale: run `{REGENERATE}`"


def test_every_option_has_a_table_row() -> None:
    lines = markdown_table().splitlines()
    assert len(lines) == 2 + len(OPTIONS)
    for option, line in zip(OPTIONS, lines[2:], strict=True):
        assert option.meaning, f"{option.name}: no meaning for the README options table"
        if option.help:
            assert line.startswith(f"| `{option.flag}")
        if option.env:
            assert f"`{option.env}" in line
        if option.ini_type:
            assert f"`{option.name}` ({option.ini_type})" in line


class _Recorder:
    """Stands in for `pytest.Parser`: records every option and ini entry registered."""

    def __init__(self) -> None:
        self.flags: list[str] = []
        self.inis: list[str] = []

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.flags.extend(names)

    def addini(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.inis.append(name)


def test_every_plugin_option_is_declared_in_the_table(pytestconfig: pytest.Config) -> None:
    hook = pytestconfig.pluginmanager.hook.pytest_addoption
    ours = [impl for impl in hook.get_hookimpls() if impl.function.__module__.startswith(
        "pytest_kedi")]  # fmt: skip
    assert [impl.function for impl in ours] == [plugin.pytest_addoption]
    recorder = _Recorder()
    plugin.pytest_addoption(recorder)  # type: ignore[arg-type]
    assert recorder.flags == [option.flag for option in OPTIONS if option.help]
    assert recorder.inis == [option.name for option in OPTIONS if option.ini_type]


def test_table_cells_render_switches_defaults_and_missing_sources() -> None:
    def parse(value: object, source: str) -> object:
        return value

    switch = Option("x", "kedi_x", parse, False, "help", env="KEDI_X", flag_is_switch=True,
                    meaning="switch")  # fmt: skip
    ini_only = Option("y", "kedi_y", parse, (), "", ini_type="linelist", meaning="lines")
    valued = Option("z", "kedi_z", parse, 3, "help", metavar="N", shown_default="three",
                    meaning="count")  # fmt: skip
    assert markdown_table([switch, ini_only, valued]).splitlines()[2:] == [
        f"| `--kedi-x` | `KEDI_X=1` | {NONE} | off | switch |",
        f"| {NONE} | {NONE} | `kedi_y` (linelist) | none | lines |",
        f"| `--kedi-z N` | {NONE} | {NONE} | three | count |",
    ]
    with pytest.raises(ValueError, match="cannot hold"):
        markdown_table([Option("w", "kedi_w", parse, None, "", meaning="a | b")])


def test_generator_prints_and_rewrites_the_marked_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == marked_table()
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n{START}\n| old |\n{END}\n\nAfter.\n", encoding="utf-8")
    assert main(["--write", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == f"# Title\n\n{marked_table()}\nAfter.\n"
    assert replace_table(readme.read_text(encoding="utf-8")) == readme.read_text(encoding="utf-8")
    readme.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        main(["--write", str(readme)])
    assert stopped.value.code == 1
    assert "no <!-- options-table:start --> ... <!-- options-table:end --> markers" in (
        capsys.readouterr().err
    )


def _mentioned(pattern: str) -> set[str]:
    docs = [README, README.parent / "docs" / "language.md"]
    return {name for doc in docs for name in re.findall(pattern, doc.read_text(encoding="utf-8"))}


def _literal_in(folder: str, name: str) -> bool:
    quoted = (f'"{name}"', f"'{name}'", f'"{name}=', f"pytest.mark.{name}")
    return any(
        any(q in path.read_text(encoding="utf-8") for q in quoted)
        for path in (README.parent / folder).rglob("*.py")
    )


def test_every_option_env_var_and_ini_name_the_docs_mention_exists() -> None:
    """Each `--kedi-*` option, `KEDI_*` variable and `kedi_*` name the README and the language
    reference mention is one of the plugin's options, or (the CLI's variables, markers, JUnit
    properties, the test suite's browser variable) a literal of the code that reads it."""
    assert _mentioned(r"--kedi-[a-z-]+") - {o.flag for o in OPTIONS if o.help} == set()
    others = _mentioned(r"\bKEDI_[A-Z_]+\b") - {o.env for o in OPTIONS if o.env}
    others |= _mentioned(r"\bkedi_[a-z_]+\b") - {o.name for o in OPTIONS if o.ini_type}
    assert {"KEDI_ADAPTER", "kedi_score", "kedi_eval"} <= others
    missing = {name for name in others if not _literal_in("pytest_kedi", name)}
    assert missing - {"KEDI_CHROMIUM"} == set()
    assert _literal_in("tests", "KEDI_CHROMIUM")


def test_the_readme_states_every_numeric_range_the_options_enforce() -> None:
    """The README's "Ranges:" sentence named `--kedi-concurrency` and `--kedi-max-rows` as whole
    numbers >= 1 but not `--kedi-repeat` or `--kedi-max-requests`, which refuse 0 just the same,
    nor `--kedi-retries` (>= 0) and `--kedi-max-drop` (0 to 1)."""
    from pytest_kedi.plugin import optionvalues

    text = README.read_text(encoding="utf-8")
    ranges = " ".join(text.split("Ranges: ", 1)[1].split("\n\n", 1)[0].split())
    by_rule = {
        optionvalues.parse_positive_int: "whole numbers ≥ 1",
        optionvalues.parse_count: "a whole number ≥ 0",
        optionvalues.parse_max_drop: "from 0 to 1",
        optionvalues.parse_interval: "≥ 0",
        optionvalues.parse_timeout: "above 0",
    }
    for option in OPTIONS:
        rule = by_rule.get(option.parse)
        if rule is None:
            continue
        name = f"`{option.flag}`" if option.help else f"`{option.name}`"
        assert name in ranges, f"README's Ranges: sentence does not name {name}"
        said = ranges.split(name, 1)[1].split(";", 1)[0]
        assert rule in said, f"README's Ranges: sentence gives {name} as {said!r}, not {rule!r}"
