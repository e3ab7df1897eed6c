"""Identical requests in one row, program run or dataset load: the n-th has its own cassette
entry, on every path a request takes (the model loop, the calling thread's replay)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load
from pytest_kedi.runtime.model.cassettekeys import occurrence_key
from pytest_kedi.runtime.model.cassettes import CassetteBook, CassetteModel
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.policy import ModelPolicy

PROGRAM = """\
@ask(text: str) -> str:
  >> Say <text> [label: str]
  = <label>

@tell(text: str) -> str:
  [note] << Tell <text>
  = <note>

@eval: ask:
  > data: rows:
    = `[(ask("d") + ask("d"), "AB|ab"), ("r", "AB|ab")]`
  > metric: m(rows):
    = `ask(rows) + ask(rows) + "|" + tell(rows) + tell(rows) == expected`

= `ask("z") + ask("z") + tell("z") + tell("z")`
"""


def _model(answering: bool) -> FunctionModel:
    seen: dict[str, int] = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Answers "A", "B" ... ("a", "b" ... as text) by how often it was sent the prompt."""
        assert answering, "a replayed call reached the model"
        prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        n = seen.get(prompt, 0)
        seen[prompt] = n + 1
        if info.output_tools:
            tool = info.output_tools[0]
            return ModelResponse(parts=[ToolCallPart(tool.name, {"label": "AB"[n % 2]})])
        return ModelResponse(parts=[TextPart("ab"[n % 2])])

    return FunctionModel(respond)  # (one function name: the same key parts either way)


@pytest.fixture
def loop() -> Iterator[ModelLoop]:
    with ModelLoop() as shared:
        yield shared


def _run(path: Path, mode: str, loop: ModelLoop) -> tuple[Any, list[Any]]:
    """The program's run and its suite's rows (their scores and outputs), with record
    ``mode``; the cassette is saved."""
    book = CassetteBook(mode)
    policy = ModelPolicy(cassettes=book, cassette=path.with_name(path.name + ".cassette.json"))
    model = _model(answering=mode == "record")
    ran = load(str(path), model=model, model_policy=policy, model_loop=loop).run()
    program = load(str(path), mode="validate", model=model, model_policy=policy, model_loop=loop)
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite, EvalOptions(repeat=2))
    book.save(prune=False)
    return ran, [(row.scores, row.output, row.error) for row in result.rows]


@pytest.mark.parametrize("fast", [True, False], ids=["calling-thread", "model-loop"])
def test_each_identical_request_replays_its_own_answer(
    tmp_path: Path, loop: ModelLoop, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """One entry served identical requests: a replay answered them all with the answer
    recorded last ("BBbb" where the recording saw "ABab")."""
    path = tmp_path / "twice.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    recorded = _run(path, "record", loop)
    assert recorded == ("ABab", [([1.0, 1.0], "'A'; 'B'", None)] * 2)
    cassette = json.loads(path.with_name("twice.kedi.cassette.json").read_text("utf-8"))
    # per repeat of each row (0, 1), the program run (z) and the dataset's load (d)
    counted = sorted(
        (e["prompt"], e["repeat"], e.get("occurrence", 0)) for e in cassette["entries"].values()
    )
    assert counted == sorted(
        (prompt, repeat, occurrence)
        for prompt, repeats in [
            ("Say d [label]", (0,)),
            ("Say z [label]", (0,)),
            ("Tell z", (0,)),
            ("Say r [label]", (0, 1)),
            ("Tell r", (0, 1)),
            ("Say AB [label]", (0, 1)),
            ("Tell AB", (0, 1)),
        ]
        for repeat in repeats
        for occurrence in (0, 1)
    )
    if not fast:
        monkeypatch.setattr(CassetteModel, "replay_template", lambda self, *args: None)
    assert _run(path, "strict", loop) == recorded


def test_the_first_occurrence_keeps_the_requests_key() -> None:
    key = "0" * 64
    assert occurrence_key(key, 0) == key  # the key cassettes were recorded with
    later = {occurrence_key(key, n) for n in (1, 2, 3)}
    assert len(later) == 3 and key not in later
    assert occurrence_key("1" * 64, 1) not in later
