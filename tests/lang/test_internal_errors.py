"""A parser bug is reported as an internal error that keeps its cause (and traceback)."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import KediParseError, parse
from pytest_kedi.lang import parser as parser_module


def _broken_stage(*_args: object) -> None:
    raise ValueError("injected parser bug")


@pytest.fixture
def broken_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make one stage of the parser (the package checks) fail like a bug would."""
    monkeypatch.setattr(parser_module, "check_package", _broken_stage)


@pytest.mark.usefixtures("broken_parser")
def test_internal_error_keeps_its_cause() -> None:
    with pytest.raises(KediParseError) as info:
        parse("@f():\n  = x\n", "prog.kedi")
    exc = info.value
    assert exc.message.startswith("internal error in the Kedi parser (ValueError)")
    assert "--kedi-debug" in exc.message and "KEDI_DEBUG=1" in exc.message
    assert isinstance(exc.__cause__, ValueError)
    assert exc.internal is exc.__cause__
    assert str(exc.__cause__) == "injected parser bug"


@pytest.mark.usefixtures("broken_parser")
def test_debug_rendering_shows_the_traceback() -> None:
    with pytest.raises(KediParseError) as info:
        parse("@f():\n  = x\n", "prog.kedi")
    plain = info.value.render()
    assert "Traceback" not in plain and "injected parser bug" not in plain
    debug = info.value.render(debug=True)
    assert debug.startswith(plain)
    assert "Traceback (most recent call last)" in debug
    assert "in _broken_stage" in debug
    assert debug.rstrip().endswith("ValueError: injected parser bug")


def test_user_errors_have_no_internal_cause() -> None:
    with pytest.raises(KediParseError) as info:
        parse("@f(a, a):\n  = x\n")
    assert info.value.internal is None
    assert info.value.render(debug=True) == info.value.render()
