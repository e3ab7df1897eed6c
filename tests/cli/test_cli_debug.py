"""``KEDI_DEBUG=1`` shows the traceback of an internal parser error (CLI, in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kedi import cli
from pytest_kedi.lang import parser as parser_module


def _broken_stage(*_args: object) -> None:
    raise ValueError("injected parser bug")


@pytest.mark.parametrize("debug", ["1", None])
def test_parse_shows_internal_traceback_with_kedi_debug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], debug
) -> None:
    monkeypatch.setattr(parser_module, "check_package", _broken_stage)
    if debug is None:
        monkeypatch.delenv("KEDI_DEBUG", raising=False)
    else:
        monkeypatch.setenv("KEDI_DEBUG", debug)
    program = tmp_path / "prog.kedi"
    program.write_text("@f():\n  = x\n", encoding="utf-8")
    assert cli.main(["parse", str(program)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "internal error in the Kedi parser (ValueError)" in err
    shown = "ValueError: injected parser bug" in err and "in _broken_stage" in err
    assert shown is (debug is not None)
