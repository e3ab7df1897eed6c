"""The one-expression procedure fast path must behave exactly like the general path."""

from __future__ import annotations

import pytest

from pytest_kedi.runtime.errors import KediExecutionError, KediTypeExecutionError

SOURCE = """
[k: int] = `1`
@add(a: int, b: int) -> int:
  = `a + b + k`
@div(a: int, b: int) -> float:
  = `a / b`
@bad(a: int) -> int:
  = `str(a)`
@squares(n: int) -> list[int]:
  = `[i * i for i in range(n)]`
"""


def test_fast_path_reads_live_module_values(kedi):
    program = kedi(SOURCE + "[k] := `10`\n= <add(`1`, `2`)>\n")
    assert program.run() == 13
    assert program.procedures["add"](1, 2) == 13


def test_fast_path_validates_arguments_and_result(kedi):
    program = kedi(SOURCE, mode="validate")
    add, bad = program.procedures["add"], program.procedures["bad"]
    assert add(1, 2) == 4
    with pytest.raises(KediTypeExecutionError, match="parameter 'a' of add expects int"):
        add(True, 2)
    with pytest.raises(KediTypeExecutionError, match="return value of bad expects int"):
        bad(1)


def test_int_subclass_takes_the_general_path(kedi):
    class Count(int):
        pass

    program = kedi(SOURCE, mode="validate")
    assert program.procedures["add"](Count(1), 2) == 4


def test_fast_path_errors_are_located(kedi):
    program = kedi(SOURCE, mode="validate")
    with pytest.raises(KediExecutionError) as info:
        program.procedures["div"](1, 0)
    err = info.value
    assert isinstance(err.original, ZeroDivisionError)
    assert [f.kind for f in err.frames] == ["procedure", "return"]
    assert err.line == 5


def test_fast_path_comprehension_sees_parameters(kedi):
    program = kedi(SOURCE, mode="validate")
    assert program.procedures["squares"](4) == [0, 1, 4, 9]
