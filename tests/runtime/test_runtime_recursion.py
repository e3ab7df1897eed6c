"""Recursion that reaches Python's limit is a located Kedi error whose rendering ends with
``RecursionError: …`` (docs/language.md#errors), whichever path runs the procedure."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_kedi.errors import KediExecutionError

SOURCE = """
    @py(n: int) -> int:
      = ```
      def f(k):
          return 0 if k == 0 else 1 + f(k - 1)
      return f(n)
      ```

    @down(n: int) -> int:
      > if: `n <= 0`:
        = `0`
      [r: int] = `down(n - 1)`
      = `r + 1`
    """


def test_python_recursion_in_a_fence_shows_the_python_line(kedi: Any) -> None:
    program = kedi(SOURCE, mode="validate")
    assert program.procedures["py"](50) == 50
    with pytest.raises(RecursionError) as info:
        program.procedures["py"](100_000)
    error = info.value
    assert isinstance(error, KediExecutionError)
    assert type(error).__name__ == "KediExecutionError[RecursionError]"
    lines = error.render().splitlines()
    assert lines[-1] == "RecursionError: maximum recursion depth exceeded"
    assert lines[-3].endswith('prog.kedi", line 4, in py (Python)')
    assert lines[-2] == "    return 0 if k == 0 else 1 + f(k - 1)"


def test_kedi_recursion_names_the_recursive_line(kedi: Any) -> None:
    program = kedi(SOURCE, mode="validate")
    assert program.procedures["down"](50) == 50
    with pytest.raises(KediExecutionError) as info:
        program.procedures["down"](100_000)
    lines = info.value.render().splitlines()
    assert lines[-1].startswith("RecursionError: maximum recursion depth exceeded")
    assert "    [r: int] = `down(n - 1)`" in lines
