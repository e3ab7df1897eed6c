"""Replayed calls answered in the calling thread: the same keys, results, usage and traces as
calls that go through the model loop."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RequestUsage,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings

from pytest_kedi.evals import EvalOptions, SuiteResult, run_suite
from pytest_kedi.runtime import load, rowscope
from pytest_kedi.runtime.model.budget import RequestBudget
from pytest_kedi.runtime.model.cassettes import CassetteBook, CassetteModel
from pytest_kedi.runtime.model.direct import CallStats, OutputPlan, request_output
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.policy import ModelPolicy
from pytest_kedi.runtime.model.retrying import RetryPolicy
from pytest_kedi.runtime.model.schema import build_output_model, normalize_schema

HERE = Path(__file__).parent

#: The pydantic-ai version that recorded `legacy_cassette.json`; the tests replay it with
#: whichever version is installed (the dependency floor's too): keys do not depend on it.
RECORDED_WITH_PYDANTIC_AI = "2.62.0"

#: The program `legacy_cassette.json` was recorded for, through the model loop (no calls
#: answered in the calling thread: record mode), with `respond` and ``repeat=2``. Its
#: "retry me" row's first structured answer fails validation, so that call made a second
#: request (the validation retry), also recorded.
LEGACY_PROGRAM = """\
> instructions: Answer briefly, café style.
> settings:
  temperature: 0
  max_tokens: 64

@label(text: str) -> str:
  >> Label "<text>" with one word: [word: str] [size: int]
  [note] << Say one thing about <text>
  > if: the text <text> is short
    = <word>
  = `word + "-" + note`

