"""Cassette keys and entries do not depend on how pydantic-ai serializes its messages: a
cassette recorded with one pydantic-ai release replays under another, and an entry is the
answer without the fields that hold their default value. Cassettes of an older format are
named as such, never misread."""

from __future__ import annotations

import dataclasses
import datetime
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic_ai import messages as pai_messages
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RequestUsage,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from pytest_kedi.errors import ModelError
from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load
from pytest_kedi.runtime.model import cassettefiles, direct
from pytest_kedi.runtime.model.cassettes import (
    CASSETTE_VERSION,
    CassetteBook,
    read_cassette,
    request_key,
)
from pytest_kedi.runtime.model.policy import ModelPolicy

PROGRAM = """\
@label(text: str) -> str:
  >> Label <text> [word: str]
  = <word>

@eval: label:
  > data: rows:
    = `[("one", "w-one"), ("two", "w-two")]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""


@dataclasses.dataclass(repr=False)
class NewerRequest(ModelRequest):
    """`ModelRequest` as a later pydantic-ai release might have it: one more field."""

    introduced_later: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(repr=False)
class NewerParameters(ModelRequestParameters):
    introduced_later: str | None = None


def _parameters(cls: type[ModelRequestParameters] = ModelRequestParameters) -> Any:
    schema = {"type": "object", "properties": {"word": {"type": "string"}}}
    return cls(output_tools=[ToolDefinition(name="final_result", parameters_json_schema=schema)])


def _key(messages: list[ModelMessage], parameters: ModelRequestParameters | None = None) -> str:
    return request_key("m", messages, {"temperature": 0}, parameters or _parameters(), 0)


def test_a_field_added_with_its_default_value_keeps_every_key() -> None:
    base = _key([ModelRequest(parts=[UserPromptPart("hi")], instructions="be brief")])
    newer = NewerRequest(parts=[UserPromptPart("hi")], instructions="be brief")
    assert _key([newer]) == base
    assert (
        _key(
            [ModelRequest(parts=[UserPromptPart("hi")], instructions="be brief")],
            _parameters(NewerParameters),
        )
        == base
    )
    # a value the model is sent still counts
    newer.introduced_later = ["shapes the request"]
    assert _key([newer]) != base


def _retry_conversation(
    answer: ModelResponse, retry: pai_messages.ModelRequestPart
) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart("hi")]), answer, ModelRequest(parts=[retry])]


def test_where_an_answer_came_from_is_not_part_of_a_key() -> None:
    def answer(**origin: Any) -> ModelResponse:
        call = ToolCallPart("final_result", {"word": 1}, tool_call_id="call-1")
        return ModelResponse(parts=[call], **origin)

    retry = pai_messages.UserPromptPart("try again")
    plain = _key(_retry_conversation(answer(), retry))
    dressed = answer(
        model_name="gpt-x-2026-01-01",
        usage=RequestUsage(input_tokens=12, output_tokens=3),
        timestamp=datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC),
        provider_name="openai",
        provider_response_id="resp-42",
        finish_reason="tool_call",
    )
    assert _key(_retry_conversation(dressed, retry)) == plain
    what_it_said = ModelResponse(
        parts=[ToolCallPart("final_result", {"word": 2}, tool_call_id="call-1")]
    )
    assert _key(_retry_conversation(what_it_said, retry)) != plain


def test_validation_feedback_has_one_key_whichever_part_carries_it() -> None:
    # pydantic-ai releases differ in the part that carries validation feedback: an older
    # `RetryPromptPart`, or a `ToolReturnPart` with outcome "retried". The model is sent the
    # same content, so a cassette recorded with either replays with the other.
    class Output(BaseModel):
        word: int

    with pytest.raises(ValidationError) as info:
        Output.model_validate({"word": "big"})
    call = ToolCallPart("final_result", {"word": "big"}, tool_call_id="call-1")
    answer = ModelResponse(parts=[call])
    content = direct._errors(info.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in newer releases
        older = pai_messages.RetryPromptPart(
            content=content, tool_name="final_result", tool_call_id="call-1"
        )
    keys = {_key(_retry_conversation(answer, older))}
    if hasattr(pai_messages, "RetryFeedbackPart"):
        newer = pai_messages.ToolReturnPart(
            tool_name="final_result", content=content, tool_call_id="call-1", outcome="retried"
        )
        keys.add(_key(_retry_conversation(answer, newer)))
    keys.add(_key(_retry_conversation(answer, direct._tool_retry(info.value, call))))
    assert len(keys) == 1


def _echo_model(calls: list[str]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        calls.append(prompt)
        word = "w-" + prompt.split()[1]
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"word": word})])

    return FunctionModel(respond)


def _run(path: Path, model: FunctionModel, book: CassetteBook) -> Any:
    policy = ModelPolicy(cassettes=book, cassette=path.with_name(path.name + ".cassette.json"))
    program = load(str(path), mode="validate", model=model, model_policy=policy)
    (suite,) = program.module.eval_suites
    return run_suite(program, suite, EvalOptions())


def _recorded(tmp_path: Path) -> Path:
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    book = CassetteBook("record")
    assert _run(path, _echo_model([]), book).score == 1.0
    book.save(prune=False)
    return tmp_path / "label.kedi.cassette.json"


def test_an_entry_stores_the_answer_without_its_default_valued_fields(tmp_path: Path) -> None:
    cassette = _recorded(tmp_path)
    document = json.loads(cassette.read_text(encoding="utf-8"))
    assert document["version"] == CASSETTE_VERSION == 2
    (entry, _) = document["entries"].values()
    response = entry["response"]
    assert response["kind"] == "response"
    assert [part["part_kind"] for part in response["parts"]] == ["tool-call"]
    assert response["parts"][0]["args"] == {"word": "w-one"} or response["parts"][0]["args"] == {
        "word": "w-two"
    }

    def nulls(value: Any) -> list[Any]:
        if isinstance(value, dict):
            return [k for k, v in value.items() if v is None] + [
                n for v in value.values() for n in nulls(v)
            ]
        if isinstance(value, list):
            return [n for v in value for n in nulls(v)]
        return []

    assert nulls(response) == []
    # and the trimmed answer replays, on both replay paths
    calls: list[str] = []
    assert _run(tmp_path / "label.kedi", _echo_model(calls), CassetteBook("strict")).score == 1.0
    assert calls == []


def _as_format_1(cassette: Path) -> None:
    document = json.loads(cassette.read_text(encoding="utf-8"))
    document["version"] = 1
    cassette.write_text(json.dumps(document), encoding="utf-8")


def test_a_cassette_in_an_older_format_is_named_on_a_strict_miss(tmp_path: Path) -> None:
    cassette = _recorded(tmp_path)
    _as_format_1(cassette)
    assert read_cassette(cassette) == {}
    calls: list[str] = []
    result = _run(tmp_path / "label.kedi", _echo_model(calls), CassetteBook("strict"))
    assert result.errors_by_class == {"cassette_miss": 2}
    assert calls == []
    error = result.rows[0].error
    assert "label.kedi.cassette.json" in error
    assert "the cassette is in format 1, written by an older pytest-kedi" in error
    assert "record it again" in error


def test_recording_replaces_a_cassette_in_an_older_format(tmp_path: Path) -> None:
    cassette = _recorded(tmp_path)
    _as_format_1(cassette)
    calls: list[str] = []
    book = CassetteBook("replay")
    assert _run(tmp_path / "label.kedi", _echo_model(calls), book).score == 1.0
    assert len(calls) == 2
    book.save(prune=False)
    document = json.loads(cassette.read_text(encoding="utf-8"))
    assert document["version"] == CASSETTE_VERSION
    assert len(document["entries"]) == 2


def test_a_cassette_from_a_newer_pytest_kedi_is_refused_and_kept(tmp_path: Path) -> None:
    cassette = _recorded(tmp_path)
    document = json.loads(cassette.read_text(encoding="utf-8"))
    document["version"] = CASSETTE_VERSION + 1
    text = json.dumps(document)
    cassette.write_text(text, encoding="utf-8")
    with pytest.raises(ModelError, match=r"format 3, written by a newer pytest-kedi"):
        read_cassette(cassette)
    book = CassetteBook("replay")
    result = _run(tmp_path / "label.kedi", _echo_model([]), book)
    assert result.errors_by_class == {"model": 2}
    assert "upgrade pytest-kedi" in result.rows[0].error
    assert book.save(prune=False) == []
    assert cassette.read_text(encoding="utf-8") == text


def test_a_replay_reads_only_the_entries_it_uses_from_a_written_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cassette in the layout pytest-kedi writes is cut into one text per entry, each parsed
    # when a call uses it; the whole document is never parsed on the replay path.
    cassette = _recorded(tmp_path)
    entries = read_cassette(cassette)
    version, index = cassettefiles.index_cassette(cassette)
    assert version == CASSETTE_VERSION
    assert set(index) == set(entries)
    assert all(isinstance(text, str) for text in index.values())
    assert {k: cassettefiles.entry_from_text(cassette, k, t) for k, t in index.items()} == entries
    monkeypatch.setattr(cassettefiles, "_parse", lambda text: pytest.fail("parsed whole"))
    calls: list[str] = []
    assert _run(tmp_path / "label.kedi", _echo_model(calls), CassetteBook("strict")).score == 1.0
    assert calls == []


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: json.dumps(json.loads(text)),  # one line
        lambda text: json.dumps(json.loads(text), indent=4),
        lambda text: text.replace('{\n  "entries"', '{"entries"', 1),
        lambda text: text.rstrip("\n"),
    ],
    ids=["one-line", "indent-4", "edited-head", "no-final-newline"],
)
def test_a_cassette_in_another_layout_is_read_whole_with_the_same_answers(
    tmp_path: Path, edit: Any
) -> None:
    cassette = _recorded(tmp_path)
    entries = read_cassette(cassette)
    cassette.write_text(edit(cassette.read_text(encoding="utf-8")), encoding="utf-8")
    version, index = cassettefiles.index_cassette(cassette)
    assert (version, index) == (CASSETTE_VERSION, entries)
    calls: list[str] = []
    assert _run(tmp_path / "label.kedi", _echo_model(calls), CassetteBook("strict")).score == 1.0
    assert calls == []


def test_a_damaged_entry_is_a_located_model_error_when_it_is_used(tmp_path: Path) -> None:
    cassette = _recorded(tmp_path)
    text = cassette.read_text(encoding="utf-8")
    cassette.write_text(text.replace('"word": "w-one"', '"word": w-one', 1), encoding="utf-8")
    result = _run(tmp_path / "label.kedi", _echo_model([]), CassetteBook("strict"))
    assert [row.error_class for row in result.rows] == ["model", None]
    error = result.rows[0].error
    assert "label.kedi.cassette.json is not a pytest-kedi cassette: entry " in error
    assert "\n" not in error.split(": ", 1)[1]


def _indexed(cassette: Path) -> dict[str, Any]:
    _, index = cassettefiles.index_cassette(cassette)
    return {
        key: cassettefiles.entry_from_text(cassette, key, text) if isinstance(text, str) else text
        for key, text in index.items()
    }


def test_an_entry_key_written_twice_reads_as_json_does(tmp_path: Path) -> None:
    # A hand-merged cassette can hold one key twice: the later entry wins, as in JSON.
    cassette = tmp_path / "dup.kedi.cassette.json"
    first, second, third = "a" * 64, "b" * 64, "c" * 64
    cassettefiles.write_cassette(cassette, {first: {"v": 1}, second: {"v": 2}, third: {"v": 3}})
    text = cassette.read_text(encoding="utf-8").replace(f'"{second}"', f'"{first}"')
    cassette.write_text(text, encoding="utf-8")
    assert _indexed(cassette) == read_cassette(cassette) == {first: {"v": 2}, third: {"v": 3}}


@pytest.mark.parametrize("where", [0, 1, 2])
def test_an_entry_on_one_line_is_read_as_json_reads_it(tmp_path: Path, where: int) -> None:
    cassette = tmp_path / "flat.kedi.cassette.json"
    entries: dict[str, Any] = {key * 64: {"v": index} for index, key in enumerate("abc")}
    entries["abc"[where] * 64] = {}  # written as `{}`, on its key's line
    cassettefiles.write_cassette(cassette, entries)
    assert _indexed(cassette) == read_cassette(cassette) == entries


def test_a_cassette_nested_too_deeply_is_not_a_cassette(tmp_path: Path) -> None:
    """It was ``model call failed (...): RecursionError: maximum recursion depth exceeded``."""
    cassette = tmp_path / "label.kedi.cassette.json"
    cassette.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        read_cassette(cassette)
    assert str(caught.value) == (
        f"cassette {cassette} is not a pytest-kedi cassette: JSON nested too deeply"
    )


def test_an_unreadable_cassette_is_read_once_and_fails_every_lookup_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each lookup read the damaged file again (and failed again): once per row."""
    cassette = _recorded(tmp_path)
    cassette.write_text('{"entries": {"ab', encoding="utf-8")
    reads: list[Path] = []
    read = cassettefiles._read
    monkeypatch.setattr(cassettefiles, "_read", lambda path: reads.append(path) or read(path))
    result = _run(tmp_path / "label.kedi", _echo_model([]), CassetteBook("strict"))
    assert reads == [cassette]
    assert [row.error_class for row in result.rows] == ["model", "model"]
    first, second = (row.error for row in result.rows)
    assert first == second
    assert "label.kedi:2: cassette " in first and "is not a pytest-kedi cassette: " in first


@pytest.mark.parametrize(
    ("usage", "says"),
    [
        ({"input_tokens": -1}, "response.usage.input_tokens: -1 is not a count (0 or more)"),
        ({"output_tokens": False}, "response.usage.output_tokens: false is not a count"),
        ({"cache_read_tokens": -3}, "response.usage.cache_read_tokens: -3 is not a count"),
    ],
)
def test_a_text_answer_with_an_impossible_usage_is_a_damaged_entry(
    tmp_path: Path, usage: dict[str, Any], says: str
) -> None:
    entry = {"response": {"parts": [{"part_kind": "text", "content": "hi"}], "usage": usage}}
    assert direct.stored_answer(entry) is None  # read by the validating path, which says why
    with pytest.raises(ModelError, match=r"is not a pytest-kedi cassette: entry abc: ") as caught:
        cassettefiles.stored_response(tmp_path / "x.cassette.json", "abc", entry)
    assert says in str(caught.value)
