"""What a worker that dies had done for the run: cassettes, model calls, the request budget.

A worker handed its cassette recordings, the entries it used and its model call counts to
the controller only when it finished, so a worker that died (``os._exit``, a segfault, an
OOM kill) lost them all: a suite that passed while recording had no cassette, pruning then
removed entries the run had used, and its calls vanished from the ``models:`` line. They now
travel item by item; only the crashing item's own are lost, and the run is not complete.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kedi_plugin_helpers import Kedi

pytestmark = pytest.mark.xdist_only("only an xdist worker can crash and leave the run going")

RULES = """
import os

import pytest
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def answer(messages, info):
    with open(os.environ["CALL_LOG"], "a", encoding="utf-8") as log:
        log.write("call\\n")
    text = str(messages[-1].parts[-1].content)
    numbers = [int(word) for word in text.replace("?", " ").split() if word.isdigit()]
    tool = info.output_tools[0]
    return ModelResponse(parts=[ToolCallPart(tool.name, {"answer": str(sum(numbers))})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(answer, model_name="rules")
"""

ASKS = """\
@answer(question: str) -> str:
  >> Answer the question.
  Question: <question>
  Answer: [answer: str]
  = `answer`

@eval: answer:
  > data: qs:
    = `{rows}`
  > metric: exact(qs):
    = `answer(qs) == expected`
"""

DIES = """\
@test: cc:
  > case: dies:
    `__import__("os")._exit(4)`
"""


def _project(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> Path:
    kedi.pytester.makeconftest(RULES)
    rows = [("What is 2 + 2?", "4"), ("What is 1 + 5?", "6"), ("What is 3 + 3?", "6")]
    kedi.write("a_model.kedi", ASKS.format(rows=rows))
    kedi.write("b_crash.kedi", DIES)
    kedi.write("c_model.kedi", ASKS.format(rows=[("What is 4 + 4?", "8")]))
    log = kedi.pytester.path / "calls.log"
    monkeypatch.setenv("CALL_LOG", str(log))
    return log


def _entries(kedi: Kedi, name: str) -> int:
    path = kedi.pytester.path / f"{name}.cassette.json"
    return len(json.loads(path.read_text(encoding="utf-8"))["entries"])


def _one_worker(kedi: Kedi, *args: str) -> pytest.RunResult:
    """One worker, so that the worker running ``a_model.kedi`` dies in ``b_crash.kedi``
    and a new one runs ``c_model.kedi``."""
    return kedi.run("--kedi-eval", "-n", "1", "-p", "no:randomly", *args)


def test_recordings_and_calls_of_a_worker_that_dies_are_kept(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _project(kedi, monkeypatch)
    result = _one_worker(kedi, "--kedi-record-mode", "record", "--kedi-report=r.json")
    result.assert_outcomes(passed=2, failed=1)
    assert (_entries(kedi, "a_model.kedi"), _entries(kedi, "c_model.kedi")) == (3, 1)
    assert len(log.read_text().splitlines()) == 4
    result.stdout.fnmatch_lines(["models: function:rules (4 calls; pytest_kedi_model hook)"])
    assert kedi.json("r.json")["model_calls"] == {"function:rules": 4}
    # The recordings replay strictly; a run with a crash prunes nothing.
    again = _one_worker(kedi, "--kedi-record-mode", "strict", "--kedi-prune-cassettes")
    again.assert_outcomes(passed=2, failed=1)
    again.stdout.fnmatch_lines(
        ["kedi: cassettes not pruned: a worker crashed while running b_crash.kedi::test:cc::dies"]
    )
    assert (_entries(kedi, "a_model.kedi"), _entries(kedi, "c_model.kedi")) == (3, 1)
    assert len(log.read_text().splitlines()) == 4  # strict replay: no call


def test_a_worker_replacing_a_crashed_one_gets_no_new_share_of_the_budget(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _project(kedi, monkeypatch)
    result = _one_worker(kedi, "--kedi-max-requests", "3", "--kedi-report=r.json")
    result.assert_outcomes(passed=2, failed=1)
    assert len(log.read_text().splitlines()) == 3  # never more than the cap
    suites = {suite["path"]: suite for suite in kedi.json("r.json")["suites"]}
    assert suites["a_model.kedi"]["score"] == 1.0
    assert suites["c_model.kedi"]["errors_by_class"] == {"budget": 1}


DIES_IN_TEARDOWN = """
import os

import pytest


@pytest.fixture(autouse=True)
def dies_after(request):
    yield
    os._exit(3)
"""


def test_a_worker_dying_in_an_items_teardown_fails_its_record(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest reports the crash as the item's failure, but the record its call had sent
    stayed ``passed``: the summary, the JSON report and ``merge`` named no failure."""
    from pytest_kedi import cli

    kedi.pytester.makeconftest(DIES_IN_TEARDOWN)
    kedi.write(
        "a.kedi", "@eval: good:\n  > data: xs:\n    = `[2]`\n  > metric: m(xs):\n    = `1.0`\n"
    )
    kedi.write("b.kedi", "@test: t:\n  > case: ok:\n    `assert 1 == 1`\n")
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "a.kedi", "b.kedi")
    assert result.parseoutcomes()["failed"] == 2  # (and their calls' 2 passed)
    result.stdout.fnmatch_lines_random(
        ["- t::ok: FAIL | *crashed*", "- good::m: 1.0000  [[]FAILED[]]"]
    )
    report = kedi.json("r.json")
    assert [s["outcome"] for s in report["suites"]] == ["failed"]
    assert [t["outcome"] for t in report["tests"]] == ["failed"]
    assert "crashed" in report["tests"][0]["message"]
    capsys.readouterr()
    assert cli.main(["merge", str(kedi.pytester.path / "r.json")], prog="pytest-kedi") == 1
    out = capsys.readouterr().out
    assert "FAILED a.kedi::eval:good" in out and "FAILED b.kedi::test:t::ok" in out
