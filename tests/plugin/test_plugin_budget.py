"""``--kedi-max-requests``: a run stops issuing model calls once its budget is spent."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

SUITE = """\
@eval: {name}:
  > data: rows:
    = `[("{name} one", "ok"), ("{name} two", "ok"), ("{name} three", "ok")]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""
PROGRAM = "@label(text: str) -> str:\n  >> Label <text> [word: str]\n  = <word>\n\n"

CONFTEST = """\
import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def respond(messages, info):
    with open("calls.txt", "a", encoding="utf-8") as stream:
        stream.write("call\\n")
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"word": "ok"})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="counted")
"""


def _calls(kedi: Kedi) -> int:
    path = kedi.pytester.path / "calls.txt"
    return path.read_text(encoding="utf-8").count("call") if path.exists() else 0


@pytest.mark.single_process("the budget is split across xdist workers (tested below)")
def test_calls_after_the_budget_are_budget_errors(kedi: Kedi) -> None:
    kedi.write("label.kedi", PROGRAM + SUITE.format(name="a"))
    kedi.write("conftest.py", CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-max-requests", "2", "--kedi-report", "r.json")
    suite = kedi.json("r.json")["suites"][0]
    assert [row["error_class"] for row in suite["rows"]] == [None, None, "budget"]
    assert "model request budget spent: 2 request(s) for the run" in suite["rows"][2]["error"]
    assert _calls(kedi) == 2
    result.stdout.fnmatch_lines(["- a::exact: 0.6667 | error: *budget spent*"])
    # the `models:` line and the report count the calls a model answered, not the refused one
    result.stdout.fnmatch_lines(["models: function:counted (2 calls; *"])
    assert kedi.json("r.json")["model_calls"] == {"function:counted": 2}


@pytest.mark.xdist_only("checks the per-worker share of the budget")
def test_workers_share_the_budget_and_never_exceed_it(kedi: Kedi) -> None:
    kedi.write("label.kedi", PROGRAM + SUITE.format(name="a") + "\n" + SUITE.format(name="b"))
    kedi.write("conftest.py", CONFTEST)
    kedi.run("--kedi-eval", "--kedi-max-requests", "4", "--kedi-report", "r.json")
    rows = [row for suite in kedi.json("r.json")["suites"] for row in suite["rows"]]
    answered = [row for row in rows if row["error_class"] is None]
    budget = [row for row in rows if row["error_class"] == "budget"]
    assert len(answered) + len(budget) == 6
    assert _calls(kedi) == len(answered) <= 4
    assert "its share of --kedi-max-requests 4 across 2 workers" in budget[0]["error"]


def test_a_bad_budget_is_a_usage_error(kedi: Kedi) -> None:
    result = kedi.run("--kedi-eval", "--kedi-max-requests", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kedi-max-requests (command line): expected a positive*"])


BUSY_CONFTEST = """\
import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models.function import FunctionModel


def respond(messages, info):
    with open("calls.txt", "a", encoding="utf-8") as stream:
        stream.write("call\\n")
    raise ModelHTTPError(503, "busy", headers={"Retry-After": "0"})


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="busy")
"""


@pytest.mark.single_process("the budget is split across xdist workers")
def test_a_retry_the_budget_refuses_is_not_counted(kedi: Kedi) -> None:
    """A retry refused by the spent budget (never sent) was counted in ``retries``: the
    report said 1 retry for a run that sent one request."""
    kedi.write("label.kedi", PROGRAM + SUITE.format(name="a"))
    kedi.write("conftest.py", BUSY_CONFTEST)
    args = ("--kedi-eval", "--kedi-retries", "3", "--kedi-max-requests", "2")
    result = kedi.run(*args, "--kedi-report", "r.json")
    report = kedi.json("r.json")
    rows = report["suites"][0]["rows"]
    assert _calls(kedi) == 2  # row 1: the request and one retry; then the budget is spent
    assert [row["error_class"] for row in rows] == ["budget"] * 3
    assert [row["retries"] for row in rows] == [1, 0, 0]
    assert report["retries"] == 1
    result.stdout.fnmatch_lines(["usage: 1 retry"])