@eval: label:
  > data: rows:
    = `[("one", "yes"), ("two\\nlines \\\\ {x}", "yes"), ("émoji 🐱 \\u2028", "yes"), \
("retry me", "yes")]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The recording model (its function name is part of every key)."""
    prompt = str(messages[0].parts[-1].content)  # type: ignore[union-attr]
    usage = RequestUsage(input_tokens=len(prompt), output_tokens=3)
    if info.output_tools:
        tool = info.output_tools[0]
        fields = tool.parameters_json_schema.get("properties", {})
        if "holds" in fields:
            holds = "one" in prompt or "retry" in prompt
            return ModelResponse(parts=[ToolCallPart(tool.name, {"holds": holds})], usage=usage)
        if "retry me" in prompt and len(messages) == 1:
            args: dict[str, Any] = {"word": "yes", "size": "big"}
        else:
            args = {"word": "yes", "size": len(prompt)}
        return ModelResponse(parts=[ToolCallPart(tool.name, args)], usage=usage)
    return ModelResponse(parts=[TextPart("noted")], usage=usage)


def refusing() -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("a replayed call reached the model")

    return FunctionModel(respond)


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    path = tmp_path / "legacy.kedi"
    path.write_text(LEGACY_PROGRAM, encoding="utf-8")
    shutil.copy(HERE / "legacy_cassette.json", tmp_path / "legacy.kedi.cassette.json")
    return path


@pytest.fixture
def loop() -> Iterator[ModelLoop]:
    with ModelLoop() as shared:
        yield shared


def _suite(
    path: Path,
    book: CassetteBook,
    loop: ModelLoop,
    model: FunctionModel,
    policy: ModelPolicy | None = None,
) -> tuple[SuiteResult, int]:
    """The suite of ``path`` replayed (``repeat=2``, traced) and how many calls went
    through the model loop."""
    base = policy or ModelPolicy()
    policy = dataclasses.replace(
        base, cassettes=book, cassette=path.with_name(path.name + ".cassette.json")
    )
    program = load(str(path), mode="validate", model=model, model_policy=policy, model_loop=loop)
    runs = 0
    run = loop.run

    def counting(coro: Any) -> Any:
        nonlocal runs
        runs += 1
        return run(coro)

    loop.run = counting  # type: ignore[method-assign]
    try:
        (suite,) = program.module.eval_suites
        return run_suite(program, suite, EvalOptions(repeat=2, trace=True)), runs
    finally:
        del loop.run


def _rows(result: SuiteResult) -> list[dict[str, Any]]:
    rows = []
    for row in result.rows:
        data = row.to_json()
        del data["duration_s"]
        for call in data["calls"]:
            del call["duration_s"]
        rows.append(data)
    return rows


def test_a_cassette_recorded_before_the_fast_path_replays_in_the_calling_thread(
    legacy: Path, loop: ModelLoop
) -> None:
    result, runs = _suite(legacy, CassetteBook("strict"), loop, refusing())
    assert result.errors_by_class == {}
    assert [row.scores for row in result.rows] == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    assert [row.output for row in result.rows] == ["'yes'", "'yes-noted'", "'yes-noted'", "'yes'"]
    # 24 calls; only the two whose stored first answer fails validation used the loop
    assert runs == 2
    assert sum(len(row.calls) for row in result.rows) == 24
    # the validation retry's second request is counted, as on the loop
    assert [row.usage.requests for row in result.rows] == [6, 6, 6, 8]


def test_the_fast_path_and_the_loop_give_the_same_rows_usage_and_traces(
    legacy: Path, loop: ModelLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = RequestBudget(1)
    policy = ModelPolicy(retry=RetryPolicy(2), budget=budget)
    fast, fast_runs = _suite(legacy, CassetteBook("strict"), loop, refusing(), policy)
    monkeypatch.setattr(CassetteModel, "replay_template", lambda self, *args: None)
    slow, slow_runs = _suite(legacy, CassetteBook("strict"), loop, refusing(), policy)
    assert (fast_runs, slow_runs) == (2, 24)
    assert _rows(fast) == _rows(slow)
    assert fast.usage == slow.usage
    assert budget.spent == 0  # replayed answers are not requests, either way


def test_a_strict_miss_on_the_fast_path_is_the_same_cassette_miss(
    legacy: Path, loop: ModelLoop
) -> None:
    legacy.write_text(LEGACY_PROGRAM.replace('("one", "yes")', '("three", "yes")'), "utf-8")
    result, _ = _suite(legacy, CassetteBook("strict"), loop, refusing())
    first = result.rows[0]
    assert first.error_class == "cassette_miss"
    assert first.error is not None
    assert "legacy.kedi.cassette.json" in first.error
    assert "procedure label" in first.error
    assert "prompt 'Label \"three\" with one word: [word] [size]'" in first.error
    assert [row.error_class for row in result.rows[1:]] == [None, None, None]


def test_a_replay_miss_calls_the_model_and_records(legacy: Path, loop: ModelLoop) -> None:
    legacy.write_text(LEGACY_PROGRAM.replace('("one", "yes")', '("three", "yes")'), "utf-8")
    book = CassetteBook("replay")
    result, runs = _suite(legacy, book, loop, FunctionModel(respond))
    assert result.errors_by_class == {}
    # the new row's 3 calls per repeat miss and go to the model; so do the two retried calls
    assert runs == 8
    assert [row.usage.requests for row in result.rows] == [6, 6, 6, 8]
    (part,) = book.export().values()
    assert len(part["new"]) == 6


PROMPTS = [
    "plain",
    'quotes " and \\ backslash',
    "new\nline\ttab \u2028 \u2029",
    "émoji 🐱 and control \x01",
    "kedi-prompt-lookalike",
    "a lone surrogate \ud800, a pair \ud83d\ude00",
]


@pytest.mark.parametrize("instructions", [None, "Be brief, café."])
@pytest.mark.parametrize("settings", [None, {"temperature": 0.5, "max_tokens": 9}])
@pytest.mark.parametrize("structured", [True, False])
def test_a_call_recorded_through_the_loop_replays_in_the_calling_thread(
    instructions: str | None, settings: dict[str, Any] | None, structured: bool
) -> None:
    """Every key the loop path records is the key the calling thread looks up."""
    plan = OutputPlan.build(build_output_model(normalize_schema({"word": str})))
    recorder = CassetteBook("record")
    path = Path("keys.kedi.cassette.json")
    recording = CassetteModel(FunctionModel(respond), recorder, path)

    async def record() -> None:
        for repeat in (0, 3):
            with rowscope.entered(rowscope.RowScope(repeat=repeat)):
                for prompt in PROMPTS:
                    await request_output(
                        recording,
                        plan if structured else None,
                        prompt,
                        instructions,
                        settings,
                        CallStats(),
                    )

    asyncio.run(record())
    player = CassetteBook("strict")
    player.absorb(recorder.export())
    replaying = CassetteModel(refusing(), player, path)
    params = plan.params if structured else ModelRequestParameters()
    model_settings = ModelSettings(**settings) if settings else None  # type: ignore[typeddict-item]
    for repeat in (0, 3):
        with rowscope.entered(rowscope.RowScope(repeat=repeat)):
            for prompt in PROMPTS:
                answer = replaying.replay(prompt, instructions, model_settings, params)
                assert answer is not None, (prompt, repeat)
    with rowscope.entered(rowscope.RowScope(repeat=1)):
        assert replaying.replay("plain", instructions, model_settings, params) is None


@pytest.mark.parametrize("enabled", [True, False])
def test_reading_a_cassette_leaves_the_garbage_collector_as_it_was(
    legacy: Path, enabled: bool
) -> None:
    import gc

    from pytest_kedi.runtime.model.cassettes import read_cassette

    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert len(read_cassette(legacy.with_name("legacy.kedi.cassette.json"))) == 26
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("mode", ["replay", "strict"])
def test_instructions_render_once_per_call_when_the_cassette_misses(
    tmp_path: Path, loop: ModelLoop, mode: str
) -> None:
    """A call the calling thread cannot answer from the cassette goes on to the usual path
    with the instructions it rendered: user code in them runs once per call."""
    from pytest_kedi.errors import CassetteMiss
    from pytest_kedi.runtime.model import AgentState, ModelBoundary

    rendered: list[str] = []

    def instructions() -> str:
        rendered.append("x")
        return "Be brief."

    book = CassetteBook(mode)
    policy = ModelPolicy(cassettes=book, cassette=tmp_path / "x.kedi.cassette.json")
    boundary = ModelBoundary(FunctionModel(respond), loop=loop, policy=policy)
    state = AgentState(instructions=instructions)
    schema = {"word": str, "size": int}
    with rowscope.entered(rowscope.RowScope()) as scope:
        if mode == "strict":
            with pytest.raises(CassetteMiss):
                boundary.produce(state, "Label it", schema)
        else:
            assert boundary.produce(state, "Label it", schema) == {"word": "yes", "size": 8}
            assert scope.requests == 1
    assert rendered == ["x"]
    if mode == "replay":  # now recorded: answered in the calling thread, rendered once more
        assert boundary.produce(state, "Label it", schema) == {"word": "yes", "size": 8}
        assert rendered == ["x", "x"]
        assert boundary.call_counts() == {"function:respond:": 2}


@pytest.mark.parametrize(
    "args",
    [
        {"s": "x", "i": 3, "f": 2.5, "b": True},
        {"s": "", "i": 10**30, "f": 5, "b": False},  # an int for the float: validated to 5.0
        {"s": "a\u2028b", "i": 0, "f": -0.0, "b": True, "other": [1]},  # an extra argument
        {"s": "x", "i": 3.0, "f": 1.5, "b": 1},  # a float for the int, an int for the bool
    ],
    ids=["exact", "int-for-float", "extra", "coerced"],
)
def test_a_replayed_answer_has_the_values_and_types_the_live_call_had(
    tmp_path: Path, loop: ModelLoop, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay route keeps values of exactly their field's built-in type as they are,
    and validates the others as the usual path does."""
    from pytest_kedi.runtime.model import AgentState, ModelBoundary

    answering = True

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert answering, "a replayed call reached the model"
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, dict(args))])

    schema = {"s": str, "i": int, "f": float, "b": bool}
    cassette = tmp_path / "x.kedi.cassette.json"
    recorder = CassetteBook("record")
    policy = ModelPolicy(cassettes=recorder, cassette=cassette)
    live = ModelBoundary(FunctionModel(answer), loop=loop, policy=policy)
    with rowscope.entered(rowscope.RowScope()):
        recorded = live.produce(AgentState(), "Describe it", schema)
    recorder.save(prune=False)
    answering = False
    policy = ModelPolicy(cassettes=CassetteBook("strict"), cassette=cassette)
    player = ModelBoundary(FunctionModel(answer), loop=loop, policy=policy)
    produce = player.producer(AgentState(), schema)
    monkeypatch.setattr(loop, "run", lambda coro: pytest.fail("the call used the model loop"))
    with rowscope.entered(rowscope.RowScope()) as scope:
        replayed = produce("Describe it")  # answered in the calling thread
    assert [(type(v), v) for v in replayed.values()] == [(type(v), v) for v in recorded.values()]
    assert list(replayed) == list(schema)
    assert scope.requests == 1


def test_an_entry_used_again_answers_alike_and_is_parsed_twice_at_most(
    tmp_path: Path, loop: ModelLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An identical request in another row (a duplicated input, a model-graded metric asked
    about the same output) uses the same entry: what the route read of it is kept once it
    is read again, and every use gives the same values and usage."""
    from pytest_kedi.runtime.model import AgentState, ModelBoundary, replaying

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {"word": "yes", "size": 3}
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, args)],
            usage=RequestUsage(input_tokens=7, output_tokens=2),
        )

    schema = {"word": str, "size": int}
    cassette = tmp_path / "x.kedi.cassette.json"
    recorder = CassetteBook("record")
    policy = ModelPolicy(cassettes=recorder, cassette=cassette)
    live = ModelBoundary(FunctionModel(answer), loop=loop, policy=policy)
    with rowscope.entered(rowscope.RowScope()):
        assert live.produce(AgentState(), "Label it", schema) == {"word": "yes", "size": 3}
    recorder.save(prune=False)
    parsed: list[str] = []
    parse = replaying.from_json
    monkeypatch.setattr(
        replaying, "from_json", lambda text, **options: parsed.append(text) or parse(text)
    )
    book = CassetteBook("strict")
    policy = ModelPolicy(cassettes=book, cassette=cassette)
    player = ModelBoundary(FunctionModel(answer), loop=loop, policy=policy)
    produce = player.producer(AgentState(), schema)
    monkeypatch.setattr(loop, "run", lambda coro: pytest.fail("the call used the model loop"))
    for _ in range(5):
        with rowscope.entered(rowscope.RowScope()) as scope:
            got = produce("Label it")
            assert got == {"word": "yes", "size": 3}
            got["word"] = "changed by the caller"  # (each call gives its own mapping)
            assert (scope.requests, scope.input_tokens, scope.output_tokens) == (1, 7, 2)
    assert len(parsed) == 2
    assert player.call_counts() == {"function:answer:": 5}
    assert len(book.export()[str(cassette)]["used"]) == 1
