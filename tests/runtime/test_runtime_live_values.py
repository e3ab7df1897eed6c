"""Python units read Kedi values live (docs/language.md#python-interop): a procedure that a
block, a line or an expression calls may rebind a Kedi name (writing back to the frame that
owns it); the code that called it reads the new value afterwards, and its own rebindings
made before the call are what the procedure reads. Before, a block read a copy made when
it started: `hit(); assert count == 1` failed, and `bump(); n = n + 10` lost the update."""

from __future__ import annotations

import pytest

COUNTER = """
[n: int] = `0`
@bump() -> int:
  `n += 1`
  = `n`
"""


def test_a_fence_reads_what_a_procedure_it_called_wrote_back(run):
    src = (
        COUNTER
        + """
[seen: int] = `-1`
```
bump()
seen = n
n = n + 10
```
= `(seen, n)`
"""
    )
    assert run(src) == (1, 11)


def test_a_procedure_reads_what_the_fence_calling_it_rebound(run):
    src = (
        COUNTER
        + """
```
n = 5
got = bump()
```
= `n`
"""
    )
    assert run(src) == 6


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[bump() for _ in range(3)] + [n]", [1, 2, 3, 3]),
        ("(lambda: (bump(), n))()", (1, 1)),
        ("(bump(), n, bump(), n)", (1, 1, 2, 2)),
    ],
)
def test_expressions_with_nested_code_read_live_values(run, line, expected):
    assert run(COUNTER + f"= `{line}`\n") == expected


def test_a_statement_line_reads_live_values(run, capsys):
    run(COUNTER + '`bump(); print("after:", n)`\n= ok\n')
    assert capsys.readouterr().out == "after: 1\n"


def test_an_enclosing_frame_binding_rebound_by_a_nested_procedure(run):
    src = """
@outer() -> tuple:
  [n: int] = `0`
  @inc() -> int:
    `n += 1`
    = `n`
  [a: list] = `[inc() for _ in range(2)] + [n]`
  [b: int] = `-1`
  ```
  inc()
  b = n
  ```
  = `(a, b, n)`
= `outer()`
"""
    assert run(src) == ([1, 2, 2], 3, 3)


def test_a_prelude_name_rebound_by_a_procedure(run):
    src = """
```
X = 1
```
@f() -> int:
  `X = 2`
  = `X`
= `(f(), X)`
"""
    assert run(src) == (2, 2)


def test_a_case_reads_a_counter_a_procedure_advanced(kedi):
    src = """
[count: int] = `0`
@hit() -> str:
  `count += 1`
  = ok
@test: s:
  > case: c:
    ```
    hit()
    assert count == 1, f"count={count}"
    count = 10
    hit()
    assert count == 11, f"count={count}"
    ```
"""
    program = kedi(src, mode="validate")
    (suite,) = program.module.test_suites
    (case,) = suite.cases
    program.run_case(suite, case)
    assert program.get("count") == 11
