"""Embedded Python compiles as the user wrote it (docs/language.md#python): none of
pytest-kedi's own compiler flags (its modules' ``from __future__ import annotations``)
leak into the user's code."""

from __future__ import annotations


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
