"""``>>`` templates in generated procedure bodies (`runtime.fastbuild`) behave exactly like
the interpreter's `run_template`: the same prompts reach the model boundary in the same
agent state, the same values are bound, and every failure (a model error, a cassette miss,
an output of the wrong type, a prompt that cannot render, cancellation) is the same error in
every detail. Each case runs on a generated body and, in a second load of the same file, on
the interpreter (generation switched off)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kedi_outcomes import built_at_first_call, never_generated, outcome
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.errors import CassetteMiss, KediExecutionError, ModelError, UnsupportedFeature
from pytest_kedi.runtime.cancel import Cancelled, CancelToken, bound

SOURCE = """\
```
class Loud:
    def __str__(self):
        raise ValueError("no text")
```
> instructions: Answer briefly.

@label(text: str) -> str:
  >> Label <text> with one word: [word: str]
  = <word>

@two_rows(a: int, b: object) -> str:
  >> First <a> and `a * 2`, \\[not an output]
  then <b>: [n: int] [items: list[str]] [ok: bool]
  = <n>/<items>/<ok>

@then_assign(text: str) -> int:
  >> Count the letters of <text>: [n: int]
  [twice: int] = `n * 2`
  = `twice + 1`

@no_output(text: str) -> str:
  >> Just say something about <text>
  = done

@untyped(text: str) -> str:
  >> Say <text>: [said]
  = `said.upper()`

@unknown(text: str) -> str:
  >> Say <nowhere>: [said]
  = <said>

@failing_python(n: int) -> str:
  >> Say `10 // n`: [said]
  = <said>

@loud(n: int) -> str:
  >> Say `Loud()`: [said]
  = <said>

@steps(stop: object, log: object) -> str:
  [a: int] = `log.append("a") or stop() or 1`
  >> Say <a>: [said]
  = <said>
"""

#: stays on the interpreter (the interpreter reports the error at run time)
INTERPRETED = """\
~Count(n: int)

@custom(text: str) -> int:
  >> Count <text>: [n: Count]
  = `n`

@twice(text: str) -> str:
  >> Say <text>: [said]
  >> Again: [said]
  = <said>
