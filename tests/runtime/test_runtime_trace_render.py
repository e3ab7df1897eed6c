"""What a user reads in a Kedi stack trace (docs/language.md#execution-errors): each part
once, at its `.kedi` line."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.runtime.errors import KediExecutionError

RAISED_FROM_A_PROCEDURE = """\
@g() -> int:
  = `1/0`
@f() -> int:
  ```
  try:
      g()
  except ZeroDivisionError as e:
      raise ValueError("wrapped") from e
  ```
= <f()>
"""


def test_a_cause_raised_by_a_procedure_is_shown_under_the_one_header(
    run: Callable[..., Any], tmp_path: Path
) -> None:
    """The cause, a Kedi error itself, opened a second ``Kedi stack trace:`` line."""
    with pytest.raises(KediExecutionError) as info:
        run(RAISED_FROM_A_PROCEDURE)
    lines = str(info.value).replace(f"{tmp_path}{os.sep}", "").splitlines()
    assert lines[:6] == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 1, in g',
        "    @g() -> int:",
        '  File "prog.kedi", line 2, in g',
        "    = `1/0`",
        "ZeroDivisionError: division by zero",
    ]
    assert lines.count("Kedi stack trace:") == 1
    assert "The above exception was the direct cause of the following exception:" in lines
    assert lines[-2:] == ['    raise ValueError("wrapped") from e', "ValueError: wrapped"]
