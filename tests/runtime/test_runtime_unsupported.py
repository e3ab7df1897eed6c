"""Group-(b) constructs (docs/language.md#unsupported-directives, docs/language.md#support-matrix,
docs/language.md#tasks, docs/language.md#newer-directives): files containing them load and
run; the clear error is raised only when a model call (or the statement) needs them."""

from __future__ import annotations

import pytest
from kedi_scripted_model import ScriptedModel

from pytest_kedi.runtime.errors import KediExecutionError, KediUnsupportedError

DIRECTIVES = {
    "> agent:": "> agent: claude",
    "> effort:": "> effort: high",
    "> history:": "> history: enabled",
    "> artifacts:": "> artifacts:\n  enabled: true",
    "> approval:": "> approval: allow",
    "> use:": "> use: reviewer",
    "> skills:": "> skills: enabled",
    "> codemode:": "> codemode: enabled",
    "> budget:": "> budget:\n  request_limit: 3",
    "> hooks:": "> hooks:\n  pre_tool_use: `print`",
    "> adapter: langchain": "> adapter: langchain",
}


@pytest.mark.parametrize("construct", sorted(DIRECTIVES))
def test_directive_is_inert_until_a_model_call(run, construct: str) -> None:
    directive = DIRECTIVES[construct]
    assert run(f"{directive}\n= no call\n") == "no call"
    with pytest.raises(KediUnsupportedError) as info:
        run(f"{directive}\n>> hi\n", model=ScriptedModel())
    assert info.value.message == f"`{construct}` is not supported by pytest-kedi (line 1)"
    assert str(info.value).splitlines()[-1].startswith("KediUnsupportedError: ")


def test_marker_is_lexical(run):
    src = """
    @isolated() -> str:
      > mcp:
        name: files
        transport: stdio
        command: x
      = fine
    [r] = <isolated()>
    [x] << hi
    = <x>
    """
    assert run(src, model=ScriptedModel(text="reply")) == "reply"


@pytest.mark.parametrize("name", ["history", "artifacts"])
def test_history_and_artifacts_disabled_are_no_ops(run, name: str):
    assert run(f"> {name}: disabled\n[x] << hi\n= <x>\n", model=ScriptedModel()) == "text"


@pytest.mark.parametrize(
    "directive",
    [
        "> artifacts:\n  enabled: false\n  ttl: 3",
        "> history:\n  enabled: false",
        "> history:\n  enabled: `False`",
        '> history: `"disabled"`',
        '> artifacts: `"disabled"`',
    ],
)
def test_history_and_artifacts_turned_off_in_any_form_are_no_ops(run, directive: str):
    """A block whose `enabled:` is false (Kedi's docs turn artifacts off that way) and a
    backtick value giving `disabled` turn the feature off like `> history: disabled`; they
    raised "not supported" at the model call."""
    assert run(f"{directive}\n[x] << hi\n= <x>\n", model=ScriptedModel()) == "text"


@pytest.mark.parametrize(
    "value", ["enabled", "disabled", '`"enabled"`', '`"disabled"`', '`" enabled "`']
)
def test_hooks_enabled_or_disabled_in_any_form_are_no_ops(run, value: str):
    """KEDI.md §9.11: `enabled`/`disabled` are no-ops. A backtick value giving `enabled`
    raised "`> hooks:` is not supported" at the next model call."""
    assert run(f"> hooks: {value}\n[x] << hi\n= <x>\n", model=ScriptedModel()) == "text"


def test_hooks_backtick_value_is_evaluated_once(run, capsys):
    source = '> hooks: `print("evaluated") or "enabled"`\n[x] << hi\n= <x>\n'
    assert run(source, model=ScriptedModel()) == "text"
    assert capsys.readouterr().out == "evaluated\n"


def test_hooks_backtick_value_naming_no_toggle_still_raises(run):
    with pytest.raises(KediUnsupportedError) as info:
        run('> hooks: `"handlers"`\n[x] << hi\n= <x>\n', model=ScriptedModel())
    assert info.value.message == "`> hooks:` is not supported by pytest-kedi (line 1)"


@pytest.mark.parametrize("directive", ["> history:\n  enabled: true", '> history: `"enabled"`'])
def test_history_turned_on_in_any_form_still_raises(run, directive: str):
    with pytest.raises(KediUnsupportedError) as info:
        run(f"{directive}\n[x] << hi\n= <x>\n", model=ScriptedModel())
    assert info.value.message == "`> history:` is not supported by pytest-kedi (line 1)"


@pytest.mark.parametrize("name", ["skills", "codemode"])
def test_skills_and_codemode_raise_even_disabled(run, name: str):
    """KEDI.md §8: a clear error, no no-op allowed (only history's and artifacts')."""
    with pytest.raises(KediUnsupportedError) as info:
        run(f"> {name}: disabled\n[x] << hi\n= <x>\n", model=ScriptedModel())
    assert info.value.message.startswith(f"`> {name}:` is not supported by pytest-kedi")


