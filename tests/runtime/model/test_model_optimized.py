"""`<file>.kedi.optimized.json` prefixes (docs/language.md#model-directives) and claim prompts
(§9.3)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from pytest_kedi.runtime.model import (
    CLAIM_FIELD,
    CLAIM_SCHEMA,
    AgentState,
    InvalidOptimizedPrompts,
    ModelBoundary,
    ModelError,
    apply_optimized_prefix,
    claim_prompt,
    load_optimized,
    optimized_path,
)


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.kedi"
    path.write_text("@f() -> str:\n  = x\n", encoding="utf-8")
    return path


def test_sibling_path(program: Path) -> None:
    assert optimized_path(program) == program.parent / "prog.kedi.optimized.json"


def test_missing_artifact_gives_no_prefixes(program: Path) -> None:
    assert load_optimized(program) == {}


def test_valid_artifact_is_loaded(program: Path) -> None:
    data = {"summarize": {"main": "Be terse."}, "other": {}}
    optimized_path(program).write_text(json.dumps(data), encoding="utf-8")
    assert load_optimized(str(program)) == data


def test_invalid_json_fails_loudly_naming_the_file(program: Path) -> None:
    optimized_path(program).write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        load_optimized(program)
    assert str(caught.value).startswith(f"invalid optimized prompts in {optimized_path(program)}:")


def test_json_nested_too_deeply_fails_naming_the_file(program: Path) -> None:
    """It was a bare `RecursionError` (``pytest-kedi internal error``, a failed case)."""
    optimized_path(program).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(InvalidOptimizedPrompts) as caught:
        load_optimized(program)
    assert str(caught.value) == (
        f"invalid optimized prompts in {optimized_path(program)}: JSON nested too deeply"
    )


@pytest.mark.parametrize(
    "data", [[1, 2], {"proc": "prefix"}, {"proc": {"span": 3}}, "text", {"proc": None}]
)
def test_invalid_shape_fails_loudly_naming_the_file(program: Path, data: object) -> None:
    optimized_path(program).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        ModelError, match=r"invalid optimized prompts in .*prog\.kedi\.optimized\.json"
    ):
        load_optimized(program)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"p": {"s": "a"},\n "q": [1]}', (2, 2)),
        ('{"q": {"s": "a"},\n "p": {"q": 1}}', (2, 8)),
        ('{"q": {"q": "a"}, "p": {\n  "q": null}}', (2, 3)),
        ("[\n1]", (1, 1)),
        ('{"p":\n  {"s": "a",}}', (2, 13)),
    ],
)
def test_invalid_artifact_is_located(program: Path, text: str, where: tuple[int, int]) -> None:
    """The error names the artifact's line and column of the failing entry."""
    optimized_path(program).write_text(text, encoding="utf-8")
    with pytest.raises(InvalidOptimizedPrompts) as caught:
        load_optimized(program)
    assert (caught.value.line, caught.value.column) == where
    assert caught.value.snippet == text.splitlines()[where[0] - 1]


def test_debug_details_go_to_stderr(program: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("KEDI_DEBUG_OPTIMIZED", "1")
    load_optimized(program)
    optimized_path(program).write_text('{"p": {"s": "abc"}}', encoding="utf-8")
    load_optimized(program)
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "kedi optimized: no prog.kedi.optimized.json; using source prompts",
        "kedi optimized: prog.kedi.optimized.json: p.s: prefix of 3 characters",
    ]


def test_no_debug_output_by_default(program: Path, capsys) -> None:
    optimized_path(program).write_text('{"p": {"s": "abc"}}', encoding="utf-8")
    load_optimized(program)
    assert capsys.readouterr() == ("", "")


def test_stale_names_warn(program: Path) -> None:
    optimized_path(program).write_text('{"p": {"s": "a", "gone": "b"}}', encoding="utf-8")
    with pytest.warns(
        UserWarning, match=r"stale optimized prompt .*`> optimize: gone:` in @p"
    ) as caught:
        assert load_optimized(program, known_spans={"p": ["s"]}) == {"p": {"s": "a", "gone": "b"}}
    # located at the artifact, not at pytest-kedi's code (which a user's stderr showed)
    assert [(w.filename, w.lineno) for w in caught] == [(str(optimized_path(program)), 1)]


def test_a_stale_name_under_w_error_is_located_at_the_artifact(program: Path) -> None:
    """Under ``-W error`` the stale-entry warning was raised from pytest-kedi's code: the
    CLI called it an internal error and pytest showed pytest-kedi's frames."""
    from pytest_kedi.runtime import load
    from pytest_kedi.runtime.errors import KediExecutionError

    program.write_text("@p() -> str:\n  > optimize: s:\n    >> hi [x]\n  = <x>\n")
    optimized_path(program).write_text('{"p": {"s": "a", "gone": "b"}}', encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning) as info:
            load(program, mode="validate")
    error = info.value
    assert isinstance(error, KediExecutionError)
    assert str(error).splitlines() == [
        "Kedi stack trace:",
        f'  File "{optimized_path(program)}", line 1, in <optimized prompts>',
        f"UserWarning: stale optimized prompt in {optimized_path(program)}: no "
        "`> optimize: gone:` in @p",
    ]


def test_prefix_injection() -> None:
    assert (
        apply_optimized_prefix("Be terse.\n\n\n", "Summarize <t>") == "Be terse.\n\nSummarize <t>"
    )
    assert apply_optimized_prefix(None, "T") == "T"
    assert apply_optimized_prefix("  \n", "T") == "T"


def test_claim_prompt_quotes_the_claim_verbatim() -> None:
    claim = 'Ankara is the capital of "Turkey"'
    prompt = claim_prompt(claim)
    assert f'"""\n{claim}\n"""' in prompt
    assert "cannot be established" in prompt
    assert "answer false" in prompt
    assert f"[{CLAIM_FIELD}]" in prompt


def test_claim_prompt_quoting_outlasts_the_claims_own_quotes() -> None:
    """A claim holding triple quotes is quoted by a longer run, so its quotes never close
    the quoting; other claims keep the triple quotes (and their recorded keys)."""
    claim = 'the docstring \'"""x"""\' and "" ""\'\'\'"""" end here'
    prompt = claim_prompt(claim)
    assert f'"""""\n{claim}\n"""""\n' in prompt
    assert claim_prompt("plain").count('"""') == 2


def test_claim_is_one_bool_structured_call(recorder) -> None:
    rec = recorder(lambda info: {CLAIM_FIELD: True})
    result = ModelBoundary(rec.model).produce(AgentState(), claim_prompt("x > 1"), CLAIM_SCHEMA)
    assert result == {"holds": True}
    (tool,) = rec.infos[0].output_tools
    assert tool.parameters_json_schema["properties"]["holds"]["type"] == "boolean"
    assert len(rec.infos) == 1
