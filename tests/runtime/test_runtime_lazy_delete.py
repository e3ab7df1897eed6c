"""``del n`` of a lazy top-level binding not read yet (docs/language.md#python-interop,
#lazy-bindings) is the located "cannot be deleted" error deleting a forced binding is, and
does not force the binding (only reading a name does). Before, it was a bare
``NameError: name 'n' is not defined``."""

from __future__ import annotations

import pytest

from pytest_kedi.errors import KediExecutionError

SOURCE = """
[n: int] = `1 // 0`
@p() -> str:
  ```
  del n
  ```
@test: t:
  > case: line:
    `del n`
  > case: nested:
    ```
    def f():
        global n
        del n
    f()
    ```
  > case: called:
    `p()`
  > case: read_first:
    `x = n`
  > case: subscript:
    `del globals()["n"]`
"""


@pytest.mark.parametrize(
    ("case", "line"), [("line", 8), ("nested", 13), ("called", 4), ("subscript", 21)]
)
def test_deleting_an_unforced_binding_is_the_located_error(kedi, case, line):
    program = kedi(SOURCE, mode="validate")
    suite = program.module.test_suites[0]
    target = next(c for c in suite.cases if c.name == case)
    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, target)
    assert f"prog.kedi:{line}: Kedi binding 'n' cannot be deleted from Python" in str(info.value)
    # not forced: reading it now fails with the binding's own error
    reader = next(c for c in suite.cases if c.name == "read_first")
    with pytest.raises(KediExecutionError, match="ZeroDivisionError"):
        program.run_case(suite, reader)


def test_a_name_error_of_another_name_is_unchanged(kedi):
    src = "[n: int] = `1`\n@test: t:\n  > case: c:\n    ```\n    global m\n    del m\n    ```\n"
    program = kedi(src, mode="validate")
    suite = program.module.test_suites[0]
    with pytest.raises(KediExecutionError, match="name 'm' is not defined"):
        program.run_case(suite, suite.cases[0])
