"""Every read of a validation-mode top-level binding from Python sees the forced value:
the internal lazy placeholder never reaches user code, values, reprs or error text."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_kedi.lang import nodes
from pytest_kedi.runtime.errors import KediExecutionError
from pytest_kedi.runtime.procedures import BUILD_AFTER

SOURCE = """
```
def plus_one(value):
    return value + 1
```
[offset: int] = `10`
[label] = offset is <offset>
[Number: object] = `int`

@direct() -> int:
  = `offset + 1`

@fenced() -> int:
  = ```
  return offset + 1
  ```

@substituted() -> str:
  = value <offset>

@with_local(k: int) -> int:
  = `offset + k`

@eval: e:
  > data: rows:
    = `[(1 + offset, 11)]`
  > data: fence_rows:
    = ```
    return [(offset + 1, 11)]
    ```
  > metric: m(rows):
    = `float(rows + offset == expected + 10)`

@test: t:
  > case: bare:
    `assert offset + 1 == 11`
  > case: fence:
    ```
    total = offset + 1
    assert total == 11, total
    ```
"""

# Python snippets run as a case body: each must see 10 for `offset`.
CASE_READS = {
    "globals_item": 'assert globals()["offset"] + 1 == 11',
    "globals_get": 'assert globals().get("offset") + 1 == 11',
    "globals_values": "assert 10 in list(globals().values())",
    "globals_items": 'assert dict(globals().items())["offset"] == 10',
    "globals_copy": 'assert dict(globals())["offset"] == 10 and globals().copy()["offset"] == 10',
    "globals_splat": 'assert {**globals()}["offset"] == 10',
    "globals_contains": 'assert "offset" in globals() and "offset" in list(globals())',
    "class_body": "class C:\n    y = offset + 1\nassert C.y == 11",
    "exec_string": 'ns = {}\nexec("r = offset + 1", globals(), ns)\nassert ns["r"] == 11',
    "exec_no_namespace": 'exec("assert offset + 1 == 11")',
    "eval_string": 'assert eval("offset + 1") == 11',
    "comprehension": "assert [offset + i for i in range(1)] == [10]",
    "lambda_fn": "f = lambda: offset + 1\nassert f() == 11",
    "nested_function": "def f():\n    return offset + 1\nassert f() == 11",
    "prelude_function": "assert plus_one(offset) == 11",
    "procedure_fast_path": "assert direct() == 11",
    "procedure_fence": "assert fenced() == 11",
    "procedure_with_frame": "assert with_local(1) == 11",
    "substitution": 'assert substituted() == "value 10"',
    "top_level_text": 'assert label == "offset is 10"',
    "type_binding": "assert Number is int",
    "repr_of_globals": 'assert "lazy" not in repr(globals()).lower()',
    "rebinding_writes_back": "offset = offset + 5\nassert offset == 15",
}


def _suite(program: Any, kind: type) -> Any:
    return next(s for s in program.module.body if isinstance(s, kind))


def _case_program(kedi: Any, name: str, body: str) -> tuple[Any, nodes.TestSuite]:
    indented = "\n".join("    " + line for line in body.splitlines())
    source = SOURCE + f"\n@test: extra:\n  > case: {name}:\n    ```\n{indented}\n    ```\n"
    program = kedi(source, mode="validate")
    suites = [s for s in program.module.body if isinstance(s, nodes.TestSuite)]
    return program, suites[-1]


@pytest.mark.parametrize("name", sorted(CASE_READS))
def test_python_reads_see_the_forced_value(kedi: Any, name: str) -> None:
    program, suite = _case_program(kedi, name, CASE_READS[name])
    program.run_case(suite, suite.cases[0])


@pytest.mark.parametrize("case", ["bare", "fence"])
def test_case_bodies_see_the_forced_value(kedi: Any, case: str) -> None:
    program = kedi(SOURCE, mode="validate")
    suite = _suite(program, nodes.TestSuite)
    program.run_case(suite, next(c for c in suite.cases if c.name == case))


@pytest.mark.parametrize("dataset", [0, 1])
def test_dataset_expressions_and_fences_see_the_forced_value(kedi: Any, dataset: int) -> None:
    program = kedi(SOURCE, mode="validate")
    suite = _suite(program, nodes.EvalSuite)
    assert list(program.load_dataset(suite, suite.datasets[dataset])) == [(11, 11)]


def test_metric_expressions_see_the_forced_value(kedi: Any) -> None:
    program = kedi(SOURCE, mode="validate")
    suite = _suite(program, nodes.EvalSuite)
    assert program.run_metric(suite, suite.metric, {"rows": 1, "expected": 1}) == 1.0


@pytest.mark.parametrize("name", ["direct", "fenced", "substituted"])
def test_procedures_called_from_outside_see_the_forced_value(kedi: Any, name: str) -> None:
    program = kedi(SOURCE, mode="validate")
    assert str(program.procedures[name]()) in ("11", "value 10")


def test_a_failing_binding_never_shows_the_placeholder(kedi: Any) -> None:
    program = kedi(
        """
        [boom: int] = `1 // 0`
        @test: t:
          > case: c:
            `assert globals()["boom"] == 1`
          > case: d:
            `print(boom)`
        """,
        mode="validate",
    )
    suite = _suite(program, nodes.TestSuite)
    for case in suite.cases:
        with pytest.raises(KediExecutionError) as info:
            program.run_case(suite, case)
        text = info.value.render()
        assert "ZeroDivisionError" in text
        assert "lazy" not in text.lower()
        assert 'prog.kedi", line 1' in text


@pytest.mark.parametrize(
    "body",
    [
        "`kcfg`",  # a global read: Python took the binding's KeyError for "no such name"
        "`first()`",  # the same read inside a procedure
        "```\n    class C:\n        v = kcfg\n    ```",  # a class body's name lookup
        '`exec("kcfg")`',
        '`globals()["kcfg"]`',
    ],
)
def test_a_binding_failing_with_a_key_error_is_that_error_at_its_line(kedi: Any, body: str) -> None:
    program = kedi(
        f"""
