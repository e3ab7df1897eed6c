"""The CLI's model calls leave nothing behind under ``python -X dev -W error`` (issue 7 item 15):
the program's private model loop is closed at exit (no ResourceWarning, nothing unraisable).

(asyncio's dev-mode "Executing <Task ...> took N seconds" report depends on machine load, so
it is not asserted; agents are built outside the loop to keep loop steps short.)"""

from __future__ import annotations

from typing import Any

import pytest

MODEL_PROGRAM = """
    @label(text: str) -> str:
      >> Label the text.
      Text: <text>
      Label: [label: str]
      = `label`

    @test: label:
      > case: answers:
        `assert isinstance(label("hi"), str)`

    @eval: label:
      > data: texts:
        = `["a", "b", "c"]`
      > metric: answered(texts):
        = `isinstance(label(texts), str)`
"""


@pytest.mark.parametrize("mode", ["--eval", "--test"])
def test_model_calls_are_clean_under_dev_mode(run_cli: Any, kedi_file: Any, mode: str) -> None:
    name = kedi_file(MODEL_PROGRAM)
    result = run_cli(name, mode, env={"PYTHONDEVMODE": "1", "PYTHONWARNINGS": "error"})
    assert result.code == 0, result.err
    for marker in ("Warning", "unclosed", "Exception ignored", "Traceback"):
        assert marker not in result.err


@pytest.mark.parametrize("mode", [(), ("--test",)])
def test_a_warning_made_an_error_is_the_program_s_located_error(
    run_cli: Any, kedi_file: Any, mode: tuple[str, ...]
) -> None:
    """pytest-kedi's own warning (a field named after a BaseModel attribute), made an error
    by ``-W error``, was reported as "pytest-kedi internal error: UserWarning: ..."."""
    name = kedi_file(
        """
        ~T(json: str, a: int)
        @test: t:
          > case: c:
            `assert T("x", 1).a == 1`
        = `T("x", 1).a`
        """
    )
    result = run_cli(name, *mode, env={"PYTHONWARNINGS": "error"})
    assert result.code == 1
    assert "internal error" not in result.err
    assert result.err.splitlines() == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 1, in <program>',
        "    ~T(json: str, a: int)",
        'UserWarning: field "json" of T shadows an attribute of pydantic.BaseModel',
    ]
