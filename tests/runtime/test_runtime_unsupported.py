"""Group-(b) constructs (docs/language.md#unsupported-directives, docs/language.md#support-matrix,
docs/language.md#tasks, docs/language.md#newer-directives): files containing them load and
run; the clear error is raised only when a model call (or the statement) needs them."""

from __future__ import annotations

import pytest
from kedi_scripted_model import ScriptedModel

from pytest_kedi.runtime.errors import KediUnsupportedError

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


def test_history_disabled_is_a_no_op(run):
    assert run("> history: disabled\n[x] << hi\n= <x>\n", model=ScriptedModel()) == "text"


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
