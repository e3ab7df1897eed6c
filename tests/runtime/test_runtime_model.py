"""Model-facing statements and directives (docs/language.md#templates, docs/language.md#raw-capture,
docs/language.md#directives, docs/language.md#models, docs/language.md#branches,
docs/language.md#model-selection)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kedi_scripted_model import ScriptedModel

from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediModelError,
    KediTypeExecutionError,
    KediUnsupportedError,
)


def test_template_is_one_call_with_bound_outputs(run):
    model = ScriptedModel(fields={"component": "ui", "hotfix": False})
    src = """
    @triage(report: str) -> str:
      >> Bug report: <report>
      Component: [component: str].
      Hotfix needed: [hotfix: bool].
      = <component> / hotfix\\=<hotfix>
    = <triage(crash on save)>
    """
    assert run(src, model=model) == "ui / hotfix=False"
    assert model.prompts == [
        "Bug report: crash on save\nComponent: [component].\nHotfix needed: [hotfix]."
    ]


def test_outputs_are_native_values(run):
    model = ScriptedModel(fields={"items": ["a", "b"], "n": 3})
    src = """
    >> List things: [items: list[str]] and [n: int]
    = `(items, n)`
    """
    assert run(src, model=model) == (["a", "b"], 3)


def test_row_cannot_read_its_own_outputs(run):
    model = ScriptedModel(fields={"x": "new"})
    src = """
    [x] = old
    >> Before <x> then [x]
    = <x>
    """
    assert run(src, model=model) == "new"
    assert model.prompts == ["Before old then [x]"]


def test_output_less_template_reply_is_discarded(run):
    model = ScriptedModel(text="ignored")
    assert run(">> Just say hi\n= done\n", model=model) == "done"
    assert model.prompts == ["Just say hi"]


def test_raw_capture_binds_whole_reply(run):
    model = ScriptedModel(text="the reply")
    assert run("[x] << say <`1 + 1`>\n= `x`\n", model=model) == "the reply"
    assert model.prompts == ["say 2"]


def test_raw_capture_backtick_non_str_type_fails(run):
    with pytest.raises(KediTypeExecutionError, match="must be str"):
        run("[x: `int`] << hi\n", model=ScriptedModel())


def test_raw_capture_backtick_annotated_str_names_the_annotation(run):
    """It read "raw capture [x] must be str, not str": the description was dropped."""
    with pytest.raises(KediTypeExecutionError) as info:
        run('[x: `Annotated[str, "d"]`] << hi\n', model=ScriptedModel())
    assert info.value.message.endswith('raw capture [x] must be str, not Annotated[str, "d"]')


class _FakeBoundary:
    synthetic_calls = 0

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result

    def produce(self, state: Any, template: str, schema: Any) -> dict[str, Any]:
        return self.result


def test_model_output_is_strictly_validated(kedi):
    program = kedi(">> Count: [n: int]\n= `n`\n")
    program._unit.runtime._boundary = _FakeBoundary({"n": "5"})
    with pytest.raises(KediTypeExecutionError, match=r"model output \[n\] expects int, got '5'"):
        program.run()


def test_custom_type_output(run):
    model = ScriptedModel(fields={"item": {"sku": "A1", "qty": 2}})
    src = """
    ~Line(sku: str, qty: int)
    >> Extract [item: Line]
    = `(type(item).__name__, item.qty)`
    """
    assert run(src, model=model) == ("Line", 2)


def test_instructions_rendered_at_call_time_in_directive_environment(run):
    model = ScriptedModel()
    src = """
    [tone] = calm
    > instructions: Be <tone>.
    [tone] = terse
    >> hi
    = ok
    """
    assert run(src, model=model) == "ok"
    assert model.instructions == ["Be terse."]


def test_procedure_snapshots_agent_state(run):
    model = ScriptedModel()
    src = """
    > system: first
    @ask() -> str:
      >> question
      = ok
    > instructions: second
    = <ask()>
    """
    run(src, model=model)
    assert model.instructions == ["first"]


def test_directives_in_procedure_are_undone_on_exit(run):
    model = ScriptedModel()
    src = """
    > instructions: outer
    @ask() -> str:
      > instructions: inner
      >> in procedure
      = ok
    [r] = <ask()>
    >> after
    = ok
    """
    run(src, model=model)
    assert model.instructions == ["inner", "outer"]


def test_settings_merge_by_key(run):
    model = ScriptedModel()
    src = """
    > settings:
      temperature: 0.5
      max_tokens: 10
    @ask() -> str:
      > settings:
        temperature: 0.1
      >> hi
      = ok
    = <ask()>
    """
    run(src, model=model)
    assert model.seen_settings[0]["temperature"] == 0.1
    assert model.seen_settings[0]["max_tokens"] == 10


def test_unknown_setting_is_a_clear_error(run):
    with pytest.raises(KediModelError, match="bogus"):
        run("> settings:\n  bogus: 1\n")


def test_injected_model_overrides_source_model(run):
    model = ScriptedModel(text="injected")
    src = """
    > model: openai:gpt-4o
    [x] << hi
    = `x`
    """
    assert run(src, model=model) == "injected"


def test_offline_default_counts_synthetic_calls(kedi, monkeypatch, capsys):
    monkeypatch.delenv("KEDI_ADAPTER_MODEL", raising=False)
    program = kedi("[x] << hi\n= done\n")
    assert program.synthetic_calls == 0
    assert program.run() == "done"
    assert program.synthetic_calls == 1
    assert capsys.readouterr().out == ""


def test_group_b_directive_raises_only_at_model_call(run):
    src = """
    > mcp:
      name: files
      transport: stdio
      command: x
    = no model call
    """
    assert run(src) == "no model call"
    src_call = """
    > mcp:
      name: files
      transport: stdio
      command: x
    >> hi
    """
    with pytest.raises(KediUnsupportedError) as info:
        run(src_call, model=ScriptedModel())
    assert "`> mcp:` is not supported by pytest-kedi" in info.value.message
    assert "line 1" in info.value.message


def test_other_adapter_is_unsupported_at_call(run):
    src = """
    > adapter: dspy
    >> hi
    """
    with pytest.raises(KediUnsupportedError, match="dspy"):
        run(src, model=ScriptedModel())


def test_task_statement_is_unsupported_when_run(kedi):
    src = """
    @delegate() -> str:
      > task [h]: child:
        >> do it
      = done
    """
    program = kedi(src, mode="validate")
    with pytest.raises(KediUnsupportedError, match="`> task` is not supported"):
        program.procedures["delegate"]()


def test_claim_is_one_bool_call(run):
    model = ScriptedModel(fields={"holds": False})
    src = """
    [city] = Paris
    > if: <city> is in France
      = yes
    = no
    """
    assert run(src, model=model) == "no"
    assert len(model.prompts) == 1 and "Paris is in France" in model.prompts[0]


def test_optimize_prefix_is_prepended(kedi, tmp_path):
    (tmp_path / "prog.kedi.optimized.json").write_text(
        json.dumps({"summarize": {"main": "Be concise.  "}}), encoding="utf-8"
    )
    model = ScriptedModel(fields={"summary": "s"})
    src = """
    @summarize(text: str) -> str:
      > optimize: main:
        >> Summarize <text>: [summary]
      = <summary>
    """
    program = kedi(src, mode="validate", model=model)
    assert program.procedures["summarize"]("doc") == "s"
    assert model.prompts == ["Be concise.\n\nSummarize doc: [summary]"]


def test_invalid_optimized_json_fails_loudly(kedi, tmp_path):
    (tmp_path / "prog.kedi.optimized.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(KediModelError, match=r"optimized\.json"):
        kedi("= x\n")


def test_loading_without_optimized_prompts_says_so_under_debug(kedi, monkeypatch, capsys):
    """A file without `prog.kedi.optimized.json` loads with its source prompts; under
    KEDI_DEBUG_OPTIMIZED=1 the load says so (its absence is looked up once per load)."""
    src = "@f(t: str) -> str:\n  > optimize: main:\n    >> Say <t>: [s]\n  = <s>\n"
    monkeypatch.delenv("KEDI_DEBUG_OPTIMIZED", raising=False)
    kedi(src, mode="validate")
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("KEDI_DEBUG_OPTIMIZED", "1")
    kedi(src, mode="validate")
    expected = "kedi optimized: no prog.kedi.optimized.json; using source prompts\n"
    assert capsys.readouterr() == ("", expected)


def test_auto_without_cache_is_unsupported_when_called(kedi):
    src = """
    @gen(x: str) -> str:
      > auto:
        Return the input reversed.
    """
    program = kedi(src, mode="validate")
    with pytest.raises(KediUnsupportedError, match="auto"):
        program.procedures["gen"]("abc")


def test_auto_procedure_supplied_by_cache_file(kedi, tmp_path):
    (tmp_path / "prog.cache.kedi").write_text(
        "# generated: rev\n@rev(x: str) -> str:\n  = `x[::-1]`\n", encoding="utf-8"
    )
    src = """
    @rev(x: str) -> str:
      > auto:
        Return the input reversed.
    """
    assert kedi(src, mode="validate").procedures["rev"]("abc") == "cba"


def test_tests_generated_into_the_cache_run_on_the_program_located_in_the_cache(kedi, tmp_path):
    (tmp_path / "prog.cache.kedi").write_text(
        "@rev(x: str) -> str:\n  = `x[::-1]`\n\n@test: rev:\n  > case: twice:\n"
        "    ```\n    once = rev('ab')\n    assert rev(once) == 'x'\n    ```\n",
        encoding="utf-8",
    )
    src = """
    @rev(x: str) -> str:
      > auto:
        Return the input reversed.

    @other(x: str) -> str:
      = <x>
    """
    program = kedi(src, mode="validate")
    (suite,) = program.generated_test_suites()
    assert (suite.name, [case.name for case in suite.cases]) == ("rev", ["twice"])
    with pytest.raises(KediExecutionError) as caught:
        program.run_case(suite, suite.cases[0])
    text = str(caught.value)
    assert 'prog.cache.kedi", line 5, in case twice\n    > case: twice:' in text
    assert 'prog.cache.kedi", line 8, in case twice (Python)\n    assert rev(once)' in text


def test_no_tests_are_generated_without_an_auto_procedure(kedi, tmp_path):
    (tmp_path / "prog.cache.kedi").write_text("@test: rev:\n  > case: c:\n    `pass`\n")
    assert kedi("@rev(x: str) -> str:\n  = <x>\n", mode="validate").generated_test_suites() == ()


def test_requires_unadvertised_capability_fails_at_model_call(run):
    assert run("> requires: structured_output\n>> hi [x]\n= <x>\n", model=ScriptedModel()) == "text"
    with pytest.raises(KediUnsupportedError, match="mcp"):
        run("> requires: mcp\n>> hi [x]\n", model=ScriptedModel())


def test_an_unadvertised_requirement_names_its_own_line(run):
    """Not the line of the model call that found it (as the other markers do)."""
    source = "> requires: mcp\n\n@p() -> str:\n  > requires:\n    settings\n    subagents\n"
    source += "  [x] << hi\n  = <x>\n\n= <p()>\n"
    with pytest.raises(KediUnsupportedError) as caught:
        run(source, model=ScriptedModel())
    assert "`> requires: mcp` is not supported by pytest-kedi (line 1)" in str(caught.value)
    inner = source.replace("> requires: mcp\n", "[y] = one\n")
    with pytest.raises(KediUnsupportedError) as caught:
        run(inner, model=ScriptedModel())
    assert "`> requires: subagents` is not supported by pytest-kedi (line 4)" in str(caught.value)


def test_hooks_toggle_is_a_no_op(run):
    assert run("> hooks: disabled\n[x] << hi\n= <x>\n", model=ScriptedModel()) == "text"


def test_model_directive_from_backtick(run):
    model = ScriptedModel(text="ok")
    assert run("> model: `'openai' + ':gpt-4o'`\n[x] << hi\n= <x>\n", model=model) == "ok"


def test_instructions_block_rows_join_with_newlines(run):
    model = ScriptedModel()
    src = """
    > instructions:
      First rule.
      Second <`1 + 1`>.
    >> hi
    = ok
    """
    run(src, model=model)
    assert model.instructions == ["First rule.\nSecond 2."]


def test_stale_optimized_entries_warn(kedi, tmp_path):
    (tmp_path / "prog.kedi.optimized.json").write_text(
        json.dumps({"gone": {"main": "x"}}), encoding="utf-8"
    )
    with pytest.warns(UserWarning, match="stale optimized prompt"):
        kedi("@f() -> str:\n  = x\n")


def test_an_output_field_shadowing_basemodel_warns_at_its_kedi_line_once(kedi):
    """The warning named pytest-kedi's own source (`runtime/model/adapter.py:229`) and
    showed that line; it names the field's `.kedi` line, once per location (the `default`
    action), however many calls and procedure builds run the template."""
    import warnings

    from pytest_kedi.runtime import procedures

    src = "@f(x: str) -> str:\n  >> About <x>: [json] and [label]\n  = <json>\n"
    model = ScriptedModel(fields={"json": "j", "label": "l"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        program = kedi(src, mode="validate", model=model)
        for index in range(procedures.BUILD_AFTER + 5):  # interpreted, then generated
            assert program.procedures["f"](str(index)) == "j"
    shadowing = [w for w in caught if "shadows an attribute" in str(w.message)]
    assert [(str(w.message), w.lineno) for w in shadowing] == [
        ('output field "json" shadows an attribute of pydantic.BaseModel', 2)
    ]
    assert shadowing[0].filename.endswith("prog.kedi")


def test_a_settings_mapping_whose_own_code_fails_is_located(run):
    """A mapping class raising in its `items()` escaped as a bare Python error from
    pytest-kedi's directive code: no Kedi stack trace, no `.kedi` line."""
    src = """
    ```
    class Settings(dict):
        def items(self):
            raise RuntimeError("bad items")
    ```
    > settings: `Settings(temperature=1.0)`
    = done
    """
    with pytest.raises(KediExecutionError) as caught:
        run(src)
    rendered = caught.value.render()
    assert rendered.startswith("Kedi stack trace:")
    assert "line 6, in <program>\n    > settings: `Settings(temperature=1.0)`" in rendered
    assert 'line 4, in <prelude> (Python)\n    raise RuntimeError("bad items")' in rendered
    assert rendered.endswith("RuntimeError: bad items")


def test_a_model_name_is_read_without_the_values_own_methods(run):
    """A `str` subclass overriding `strip` had that override run by `> model:` (its error
    escaped unlocated); the name is the string's own text."""
    src = """
    ```
    class Name(str):
        def strip(self):
            raise RuntimeError("bad strip")
    ```
    > model: `Name(" test ")`
    >> Say [x]
    = <x>
    """
    assert run(src) == "a"


def test_an_adapter_value_that_is_no_str_is_a_located_error(run):
    """`> adapter:` ran the value's own `__str__`: its error escaped unlocated."""
    src = """
    ```
    class Name:
        def __str__(self):
            raise RuntimeError("no str")
    ```
    > adapter: `Name()`
    = done
    """
    with pytest.raises(KediTypeExecutionError) as caught:
        run(src)
    assert "> adapter: expects an adapter name (str), got <" in str(caught.value)
