"""A procedure whose body is one fence runs, from its `PARAMS_AFTER`-th call on, as a
function of its parameters (fast locals, as in a Python function): what it does and how
its errors are located stay those of the first calls."""

from __future__ import annotations

import ast
import warnings
from typing import Any

import pytest

from pytest_kedi.runtime.errors import KediExecutionError, KediValueExecutionError
from pytest_kedi.runtime.pyanalysis import compile_may_warn
from pytest_kedi.runtime.pyinterop import PARAMS_AFTER

CALLS = PARAMS_AFTER + 4

SOURCE = """
[offset: int] = `10`
[total: int] = `0`

@scaled(n: int, factor: int = `2`) -> int:
  = ```
  def probe():
      return n
  cell = probe.__closure__ is not None
  acc = 0
  for i in range(n):
      acc += abs(i - factor) % 7 + offset
  return acc * (2 if cell else 1)
  ```

@divide(n: int) -> int:
  = ```
  return 100 // (n - 3)
  ```

@accumulate(n: int) -> int:
  = ```
  total = total + n
  return total
  ```

@rebind(n: int) -> int:
  = ```
  n = n + 1
  return n
  ```
"""


def _expected_scaled(n: int, factor: int = 2) -> int:
    return sum(abs(i - factor) % 7 + 10 for i in range(n))


def test_parameters_become_fast_locals_and_results_stay_the_same(kedi: Any) -> None:
    scaled = kedi(SOURCE, mode="validate").procedures["scaled"]
    results = [scaled(n % 5 + 3) for n in range(CALLS)]
    # The first calls read `n` as a global (no closure cell); later ones as a parameter,
    # which a nested function captures in a cell, as in a Python function.
    first = [_expected_scaled(n % 5 + 3) for n in range(PARAMS_AFTER - 1)]
    later = [2 * _expected_scaled(n % 5 + 3) for n in range(PARAMS_AFTER, CALLS)]
    assert results[: PARAMS_AFTER - 1] == first
    assert results[PARAMS_AFTER:] == later
    assert scaled(4, 5) == 2 * _expected_scaled(4, 5)  # a default overridden


def test_a_program_run_switches_too(run: Any) -> None:
    # Run mode (the CLI): the module's globals are a plain dict from the start.
    got = run(SOURCE + f"\n= `[scaled(4) for _ in range({CALLS})]`\n")
    assert got[: PARAMS_AFTER - 1] == [_expected_scaled(4)] * (PARAMS_AFTER - 1)
    assert got[PARAMS_AFTER:] == [2 * _expected_scaled(4)] * (CALLS - PARAMS_AFTER)


def test_an_error_is_located_at_its_kedi_line_before_and_after(kedi: Any) -> None:
    divide = kedi(SOURCE, mode="validate").procedures["divide"]
    messages = []
    for _ in range(CALLS):
        assert divide(5) == 50
        with pytest.raises(KediExecutionError) as caught:
            divide(3)
        messages.append(caught.value.render())
    assert len(set(messages)) == 1, messages[0]
    assert "prog.kedi" in messages[0] and "line 17" in messages[0]
    assert "return 100 // (n - 3)" in messages[0]


def test_a_module_binding_the_fence_rebinds_is_still_written_back(kedi: Any) -> None:
    program = kedi(SOURCE, mode="validate")
    accumulate = program.procedures["accumulate"]
    assert [accumulate(1) for _ in range(CALLS)] == list(range(1, CALLS + 1))


def test_a_parameter_stays_read_only_from_python(kedi: Any) -> None:
    rebind = kedi(SOURCE, mode="validate").procedures["rebind"]
    for _ in range(CALLS):
        with pytest.raises(KediValueExecutionError, match="read-only"):
            rebind(1)


def test_a_compile_warning_is_given_once_across_the_switch(kedi: Any) -> None:
    # The fence is not compiled again when that would make Python warn again.
    source = """
    @same(n: int) -> bool:
      = ```
      return n is 300
      ```
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same = kedi(source, mode="validate").procedures["same"]
        assert [same(1) for _ in range(CALLS)] == [False] * CALLS
    found = [w for w in caught if issubclass(w.category, SyntaxWarning)]
    assert len(found) == 1, [str(w.message) for w in found]
    assert "literal" in str(found[0].message)


# What Python's compiler warns of (3.11 to 3.14), and code it compiles silently.
WARNS = [
    "x is 1",
    "x is not 'a'",
    "() is x",
    "x is 1 + 1",
    "x is -1",
    "f = (1)(2)",
    "y = [1, 2](0)",
    "z = f'{x}'()",
    "w = {1, 2}[0]",
    "v = 5[0]",
    "u = [1, 2]['a']",
    "assert (x, 'message')",
    "for i in x:\n    try:\n        pass\n    finally:\n        break",
]
SILENT = [
    "x is None",
    "x is not True",
    "y = f(1)",
    "z = x[0]",
    "w = {'a': 1}['a']",
    "assert x, 'message'",
    "try:\n    pass\nfinally:\n    x = 1",
]


@pytest.mark.parametrize("snippet", WARNS + SILENT)
def test_compile_may_warn_is_true_wherever_python_warns(snippet: str) -> None:
    tree = ast.parse(snippet)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile(tree, "<snippet>", "exec")
    warned = any(issubclass(w.category, SyntaxWarning) for w in caught)
    if snippet in SILENT:
        assert not warned
    if warned:  # (each Python warns of some of them: 3.11 of fewer than 3.14)
        assert compile_may_warn(tree)
    if snippet in SILENT:
        assert not compile_may_warn(tree)
