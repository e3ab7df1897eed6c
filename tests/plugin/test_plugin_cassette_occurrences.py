"""Identical requests in one row or case (``--kedi-record-mode``): the n-th has its own
cassette entry, so a replay answers each as the recording did (single-process and -n 2)."""

from __future__ import annotations

import json
from pathlib import Path

from kedi_plugin_helpers import Kedi

TWICE = """\
@ask(text: str) -> str:
  >> Say <text> [label: str]
  = <label>

@tell(text: str) -> str:
  [note] << Tell <text>
  = <note>

@eval: ask:
  > data: rows:
    = `[("x", "AB|ab"), ("y", "AB|ab")]`
  > metric: m(rows):
    = `ask(rows) + ask(rows) + "|" + tell(rows) + tell(rows) == expected`

@test: cases:
  > case: twice:
    `assert ask("z") + ask("z") + tell("z") + tell("z") == "ABab"`
"""

#: answers "A", then "B", "C" ... to a structured prompt ("a", "b" ... to a text one), by
#: how many times this process was sent it before
COUNTING_MODEL = """\
import pytest
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

SEEN = {}


def respond(messages, info):
    prompt = str(messages[-1].parts[-1].content)
    n = SEEN.get(prompt, 0)
    SEEN[prompt] = n + 1
    if info.output_tools:
        tool = info.output_tools[0]
        return ModelResponse(parts=[ToolCallPart(tool.name, {"label": "ABCDEF"[n]})])
    return ModelResponse(parts=[TextPart("abcdef"[n])])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="counting")
"""

REFUSING_MODEL = """\
import pytest
from pydantic_ai.models.function import FunctionModel


def respond(messages, info):
    raise AssertionError("a replayed call reached the model")


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="counting")
"""


def _entries(kedi: Kedi) -> dict[str, dict[str, object]]:
    path: Path = kedi.pytester.path / "twice.kedi.cassette.json"
    entries: dict[str, dict[str, object]] = json.loads(path.read_text("utf-8"))["entries"]
    return entries


def _seen(kedi: Kedi, report: str) -> list[tuple[object, object, object]]:
    rows = kedi.json(report)["suites"][0]["rows"]
    return [(row["score"], row["output"], row["error_class"]) for row in rows]


def test_the_same_prompt_twice_in_a_row_or_case_replays_each_answer(kedi: Kedi) -> None:
    """Both requests shared one entry: recording kept the second answer only, and a strict
    replay answered both with it (the row scored 0, the case failed)."""
    kedi.write("twice.kedi", TWICE)
    kedi.write("conftest.py", COUNTING_MODEL)
    mode = ("--kedi-eval", "--kedi-record-mode")
    kedi.run(*mode, "record", "--kedi-report", "a.json").assert_outcomes(passed=2)
    recorded = _seen(kedi, "a.json")
    assert recorded == [(1.0, "'A'; 'B'", None), (1.0, "'A'; 'B'", None)]
    entries = _entries(kedi)
    assert sorted((e["prompt"], e.get("occurrence", 0)) for e in entries.values()) == [
        (f"{verb} {text}{label}", occurrence)
        for verb, label in (("Say", " [label]"), ("Tell", ""))
        for text in "xyz"
        for occurrence in (0, 1)
    ]
    kedi.write("conftest.py", REFUSING_MODEL)
    replayed = kedi.run(*mode, "strict", "--kedi-report", "b.json")
    replayed.assert_outcomes(passed=2)
    assert _seen(kedi, "b.json") == recorded
    assert _entries(kedi) == entries  # a replay leaves the cassette alone


def test_a_strict_miss_of_a_later_identical_request_says_which_it_is(kedi: Kedi) -> None:
    """A cassette holding one entry for both (recorded before each had its own) replays
    the first and misses the second, saying why."""
    kedi.write("twice.kedi", TWICE)
    kedi.write("conftest.py", COUNTING_MODEL)
    mode = ("--kedi-eval", "--kedi-record-mode")
    kedi.run(*mode, "record").assert_outcomes(passed=2)
    path = kedi.pytester.path / "twice.kedi.cassette.json"
    document = json.loads(path.read_text("utf-8"))
    document["entries"] = {
        key: entry for key, entry in document["entries"].items() if "occurrence" not in entry
    }
    path.write_text(json.dumps(document), "utf-8")
    kedi.write("conftest.py", REFUSING_MODEL)
    result = kedi.run(*mode, "strict", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1, failed=1)
    assert (
        "no recorded answer in twice.kedi.cassette.json for function:counting prompt "
        "'Say z [label]', sent for the 2nd time in this @test: case (each time has its "
        "own entry; the cassette has an entry for the first only: record it again)"
    ) in result.stdout.str()
    row = kedi.json("r.json")["suites"][0]["rows"][0]
    assert row["error_class"] == "cassette_miss"
    assert "'Say x [label]', sent for the 2nd time in this row (each time" in row["error"]


def test_prune_keeps_the_entry_of_every_identical_request(kedi: Kedi) -> None:
    kedi.write("twice.kedi", TWICE)
    kedi.write("conftest.py", COUNTING_MODEL)
    mode = ("--kedi-eval", "--kedi-record-mode")
    kedi.run(*mode, "record").assert_outcomes(passed=2)
    assert len(_entries(kedi)) == 12
    kedi.write("twice.kedi", TWICE.replace(', ("y", "AB|ab")', ""))
    kedi.write("conftest.py", REFUSING_MODEL)
    pruned = kedi.run(*mode, "strict", "--kedi-prune-cassettes", "--kedi-report", "r.json")
    pruned.assert_outcomes(passed=2)
    assert "cassettes not pruned" not in pruned.stdout.str()
    assert _seen(kedi, "r.json") == [(1.0, "'A'; 'B'", None)]
    entries = _entries(kedi)
    assert len(entries) == 8
    assert not any(" y" in str(entry["prompt"]) for entry in entries.values())


SAME_ROWS = """\
@ask(text: str) -> str:
  >> Say <text> [label: str]
  = <label>

@eval: ask:
  > data: rows:
    = `[("same", 2), ("same", 2), ("same", 2)]`
  > metric: m(rows):
    = `len(ask(rows) + ask(rows)) == expected`
"""


def test_rows_running_at_once_count_their_identical_requests_apart(kedi: Kedi) -> None:
    """Rows sending the same prompts share their entries (a row is not part of the key):
    each row's first request is the first occurrence, whichever rows run beside it."""
    kedi.write("twice.kedi", SAME_ROWS)
    kedi.write("conftest.py", COUNTING_MODEL.replace('"ABCDEF"[n]', '"ABCDEF"[n % 6]'))
    mode = ("--kedi-eval", "--kedi-concurrency", "3", "--kedi-record-mode")
    kedi.run(*mode, "record").assert_outcomes(passed=1)
    assert sorted(entry.get("occurrence", 0) for entry in _entries(kedi).values()) == [0, 1]
    kedi.write("conftest.py", REFUSING_MODEL)
    replayed = kedi.run(*mode, "strict", "--kedi-report", "r.json")
    replayed.assert_outcomes(passed=1)
    assert [error for _, _, error in _seen(kedi, "r.json")] == [None, None, None]
