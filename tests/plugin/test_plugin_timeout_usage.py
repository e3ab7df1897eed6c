"""A row that passes ``--kedi-timeout`` keeps what its earlier model calls cost: their
usage (row, suite, run, ``usage:`` line) and, with ``--kedi-trace``, their traced calls."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

PROGRAM = """\
@label(text: str) -> str:
  >> Label <text> [word: str]
  = <word>

@eval: label:
  > data: rows:
    = `[("fast", "ok")]`
  > metric: both(rows):
    = `label(rows) == expected and label("slow " + rows) == expected`
"""

CONFTEST = """\
import asyncio

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel


async def respond(messages, info):
    if "slow" in str(messages[-1].parts[-1].content):
        await asyncio.sleep(20)  # cancelled when the row passes its time limit
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"word": "ok"})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="timed")
"""


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_a_timed_out_row_keeps_the_usage_of_its_answered_calls(
    kedi: Kedi, concurrency: str
) -> None:
    kedi.write("label.kedi", PROGRAM)
    kedi.write("conftest.py", CONFTEST)
    result = kedi.run(
        "--kedi-eval", "--kedi-timeout", "1", "--kedi-repeat", "2", "--kedi-trace",
        "--kedi-concurrency", concurrency, "--kedi-report", "r.json",
    )  # fmt: skip
    report = kedi.json("r.json")
    (suite,) = report["suites"]
    (row,) = suite["rows"]
    assert row["error_class"] == "timeout"
    # each repeat's first call was answered (one request each) before the second timed out
    answered = row["usage"]
    assert answered["requests"] == 2 and answered["input_tokens"] > 0
    assert answered["output_tokens"] > 0
    assert suite["usage"] == report["usage"] == answered
    answers = [call["answer"] for call in row["calls"] if call["answer"]]
    assert answers == ['{"word":"ok"}', '{"word":"ok"}']
    result.stdout.fnmatch_lines(["usage: 2 requests, * input tokens, * output tokens"])