@pytest.mark.parametrize(
    ("statement", "construct"),
    [
        ("> task [h]: child:\n  >> do it", "> task"),
        ("> await [r]: h", "> await"),
    ],
)
def test_task_statements_raise_when_run(run, statement: str, construct: str) -> None:
    with pytest.raises(KediUnsupportedError) as info:
        run(f"[a] = x\n{statement}\n")
    assert info.value.message.startswith(f"`{construct}` is not supported by pytest-kedi")
    assert info.value.frames[0].span.start_line == 2


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("NotAnException", "retry_on names 'NotAnException', which is not defined"),
        ("int", "retry_on names 'int', which is not an Exception class"),
        ("ValueError", None),
        ("MyErr", None),
    ],
)
def test_tool_retry_on_names_visible_exception_classes(run, name: str, error: str | None):
    """KEDI.md §9.11: resolved to visible `Exception` subclasses; any name passed before."""
    source = (
        "```\nclass MyErr(Exception): pass\n```\n"
        f"@f(x: int) -> int:\n  > tool:\n    retry_on:\n      {name}\n  = `x + 1`\n= <f(`1`)>\n"
    )
    if error is None:
        assert run(source) == 2
        return
    with pytest.raises(KediExecutionError) as info:
        run(source)
    assert info.value.message.endswith(f"prog.kedi:7:7: {error}")  # at the name


@pytest.mark.parametrize("mode", ["run", "validate"])
def test_tool_retry_on_resolves_where_the_procedure_is_defined(kedi, mode: str) -> None:
    """KEDI.md §9.11: ``retry_on`` resolves at definition. It resolved when the procedure
    ran: a procedure never called took any name, and a name declared after the procedure
    resolved."""
    never_called = "@f() -> str:\n  > tool:\n    retry_on:\n      NoSuchError\n  = ok\n= fine\n"
    late = (
        "@g() -> str:\n  > tool:\n    retry_on:\n      LateError\n  = ok\n"
        "[LateError: `type`] = `ValueError`\n= <g()>\n"
    )
    for source, name in ((never_called, "NoSuchError"), (late, "LateError")):
        with pytest.raises(KediExecutionError) as info:
            program = kedi(source, mode=mode)
            if mode == "run":
                program.run()
        assert info.value.message.endswith(
            f"prog.kedi:4:7: retry_on names {name!r}, which is not defined"
        )


_REPLACED = [
    ("> adapter: dspy", "> adapter: pydantic"),
    ("> adapter: langchain", "> adapter: pydantic"),
    ("> agent: codex", "> adapter: pydantic"),
    ("> history: enabled", "> history: disabled"),
    ("> artifacts:\n  enabled: true", "> artifacts: disabled"),
    ("> hooks:\n  pre_tool_use: `print`", "> hooks: disabled"),
]


@pytest.mark.parametrize(
    ("earlier", "later", "where"),
    [(*pair, "procedure") for pair in _REPLACED]
    # mixing `> adapter:` and `> agent:` in one scope is a parse error
    + [(*pair, "same scope") for pair in _REPLACED if not pair[0].startswith("> agent:")],
)
def test_a_later_directive_replaces_an_earlier_marker(
    run, earlier: str, later: str, where: str
) -> None:
    """KEDI.md §6.1: state layers, later winning. An earlier `> adapter: dspy` (or another
    replaced slot) kept raising after a later supported setting replaced it."""
    if where == "same scope":
        source = f"{earlier}\n{later}\n[x] << hi\n= <x>\n"
    else:
        body = "\n".join("  " + line for line in later.splitlines())
        source = f"{earlier}\n@f() -> str:\n{body}\n  [x] << hi\n  = <x>\n= <f()>\n"
    assert run(source, model=ScriptedModel(text="reply")) == "reply"


@pytest.mark.parametrize(
    ("earlier", "later", "construct", "line"),
    [
        ("> adapter: pydantic", "> adapter: dspy", "> adapter: dspy", 2),
        ("> adapter: dspy", "> adapter: langchain", "> adapter: langchain", 2),
        ("> history: disabled", "> history: enabled", "> history:", 2),
        ("> effort: low", "> effort: high", "> effort:", 2),
        ("> mcp:\n  name: a", "> adapter: pydantic", "> mcp:", 1),
        ("> artifacts:\n  enabled: true", "> artifacts:\n  ttl: 3", "> artifacts:", 3),
    ],
)
def test_a_later_unsupported_directive_is_the_one_reported(
    run, earlier: str, later: str, construct: str, line: int
) -> None:
    """The reverse order: the later directive wins, and is the one named; directives that
    add up (`> mcp:`, `> use:`, `> budget:`) are not replaced by another kind."""
    with pytest.raises(KediUnsupportedError) as info:
        run(f"{earlier}\n{later}\n[x] << hi\n= <x>\n", model=ScriptedModel())
    assert info.value.message.startswith(f"`{construct}` is not supported by pytest-kedi")
    assert info.value.message.endswith(f"(line {line})")
