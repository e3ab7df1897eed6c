"""The model requests of a lazy top-level binding (docs/language.md#lazy-bindings) and of an
imported module's load have cassette keys of their own: counted apart, as in no row's repeat,
whichever case, row or repeat reads the name first, so a cassette recorded single-process
replays under ``-n 2``, with a ``-k`` selection and with ``--kedi-repeat``."""

from __future__ import annotations

import json

import pytest
from kedi_plugin_helpers import PLUGIN_ARGS, XDIST_ARGS, Kedi

#: answers a structured prompt "Say <word> ..." with <word> in capitals, a text one "Tell
#: <word>" with <word> and how many times this process was told it before; refuses every
#: call when REFUSE is set (so a replayed answer is the cassette's)
ECHO_MODEL = """\
import os

import pytest
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

SEEN = {}


def respond(messages, info):
    if os.environ.get("REFUSE"):
        raise AssertionError("a replayed call reached the model")
    word = str(messages[-1].parts[-1].content).split()[1]
    if info.output_tools:
        tool = info.output_tools[0]
        return ModelResponse(parts=[ToolCallPart(tool.name, {"label": word.upper()})])
    n = SEEN.get(word, 0)
    SEEN[word] = n + 1
    return ModelResponse(parts=[TextPart(word + str(n))])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="echo")
"""

#: ``first`` is read by case one alone, and after the same request by the other cases and
#: the rows: it was counted in whichever of them read it first (a second occurrence there)
LAZY = """\
@ask(text: str) -> str:
  >> Say <text> [label: str]
  = <label>

[first] = `ask("z")`

@test: cases:
  > case: one:
    `assert first == "Z"`
  > case: two:
    `assert ask("z") + first == "ZZ"`
  > case: three:
    `assert ask("z") + first == "ZZ"`

@eval: ask:
  > data: rows:
    = `[("z", "ZZ"), ("z", "ZZ")]`
  > metric: m(rows):
    = `ask(rows) + first == expected`
"""

MODE = ("--kedi-eval", "-p", "no:randomly", "--kedi-record-mode")


def _rows(kedi: Kedi, report: str) -> list[tuple[object, object]]:
    rows = kedi.json(report)["suites"][0]["rows"]
    return [(row["score"], row["error"]) for row in rows]


def _entries(kedi: Kedi, name: str) -> list[tuple[object, object, object]]:
    document = json.loads((kedi.pytester.path / f"{name}.kedi.cassette.json").read_text())
    entries = document["entries"].values()
    return sorted((e["prompt"], e["repeat"], e.get("occurrence", 0)) for e in entries)


