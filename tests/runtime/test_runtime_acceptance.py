"""Acceptance checks written rule by rule from docs/language.md (§2, §3, §9, §10): regressions for
deviations found when the runtime was exercised as an outside tester would."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import nodes
from pytest_kedi.runtime.errors import KediExecutionError, KediModelError, KediNameError


def _case(program, name: str) -> tuple[nodes.TestSuite, nodes.Case]:
    for stmt in program.module.body:
        if isinstance(stmt, nodes.TestSuite):
            for case in stmt.cases:
                if case.name == name:
                    return stmt, case
    raise LookupError(name)


# -- §3.2: a lazy top-level binding runs in its own source-position environment ----------


def test_lazy_binding_reads_the_value_in_force_at_its_position(kedi):
    program = kedi(
        """
        [x] = first
        [y] = <x>-derived
        [x] = second
        @f() -> str:
          = <y>
        """,
        mode="validate",
    )
    assert program.procedures["f"]() == "first-derived"
    assert program.get("x") == "second"


def test_lazy_binding_calls_the_procedure_declared_before_it(kedi):
    program = kedi(
        """
        @g() -> str:
          = G1
        [y] = <g()>
        @g() -> str:
          = G2
        """,
        mode="validate",
    )
    assert program.get("y") == "G1"
    assert program.procedures["g"]() == "G2"


def test_lazy_binding_cannot_see_names_declared_after_it(kedi):
    program = kedi("[y] = <x>\n[x] = a\n", mode="validate")
    assert program.get("x") == "a"
    with pytest.raises(KediNameError, match="unknown name 'x'") as caught:
        program.get("y")
    assert caught.value.frames[-1].span.start_line == 1


def test_lazy_chain_mixes_positions(kedi):
    program = kedi(
        """
        [a] = A
        [b] = <a>B
        [a] = Z
        [c] = <b>C<a>
        """,
        mode="validate",
    )
    assert program.get("c") == "ABCZ"


def test_lazy_binding_python_write_back_reaches_the_module(kedi):
    program = kedi(
        """
        [count: int] = `1`
        [y: int] = ```
        count += 10
        return count
        ```
        """,
        mode="validate",
    )
    assert program.get("y") == 11
    assert program.get("count") == 11


def test_lazy_binding_sees_a_reassignment_made_before_its_first_read(kedi):
    program = kedi(
        """
        [n: int] = `1`
        [m: int] = `n * 100`
        @bump() -> str:
          [n] := `5`
          = ok
        @test: t:
          > case: c:
            ```
            bump()
            assert m == 500, m
            ```
        """,
        mode="validate",
    )
    program.run_case(*_case(program, "c"))


def test_lazy_binding_runs_once_and_failure_is_located_at_the_binding(kedi):
    program = kedi(
        """
        ```
        calls = []
        ```
        [a: int] = ```
        calls.append(1)
        return len(calls)
        ```
        [bad: int] = `1/0`
        @f() -> int:
          = `bad + a`
        """,
        mode="validate",
    )
    assert program.get("a") == 1
    assert program.get("a") == 1
    assert program.get("calls") == [1]
    with pytest.raises(KediExecutionError) as caught:
        program.procedures["f"]()
    assert caught.value.frames[-1].span.start_line == 8
    assert caught.value.render().splitlines()[-1] == "ZeroDivisionError: division by zero"


# -- §10.2: render() ends with the public exception class ----------------------------------


def test_model_configuration_error_renders_kedi_model_error(run):
    with pytest.raises(KediModelError) as caught:
        run("> settings:\n  bogus_key: 1\n= ok\n")
    last = caught.value.render().splitlines()[-1]
    assert last.startswith("KediModelError: ")
    assert "unknown setting 'bogus_key'" in last
    assert caught.value.kind_name == "KediModelError"


# -- §3.7 / §6.2: a rejected model output names the field, expected type and value ---------


def _answering(args: dict[str, object]):
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def answer(messages, info):
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(answer)


def test_invalid_model_output_names_field_type_and_value(run):
    model = _answering({"a": "abc", "b": "x", "items": [1, "z"]})
    with pytest.raises(KediModelError) as caught:
        run(">> give [a: int] and [b] and [items: list[int]]\n= ok\n", model=model)
    last = caught.value.render().splitlines()[-1]
    assert last.startswith("KediModelError: ")
    assert ":1: model call failed" in last
    assert "output field 'a' expects int, got 'abc' (str)" in last
    assert "output field 'items' (list[int]): items[1] expects int, got 'z' (str)" in last
    assert "'b'" not in last


def test_missing_model_output_is_named(run):
    with pytest.raises(KediModelError, match=r"output field 'b' \(str\) is missing"):
        run(">> give [a: int] and [b]\n= ok\n", model=_answering({"a": 1}))


# -- §2.8: a call in a prompt is evaluated once (prompt building and rendering share it) --


def test_call_in_template_runs_once_and_feeds_the_prompt(run):
    from kedi_scripted_model import ScriptedModel

    model = ScriptedModel(fields={"a": "ok"})
    src = """
    ```
    calls = []
    def tick():
        calls.append(1)
        return len(calls)
    ```
    @f() -> int:
      = `tick()`
    >> value <f()> [a]
    [n] << again <f()>
    > if: claim <f()>
      `pass`
    = `(a, len(calls))`
    """
    model.fields = {"a": "ok", "holds": False}
    assert run(src, model=model) == ("ok", 3)
    assert model.prompts[0] == "value 1 [a]"
    assert model.prompts[1] == "again 2"
    assert "claim 3" in model.prompts[2]
