"""Cassettes at the model boundary: keys, strict misses, recording and redaction."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.evals.safetext import clean_data
from pytest_kedi.runtime import load, rowscope
from pytest_kedi.runtime.model.cassettes import CassetteBook, read_cassette, request_key
from pytest_kedi.runtime.model.policy import ModelPolicy

PROGRAM = """\
@label(text: str) -> str:
  >> Label <text> [word: str]
  = <word>

@eval: label:
  > data: rows:
    = `[("one", "w-Label one [word]"), ("two", "w-Label two [word]")]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""


def _messages(prompt: str, instructions: str | None = None) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(prompt)], instructions=instructions)]


def _parameters(field: str = "word") -> ModelRequestParameters:
    schema = {"type": "object", "properties": {field: {"type": "string"}}}
    return ModelRequestParameters(
        output_tools=[ToolDefinition(name="final_result", parameters_json_schema=schema)]
    )


def test_the_key_covers_everything_that_shapes_the_answer() -> None:
    base = request_key("m", _messages("hi"), {"temperature": 0}, _parameters(), 0)
    assert base == request_key("m", _messages("hi"), {"temperature": 0}, _parameters(), 0)
    changed = [
        request_key("other", _messages("hi"), {"temperature": 0}, _parameters(), 0),
        request_key("m", _messages("hello"), {"temperature": 0}, _parameters(), 0),
        request_key("m", _messages("hi", "be brief"), {"temperature": 0}, _parameters(), 0),
        request_key("m", _messages("hi"), {"temperature": 1}, _parameters(), 0),
        request_key("m", _messages("hi"), {"temperature": 0}, _parameters("label"), 0),
        request_key("m", _messages("hi"), {"temperature": 0}, _parameters(), 1),
    ]
    assert len({base, *changed}) == 7


def _echo_model(calls: list[str]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        calls.append(prompt)
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, {"word": "w-" + prompt})]
        )

    return FunctionModel(respond)


def _run(path: Path, model: FunctionModel, book: CassetteBook) -> tuple[float, dict[str, int]]:
    policy = ModelPolicy(cassettes=book, cassette=path.with_name(path.name + ".cassette.json"))
    program = load(str(path), mode="validate", model=model, model_policy=policy)
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite, EvalOptions())
    return result.score, result.errors_by_class


def test_record_then_strict_replay_calls_the_model_once_per_request(tmp_path: Path) -> None:
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    calls: list[str] = []
    recorder = CassetteBook("record")
    assert _run(path, _echo_model(calls), recorder) == (1.0, {})
    assert len(calls) == 2
    assert recorder.save(prune=False) == [tmp_path / "label.kedi.cassette.json"]
    assert _run(path, _echo_model(calls), CassetteBook("strict")) == (1.0, {})
    assert len(calls) == 2


def test_a_strict_miss_never_calls_the_model(tmp_path: Path) -> None:
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    calls: list[str] = []
    assert _run(path, _echo_model(calls), CassetteBook("strict")) == (0.0, {"cassette_miss": 2})
    assert calls == []


def test_each_repeat_has_its_own_entry(tmp_path: Path) -> None:
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    calls: list[str] = []
    book = CassetteBook("replay")
    _run(path, _echo_model(calls), book)
    with rowscope.entered(rowscope.RowScope(repeat=1)):
        policy = ModelPolicy(cassettes=book, cassette=tmp_path / "label.kedi.cassette.json")
        program = load(str(path), mode="validate", model=_echo_model(calls), model_policy=policy)
        assert program.procedures["label"]("one") == "w-Label one [word]"
    assert len(calls) == 3
    book.save(prune=False)
    repeats = [e["repeat"] for e in read_cassette(tmp_path / "label.kedi.cassette.json").values()]
    assert sorted(repeats) == [0, 0, 1]


def test_credentials_are_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-cassette-secret-42424242"
    monkeypatch.setenv("EXAMPLE_API_KEY", secret)
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM.replace('"one"', f'"{secret}"'), encoding="utf-8")
    book = CassetteBook("record", clean=clean_data)
    _run(path, _echo_model([]), book)
    book.save(prune=False)
    text = (tmp_path / "label.kedi.cassette.json").read_text(encoding="utf-8")
    assert secret not in text
    assert "[REDACTED:EXAMPLE_API_KEY]" in text
    assert json.loads(text)["version"] == 2


def test_a_corrupt_cassette_is_a_one_line_model_error(tmp_path: Path) -> None:
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    (tmp_path / "label.kedi.cassette.json").write_text("{not json", encoding="utf-8")
    score, errors = _run(path, _echo_model([]), CassetteBook("strict"))
    assert (score, errors) == (0.0, {"model": 2})


def test_a_written_cassette_gets_the_permissions_of_any_new_file(tmp_path: Path) -> None:
    """Cassettes are committed and shared: a new one is ``0666 & ~umask`` like any file the
    user's tools write, and rewriting one keeps its mode (not a private temporary file's)."""
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    cassette = tmp_path / "label.kedi.cassette.json"
    old_mask = os.umask(0o022)
    try:
        recorder = CassetteBook("record")
        _run(path, _echo_model([]), recorder)
        recorder.save(prune=False)
        assert stat.S_IMODE(cassette.stat().st_mode) == 0o644
        cassette.chmod(0o664)
        recorder = CassetteBook("record")
        recorder.store(cassette, "0" * 64, {"response": {"parts": []}})
        recorder.save(prune=False)
        assert stat.S_IMODE(cassette.stat().st_mode) == 0o664
    finally:
        os.umask(old_mask)


def test_a_symlinked_cassette_stays_a_link(tmp_path: Path) -> None:
    """A cassette linked into a shared store is written through the link."""
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    store = tmp_path / "store"
    store.mkdir()
    target = store / "label.json"
    target.write_text('{\n  "entries": {},\n  "version": 2\n}\n', encoding="utf-8")
    link = tmp_path / "label.kedi.cassette.json"
    link.symlink_to(target)
    recorder = CassetteBook("record")
    _run(path, _echo_model([]), recorder)
    recorder.save(prune=False)
    assert link.is_symlink()
    assert len(read_cassette(target)) == 2
