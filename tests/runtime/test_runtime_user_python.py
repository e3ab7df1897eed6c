"""Embedded Python compiles as the user wrote it (docs/language.md#python): none of
pytest-kedi's own compiler flags (its modules' ``from __future__ import annotations``)
leak into the user's code."""

from __future__ import annotations

import pytest


def test_prelude_dataclass_works(run):
    src = """
    ```
    from dataclasses import dataclass, field

    @dataclass
    class Box:
        v: int
        tags: list = field(default_factory=list)
    ```
    = `Box(3)`
    """
    box = run(src)
    assert (box.v, box.tags) == (3, [])


def test_annotations_are_evaluated_in_every_kind_of_block(run):
    """Annotations are objects, as in a `.py` module without the future import: in the
    prelude, a later top-level fence, a procedure's block and a Python statement line."""
    src = """
    ```
    def pre(x: int) -> str: ...
    ```
    [seen: list] = `[pre.__annotations__]`
    ```
    def top(y: list) -> None: ...
    seen.append(top.__annotations__)
    ```
    @proc() -> str:
      ```
      def inner(z: float): ...
      seen.append(inner.__annotations__)
      ```
      `seen.append((lambda: None).__code__.co_flags & 0x1000000)`
      = done
    [r] = <proc()>
    = `seen`
    """
    assert run(src) == [
        {"x": int, "return": str},
        {"y": list, "return": None},
        {"z": float},
        0,
    ]


def test_users_own_future_import_still_applies(run):
    src = """
    ```
    from __future__ import annotations
    def f(x: int): ...
    ```
    = `f.__annotations__`
    """
    assert run(src) == {"x": "int"}


def test_exec_from_user_code_inherits_no_flags(run):
    src = """
    = `eval("(lambda: 0).__code__.co_flags") & 0x1000000`
    """
    assert run(src) == 0


def test_one_fence_procedure_compiled_as_a_function_too(kedi, monkeypatch):
    """The body compiled as a Python function of the parameters (called often) and the
    generated fast body keep the annotations too."""
    from pytest_kedi.runtime import procedures

    monkeypatch.setattr(procedures, "BUILD_AFTER", 1)
    src = """
    @fence(n: int) -> dict:
      = ```
      def f(a: int) -> bool: ...
      return f.__annotations__
      ```
    @line(n: int) -> dict:
      [k: int] = `n`
      = `{"k": k, "flags": (lambda: 0).__code__.co_flags & 0x1000000}`
    """
    program = kedi(src, mode="validate")
    for _ in range(4):
        assert program.procedures["fence"](1) == {"a": int, "return": bool}
        assert program.procedures["line"](1) == {"k": 1, "flags": 0}


@pytest.mark.parametrize(
    ("body", "line", "source_line", "message"),
    [
        (
            "@g(x: int) -> int:\n  = ```\n  y = 1\n  if x > 1:\n      x = 0\n  return x\n  ```\n"
            "[r: int] = <g(`5`)>\n",
            5,
            "x = 0",
            "parameter 'x' is read-only",
        ),
        (
            "@g(x: int) -> int:\n  ```\n  y = 1\n  def helper():\n      x = 3\n  x += 1\n  ```\n"
            "  = `x`\n[r: int] = <g(`5`)>\n",
            6,
            "x += 1",
            "parameter 'x' is read-only",
        ),
        (
            "[n: int] = `1`\n```\ny = 1\nfor k in [1]:\n    pass\ndel n\n```\n",
            6,
            "del n",
            "Kedi binding 'n' cannot be deleted",
        ),
        (
            "[a] = x\n```\nz = [args for args in (1,)]\ndef f():\n"
            "    global args\n    args = 2\nf()\n```\n",
            6,
            "args = 2",
            "`args` is runtime-owned",
        ),
        (
            "@g(x: int) -> int:\n  = `(\n    0 or (x := 2)\n  )`\n[r: int] = <g(`5`)>\n",
            3,
            "0 or (x := 2)",
            "parameter 'x' is read-only",
        ),
        (
            "[n: int] = `1`\n```\ny = 1\nglobals()['n'] = 'x'\ndel globals()['n']\n```\n",
            3,
            "y = 1",
            "Kedi binding 'n' cannot be deleted",
        ),
    ],
)
def test_rebinding_errors_name_the_line_that_rebinds(kedi, body, line, source_line, message):
    """A parameter rebound, a Kedi binding deleted or ``args`` assigned from Python is
    located at the statement that does it, not at the block's first line (only a rebinding
    no statement shows, through ``globals()``, is located at the block's first line)."""
    from pytest_kedi.runtime.errors import KediExecutionError

    with pytest.raises(KediExecutionError) as info:
        kedi(body).run()
    error = info.value
    assert f"prog.kedi:{line}: {message}" in error.message
    assert error.line == line
    lines = str(error).splitlines()
    assert lines[-3].endswith(f'prog.kedi", line {line}, in <program>') or ", in g" in lines[-3]
    assert lines[-2].strip() == source_line


CALL_ON_A_LATER_ROW = """
@f(x: int) -> str:
  = x
@g(v: Any) -> str:
  = first \\
    second <f(<v>)> \\
    third
[ok] = <g(`1`)>
>> top row
call row <g(nope)>
last row
"""


@pytest.mark.parametrize("fast", [False, True])
def test_a_call_failing_on_a_later_row_is_located_at_that_row(kedi, monkeypatch, fast):
    """A ``<call()>`` on the second line of a continued return, or on a template's later
    row, is the caller's line in the stack trace (and in an argument error's message),
    not the statement's first line; also in a procedure's generated fast body."""
    from pytest_kedi.runtime import procedures
    from pytest_kedi.runtime.errors import KediExecutionError

    if fast:
        monkeypatch.setattr(procedures, "BUILD_AFTER", 1)
    with pytest.raises(KediExecutionError) as info:
        kedi(CALL_ON_A_LATER_ROW).run()
    lines = [line.strip() for line in str(info.value).splitlines()]
    assert lines[1].endswith("line 9, in <program>") and lines[2] == "call row <g(nope)>"
    assert lines[3].endswith("line 3, in g")
    assert lines[5].endswith("line 5, in g") and lines[6] == "second <f(<v>)> \\"
    assert lines[7].endswith("line 1, in f")
    assert lines[-1].startswith("KediTypeExecutionError: ")
    assert "prog.kedi:1: parameter 'x' of f expects int" in lines[-1]

    program = kedi("@f(x: int) -> str:\n  = x\n>> top row\nrow <f()>\n")
    with pytest.raises(KediExecutionError, match=r"prog\.kedi:4: f\(\) missing") as info:
        program.run()
    assert str(info.value).splitlines()[2].strip() == "row <f()>"
