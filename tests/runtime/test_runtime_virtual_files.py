"""Embedded Python never shows an internal virtual filename: Python's own tracebacks,
warnings and syntax errors raised while compiling point at `file.kedi:LINE`."""

from __future__ import annotations

import traceback
import warnings
from typing import Any

import pytest

from pytest_kedi.lang import KediParseError
from pytest_kedi.runtime.errors import KediExecutionError

FAILING = """
@ratio(n: int) -> float:
  = ```
  a = n
  return a / 0
  ```

@inline(n: int) -> float:
  = `n / 0`

@spread(n: int) -> list:
  = ```
  return [n / k for k in range(1)]
  ```
"""


@pytest.mark.parametrize(("name", "line"), [("ratio", 4), ("inline", 8), ("spread", 12)])
def test_python_traceback_through_embedded_code_names_the_kedi_file(
    kedi: Any, name: str, line: int
) -> None:
    program = kedi(FAILING, mode="validate")
    with pytest.raises(KediExecutionError) as info:
        program.procedures[name](1)
    original = info.value.original
    assert isinstance(original, ZeroDivisionError)
    text = "".join(traceback.format_exception(original))
    assert "<kedi" not in text
    assert f'prog.kedi", line {line}, in ' in text
    assert program.module.lines[line - 1].strip() in text
    assert info.value.python_traces[-1].kedi_line == line


def test_warnings_from_embedded_code_point_at_the_kedi_line(kedi: Any) -> None:
    program = kedi(
        """
        @noisy() -> int:
          = ```
          import warnings
          warnings.warn("careful")
          return 1
          ```
        """,
        mode="validate",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert program.procedures["noisy"]() == 1
    assert [(w.filename.rsplit("/", 1)[-1], w.lineno) for w in caught] == [("prog.kedi", 4)]


NONLOCAL = """\
[n: int] = `1`
@f() -> int:
  = ```
  def g():
      nonlocal n
  return 1
  ```
"""


@pytest.mark.parametrize(
    ("source", "line"),
    [
        # found only when compiling (the parser accepts them)
        (NONLOCAL, 5),
        ("@f() -> int:\n  = `await f`\n", 2),
    ],
)
def test_compile_time_syntax_errors_are_located_in_the_kedi_file(
    kedi: Any, source: str, line: int
) -> None:
    with pytest.raises(KediParseError) as parse_info:  # checked at load: never run
        kedi(source, mode="validate")
    assert parse_info.value.diagnostics[0].line == line
    program = kedi(source, mode="validate", python_checked=True)  # as run unchecked
    with pytest.raises(KediExecutionError) as info:
        program.procedures["f"]()
    err = info.value
    assert isinstance(err.original, SyntaxError)
    for text in (err.render(), str(err.original), "".join(traceback.format_exception(err))):
        assert "<kedi" not in text
    assert err.original.filename.endswith("prog.kedi")
    assert err.original.lineno == line
    assert f"prog.kedi, line {line}" in str(err.original)
    assert f'prog.kedi", line {line}' in err.render()


def test_run_time_syntax_error_of_an_unchecked_program_is_located(run: Any) -> None:
    # `load(python_checked=True)` does not check embedded Python up front (the caller
    # did, as pytest's collection does): a program run finds the error when it compiles
    # the unit, and reports it at the `.kedi` line.
    with pytest.raises(KediExecutionError) as info:
        run("[a] = x\n[b: int] = `1 +`\n", python_checked=True)
    err = info.value
    assert isinstance(err.original, SyntaxError)
    assert "<kedi" not in str(err.original) and "<kedi" not in err.render()
    assert (err.original.lineno, err.original.offset) == (2, 16)