[kcfg: int] = `{{"a": 1}}["b"]`

@first() -> int:
  = `kcfg`

@test: t:
  > case: c:
    {body}
""",
        mode="validate",
    )
    suite = _suite(program, nodes.TestSuite)
    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, suite.cases[0])
    text = info.value.render()
    assert text.endswith("KeyError: 'b'"), text
    assert "NameError" not in text
    assert 'prog.kedi", line 1, in <program>' in text
    assert info.value.line == 1


def test_settled_bindings_and_builtins_are_read_from_a_plain_globals_dict(kedi: Any) -> None:
    """Once the bindings a unit reads are forced, its globals are a plain dict (Python's
    own global and builtin lookups, as in a Python function), kept in step with rebinding
    and with a binding that shadows a builtin."""
    program = kedi(
        """
        [len: int] = `7`
        [offset: int] = `10`

        @peek(n: int) -> str:
          = ```
          def probe():
              return None
          kind = type(probe.__globals__).__name__
          return f"{kind} {len} {offset + n} {abs(-n)} {sum(range(n))}"
          ```

        @expression(n: int) -> str:
          = `f"{type((lambda: 0).__globals__).__name__} {len + offset + abs(n)}"`

        @bump() -> int:
          = ```
          offset = offset + 5
          return offset
          ```
        """,
        mode="validate",
    )
    peek, expression = program.procedures["peek"], program.procedures["expression"]
    assert peek(2) == "LazyGlobals 7 12 2 1"  # the first read forces `len` and `offset`
    assert peek(2) == "dict 7 12 2 1"
    # Interpreted, then generated from its 64th call on (`procedures.BUILD_AFTER`).
    assert {expression(-1) for _ in range(BUILD_AFTER + 2)} == {"dict 18"}
    assert program.procedures["bump"]() == 15
    assert peek(2) == "dict 7 17 2 1"
    assert expression(-1) == "dict 23"


def test_a_procedure_reading_a_binding_that_failed_with_a_key_error_raises_a_key_error(
    kedi: Any,
) -> None:
    """``except KeyError:`` around the call catches it, as it does for a Kedi read
    (``<kcfg>``) of the same binding."""
    program = kedi(
        """
[kcfg: int] = `{"a": 1}["b"]`

@python_read() -> int:
  = `kcfg`

@kedi_read() -> str:
  = <kcfg>

@test: t:
  > case: c:
    ```
    for read in (python_read, kedi_read):
        try:
            read()
        except KeyError as error:
            assert "KeyError: 'b'" in str(error)
        else:
            raise AssertionError(read)
    ```
""",
        mode="validate",
    )
    suite = _suite(program, nodes.TestSuite)
    program.run_case(suite, suite.cases[0])
