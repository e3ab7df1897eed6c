"""A Python unit that rebinds a Kedi name and then raises keeps the rebinding, as a Python
module keeps what its code bound before an exception (docs/language.md#python-interop).
Before, the rebinding was lost: a caller that caught the exception read the old value. A
rebinding that is itself an error (a parameter) is not written back, and the user's
exception, not the write-back error, propagates, with a note that tells it."""

from __future__ import annotations

import pytest

from pytest_kedi.errors import KediExecutionError

CALLER = """
[seen: list] = `[]`
```
for _ in range(70):  # past BUILD_AFTER: the generated body too
    try:
        p()
    except ZeroDivisionError:
        seen.append(n)
    n = 0
```
= `seen`
"""


@pytest.mark.parametrize(
    "body",
    [
        "  ```\n  n = 5\n  1 / 0\n  ```\n",  # a fence
        "  = ```\n  n = 5\n  1 / 0\n  ```\n",  # a one-fence body (a generated body)
        "  `n = 5; 1 / 0`\n",  # a statement line
        "  = `(n := 5) / 0`\n",  # an expression's `:=`
        "  ```\n  global n\n  def g():\n      global n\n      n = 5\n  g()\n  1 / 0\n  ```\n",
    ],
    ids=["fence", "fence_return", "line", "walrus", "nested_global"],
)
def test_a_rebinding_made_before_a_raise_is_written_back(run, body):
    src = "[n: int] = `0`\n@p() -> int:\n" + body + CALLER
    assert run(src) == [5] * 70


def test_a_procedure_called_from_python_keeps_its_rebinding_when_it_raises(kedi):
    src = "[n: int] = `0`\n@p() -> str:\n  ```\n  n = 7\n  raise KeyError('k')\n  ```\n"
    program = kedi(src)
    program.run()
    with pytest.raises(KediExecutionError, match="KeyError"):
        program.procedures["p"]()
    assert program.get("n") == 7


def test_an_illegal_rebinding_does_not_replace_the_exception(kedi):
    src = (
        "[n: int] = `0`\n@p(x: int) -> str:\n"
        "  ```\n  n = 5\n  x = 2\n  raise ValueError('boom')\n  ```\n"
    )
    program = kedi(src)
    program.run()
    with pytest.raises(KediExecutionError) as info:
        program.procedures["p"](1)
    shown = str(info.value)
    assert "ValueError: boom" in shown
    assert "(not written back: " in shown and "parameter 'x' is read-only" in shown
    assert program.get("n") == 5


def test_the_note_is_shown_on_a_kedi_error_too(kedi):
    src = "~T(a: int)\n@p(x: int) -> str:\n  ```\n  x = 2\n  T(a='zz')\n  ```\n"
    program = kedi(src)
    program.run()
    with pytest.raises(KediExecutionError) as info:
        program.procedures["p"](1)
    shown = str(info.value)
    assert "T.a expects int" in shown
    assert "(not written back: " in shown and "parameter 'x' is read-only" in shown