"""


class Boundary:
    """Stands in for the model boundary: records what each call was given and answers
    with ``answer(prompt)`` (a dict for a structured call, text otherwise) or raises it."""

    def __init__(self, answer: Callable[[str], Any]) -> None:
        self.answer = answer
        self.shapes: dict[int, Any] = {}
        self.seen: list[tuple[Any, ...]] = []

    def _reply(self, kind: str, state: Any, prompt: str, fields: tuple[str, ...]) -> Any:
        # the state without its instructions thunk (each program has its own), and them rendered
        self.seen.append(
            (kind, prompt, state.replace(instructions=None), state.render_instructions(), fields)
        )
        reply = self.answer(prompt)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def produce(self, state: Any, prompt: str, schema: dict[str, Any]) -> Any:
        return self._reply("produce", state, prompt, tuple(schema.items()))

    def invoke(self, state: Any, prompt: str) -> Any:
        return self._reply("invoke", state, prompt, ())


@pytest.fixture(autouse=True)
def _generated_from_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    built_at_first_call(monkeypatch)


@pytest.fixture
def programs(kedi: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """``programs(source, answer) -> ((generated, boundary), (interpreted, boundary))``."""

    def make(source: str, answer: Callable[[str], Any]) -> list[tuple[Any, Boundary]]:
        generated = kedi(source, mode="validate")
        interpreted = kedi(source, mode="validate")
        never_generated(monkeypatch, interpreted)
        pairs = []
        for program in (generated, interpreted):
            boundary = Boundary(answer)
            program._unit.runtime._boundary = boundary
            pairs.append((program, boundary))
        return pairs

    return make


def answers(prompt: str) -> Any:
    if prompt.startswith("Just say"):
        return "something"
    if prompt.startswith("First"):
        return {"n": 3, "items": ["x", "y"], "ok": True}
    if prompt.startswith("Count"):
        return {"n": len(prompt)}
    return {"word": "yes", "said": "fine"}


CASES: list[tuple[str, tuple[Any, ...], Callable[[str], Any]]] = [
    ("label", ("a cat",), answers),
    ("two_rows", (2, [1, "b"]), answers),
    ("then_assign", ("kedi",), answers),
    ("no_output", ("kedi",), answers),
    ("untyped", ("kedi",), answers),
    ("unknown", ("kedi",), answers),
    ("failing_python", (0,), answers),
    ("failing_python", (5,), answers),
    ("loud", (1,), answers),
    ("label", (3,), answers),  # a parameter of the wrong type
    # the model's values fail their field types (the boundary validated nothing)
    ("label", ("x",), lambda prompt: {"word": 3}),
    ("two_rows", (1, 2), lambda prompt: {"n": 1, "items": ["a", 2], "ok": True}),
    ("two_rows", (1, 2), lambda prompt: {"n": True, "items": [], "ok": False}),
    ("untyped", ("x",), lambda prompt: {"said": None}),
    # the boundary fails
    ("label", ("x",), lambda prompt: ModelError("model call failed (test): boom")),
    ("label", ("x",), lambda prompt: CassetteMiss("cassette miss (--kedi-record-mode strict)")),
    ("label", ("x",), lambda prompt: UnsupportedFeature("> requires: vision", 3)),
    ("no_output", ("x",), lambda prompt: ModelError("model call failed (test): no text")),
    ("then_assign", ("x",), lambda prompt: {"n": "many"}),
]


@pytest.mark.parametrize(
    ("name", "args", "answer"), CASES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(CASES)]
)
def test_a_template_in_a_generated_body_agrees_with_the_interpreter(programs, name, args, answer):
    (generated, fast_boundary), (interpreted, slow_boundary) = programs(SOURCE, answer)
    fast = outcome(lambda: generated.procedures[name](*args))
    slow = outcome(lambda: interpreted.procedures[name](*args))
    assert generated.procedures[name]._generated is not None
    assert interpreted.procedures[name]._generated is None
    assert fast == slow
    # the same prompts, output fields and agent state reached the model
    assert fast_boundary.seen == slow_boundary.seen
    fast_nested = outcome(lambda: generated.procedures[name].invoke_positional(list(args)))
    slow_nested = outcome(lambda: interpreted.procedures[name].invoke_positional(list(args)))
    assert fast_nested == slow_nested


def test_prompts_values_and_locations(programs):
    (generated, boundary), _ = programs(SOURCE, answers)
    procs = generated.procedures
    assert procs["label"]("a cat") == "yes"
    assert procs["two_rows"](2, "b") == "3/['x', 'y']/True"
    assert procs["no_output"]("kedi") == "done"
    prompts = [seen[1] for seen in boundary.seen]
    assert prompts == [
        "Label a cat with one word: [word]",
        "First 2 and 4, [not an output]\nthen b: [n] [items] [ok]",
        "Just say something about kedi",
    ]
    assert boundary.seen[0][3] == "Answer briefly."
    boundary.answer = lambda prompt: {"word": 3}
    with pytest.raises(KediExecutionError, match="model output \\[word\\]") as info:
        procs["label"]("x")
    assert (
        info.value.line
        == SOURCE.splitlines().index("  >> Label <text> with one word: [word: str]") + 1
    )
    assert [f.kind for f in info.value.frames] == ["procedure", "template"]


@pytest.mark.parametrize("name", ["custom", "twice"])
def test_other_template_shapes_stay_interpreted(programs, name):
    (generated, fast_boundary), (interpreted, slow_boundary) = programs(
        INTERPRETED, lambda prompt: {"word": "w", "n": 2, "said": "s", "args": "a"}
    )
    fast = outcome(lambda: generated.procedures[name]("x"))
    assert generated.procedures[name]._generated is None
    assert fast == outcome(lambda: interpreted.procedures[name]("x"))
    # (each program has its own ``Count`` class: compared by name)
    assert repr(fast_boundary.seen) == repr(slow_boundary.seen)


def test_cancellation_stops_before_the_model_is_asked(programs):
    pairs = programs(SOURCE, answers)
    for program, boundary in pairs:
        log: list[str] = []
        token = CancelToken()
        with bound(token), pytest.raises(Cancelled):
            program.procedures["steps"](token.cancel, log)
        assert log == ["a"]
        assert boundary.seen == []
        assert program.procedures["steps"](lambda: None, []) == "fine"  # no token bound
    assert pairs[0][0].procedures["steps"]._generated is not None


def test_a_real_model_answers_both_paths_alike(kedi, monkeypatch):
    """Through the real boundary and pydantic-ai: the same values and the same requests."""
    seen: list[list[str]] = [[], []]

    def model(index: int) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen[index].append(repr([m.parts for m in messages]).split("timestamp")[0])
            if info.output_tools:
                return ModelResponse(
                    parts=[ToolCallPart(info.output_tools[0].name, {"n": 3, "word": "ok"})]
                )
            return ModelResponse(parts=[TextPart("text")])

        return FunctionModel(respond)

    source = "@label(text: str) -> str:\n  >> Label <text>: [word]\n  = <word>!\n"
    generated = kedi(source, mode="validate", model=model(0))
    interpreted = kedi(source, mode="validate", model=model(1), name="other.kedi")
    never_generated(monkeypatch, interpreted)
    assert generated.procedures["label"]("cat") == "ok!"
    assert interpreted.procedures["label"]("cat") == "ok!"
    assert generated.procedures["label"]._generated is not None
    assert interpreted.procedures["label"]._generated is None
    assert seen[0] == seen[1]
