"""``--kedi-debug`` / ``KEDI_DEBUG=1``: an internal parser error shows its traceback."""

from __future__ import annotations

import pytest
from kedi_marks import patched_plugin
from kedi_plugin_helpers import Kedi

from pytest_kedi.lang import parser as parser_module

PROGRAM = "@test: s:\n  > case: c:\n    `assert True`\n"

#: Injects the same parser bug into xdist workers (separate processes).
CONFTEST = """
from pytest_kedi.lang import parser


def _broken_stage(*_args):
    raise ValueError("injected parser bug")


parser.check_package = _broken_stage
"""


def _broken_stage(*_args: object) -> None:
    raise ValueError("injected parser bug")


@patched_plugin
@pytest.mark.parametrize(
    ("args", "env", "shown"),
    [
        ((), None, False),
        (("--kedi-debug",), None, True),
        ((), "1", True),
        ((), "0", False),
    ],
    ids=["plain", "flag", "env", "env-off"],
)
def test_internal_parser_error_traceback(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, args, env, shown
) -> None:
    monkeypatch.setattr(parser_module, "check_package", _broken_stage)
    if env is not None:
        monkeypatch.setenv("KEDI_DEBUG", env)
    kedi.write("test_prog.kedi", PROGRAM)
    result = kedi.run("--kedi-eval", *args)
    result.assert_outcomes(errors=1)
    text = result.stdout.str()
    assert "internal error in the Kedi parser (ValueError)" in text
    assert ("ValueError: injected parser bug" in text) is shown
    assert ("in _broken_stage" in text) is shown


@pytest.mark.xdist_only("the parser bug is injected by a conftest in every worker")
def test_internal_parser_error_traceback_under_xdist(kedi: Kedi) -> None:
    kedi.write("conftest.py", CONFTEST)
    kedi.write("test_prog.kedi", PROGRAM)
    result = kedi.subprocess("--kedi-eval", "--kedi-debug")
    result.assert_outcomes(errors=1)
    text = result.stdout.str()
    assert "internal error in the Kedi parser (ValueError)" in text
    assert "ValueError: injected parser bug" in text