@pytest.mark.single_process("records single-process, then replays under -n 2 itself")
def test_a_lazy_binding_replays_whichever_case_or_worker_reads_it_first(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a worker (or a ``-k`` selection) whose first reader of ``first`` had sent the
    same prompt before looked for a second occurrence the recording never made: a strict
    cassette miss."""
    kedi.write("lazy.kedi", LAZY)
    kedi.write("conftest.py", ECHO_MODEL)
    kedi.run(*MODE, "record").assert_outcomes(passed=4)
    # the binding's request is a first occurrence, keyed as it always was
    assert _entries(kedi, "lazy") == [("Say z [label]", 0, 0)]
    monkeypatch.setenv("REFUSE", "1")
    workers = (*PLUGIN_ARGS, *XDIST_ARGS, "-n", "2")
    report = ("--kedi-report", "r.json")
    kedi.pytester.runpytest_subprocess(*workers, *MODE, "strict", *report).assert_outcomes(passed=4)
    assert _rows(kedi, "r.json") == [(1.0, None), (1.0, None)]
    selected = kedi.run(*MODE, "strict", "-k", "two", "--kedi-report", "k.json")
    selected.assert_outcomes(passed=1, deselected=3)
    assert "cassette miss" not in selected.stdout.str()
    assert _entries(kedi, "lazy") == [("Say z [label]", 0, 0)]


#: the metric reads ``first`` from its second run on: in repeat 1 of the row
REPEATED = """\
```
import itertools
READS = itertools.count()
```

@ask(text: str) -> str:
  >> Say <text> [label: str]
  = <label>

[first] = `ask("z")`

@test: cases:
  > case: one:
    `assert first == "Z"`

@eval: ask:
  > data: rows:
    = `[("x", "X")]`
  > metric: m(rows):
    = `ask(rows) == expected and (next(READS) == 0 or first == "Z")`
"""


def test_a_lazy_binding_read_in_a_later_repeat_has_the_key_of_repeat_0(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, its request took the repeat index of the row that read it first: recorded
    with the case reading it (repeat 0), a replay of the suite alone (reading it in repeat
    1) missed."""
    kedi.write("rep.kedi", REPEATED)
    kedi.write("conftest.py", ECHO_MODEL)
    repeat = ("--kedi-repeat", "3")
    kedi.run(*MODE, "record", *repeat).assert_outcomes(passed=2)
    recorded = _entries(kedi, "rep")
    assert ("Say z [label]", 0, 0) in recorded and len(recorded) == 4  # x: one per repeat
    monkeypatch.setenv("REFUSE", "1")
    replayed = kedi.run(*MODE, "strict", *repeat, "-k", "ask", "--kedi-report", "r.json")
    replayed.assert_outcomes(passed=1)
    assert _rows(kedi, "r.json") == [(1.0, None)]
    assert kedi.json("r.json")["suites"][0]["rows"][0]["scores"] == [1.0, 1.0, 1.0]
    # and the other way round: recorded by the suite alone, replayed with the case
    (kedi.pytester.path / "rep.kedi.cassette.json").unlink()
    monkeypatch.delenv("REFUSE")
    kedi.run(*MODE, "record", *repeat, "-k", "ask").assert_outcomes(passed=1)
    assert _entries(kedi, "rep") == recorded
    monkeypatch.setenv("REFUSE", "1")
    kedi.run(*MODE, "strict", *repeat, "-k", "one").assert_outcomes(passed=1)


MODULE = """\
[a] << Tell z
[b] << Tell z

> export: a, b
"""

IMPORTING = """\
> import: m

@test: cases:
  > case: both:
    `assert a + b == "z0z1"`
"""


#: a procedure's default value is computed once, as the file loads
DEFAULTS = """\
@tell(text: str) -> str:
  [note] << Tell <text>
  = <note>

@p(a: str = `tell("z") + tell("z")`) -> str:
  = <a>

@test: cases:
  > case: both:
    `assert p() == "z0z1", p()`
"""


@pytest.mark.parametrize(
    "files",
    [{"m.kedi": MODULE, "main.kedi": IMPORTING}, {"main.kedi": DEFAULTS}],
    ids=["import", "default"],
)
def test_identical_requests_of_a_load_replay_each_answer(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    """Before, requests made while a file or the module it imports loaded were not counted:
    both shared one entry, and a replay answered both with the answer recorded last
    (the case failed with 'z1z1')."""
    for name, text in files.items():
        kedi.write(name, text)
    kedi.write("conftest.py", ECHO_MODEL)
    kedi.run(*MODE, "record").assert_outcomes(passed=1)
    assert _entries(kedi, "main") == [("Tell z", 0, 0), ("Tell z", 0, 1)]
    monkeypatch.setenv("REFUSE", "1")
    kedi.run(*MODE, "strict").assert_outcomes(passed=1)


TWICE = """\
@ask(text: str) -> str:
  >> Say <text> [label: str]
  = <label>

[first] = `ask("z") + ask("z")`

@eval: ask:
  > data: rows:
    = `[("z", "ZZZ")]`
  > metric: m(rows):
    = `ask(rows) + first == expected`
"""


def test_a_strict_miss_in_a_lazy_binding_says_where_it_was_sent_again(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The binding's second request has its own entry, counted in the binding (not in the
    row that read it); the row still counts the binding's usage."""
    kedi.write("two.kedi", TWICE)
    kedi.write("conftest.py", ECHO_MODEL)
    kedi.run(*MODE, "record").assert_outcomes(passed=1)
    assert _entries(kedi, "two") == [("Say z [label]", 0, 0), ("Say z [label]", 0, 1)]
    path = kedi.pytester.path / "two.kedi.cassette.json"
    document = json.loads(path.read_text("utf-8"))
    document["entries"] = {
        key: entry for key, entry in document["entries"].items() if "occurrence" not in entry
    }
    path.write_text(json.dumps(document), "utf-8")
    monkeypatch.setenv("REFUSE", "1")
    kedi.run(*MODE, "strict", "--kedi-report", "r.json").assert_outcomes(passed=1)
    (row,) = kedi.json("r.json")["suites"][0]["rows"]
    assert row["error_class"] == "cassette_miss"
    assert (
        "'Say z [label]', sent for the 2nd time in this lazy top-level binding (each time has "
        "its own entry; the cassette has an entry for the first only: record it again)"
    ) in row["error"]
    assert row["usage"]["requests"] == 2  # the row's own request and the binding's first
