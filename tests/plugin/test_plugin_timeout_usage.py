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


#: the first request fails with a 503 at once; the retry's ``Retry-After`` wait outlasts
#: the row's time limit, so that retry is never sent
BACKOFF_CONFTEST = """\
import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models.function import FunctionModel

SENT = []


def respond(messages, info):
    SENT.append(1)
    after = "0" if len(SENT) == 1 else "30"
    raise ModelHTTPError(503, "busy", headers={"Retry-After": after})


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="busy")


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_row_result(item, row):
    with open("sent.txt", "w", encoding="utf-8") as stream:
        stream.write(str(len(SENT)))
"""

BACKOFF_PROGRAM = """\
@label(text: str) -> str:
  >> Label <text> [word: str]
  = <word>

@eval: label:
  > data: rows:
    = `[("one", "ok")]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_a_retry_cancelled_during_its_wait_is_not_counted(kedi: Kedi, concurrency: str) -> None:
    """A row that timed out while waiting to retry reported that retry as made: ``retries``
    counted the wait, not the request, so the report claimed 2 retries for 1 sent."""
    kedi.write("label.kedi", BACKOFF_PROGRAM)
    kedi.write("conftest.py", BACKOFF_CONFTEST)
    result = kedi.run(
        "--kedi-eval", "--kedi-timeout", "1", "--kedi-retries", "5",
        "--kedi-concurrency", concurrency, "--kedi-report", "r.json",
    )  # fmt: skip
    report = kedi.json("r.json")
    (suite,) = report["suites"]
    (row,) = suite["rows"]
    assert row["error_class"] == "timeout"
    sent = (kedi.pytester.path / "sent.txt").read_text(encoding="utf-8")
    assert sent == "2"  # the first request and one retry
    assert (row["retries"], suite["retries"], report["retries"]) == (1, 1, 1)
    result.stdout.fnmatch_lines(["usage: 1 retry"])


#: the first request fails with a 503 at once; the retry is sent and hangs past the limit
IN_FLIGHT_CONFTEST = """\
import asyncio

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models.function import FunctionModel

SENT = []


async def respond(messages, info):
    SENT.append(1)
    if len(SENT) == 1:
        raise ModelHTTPError(503, "busy", headers={"Retry-After": "0"})
    await asyncio.sleep(30)  # cancelled when the row passes its time limit


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="busy")
"""


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_a_retry_in_flight_at_the_time_limit_is_counted(kedi: Kedi, concurrency: str) -> None:
    kedi.write("label.kedi", BACKOFF_PROGRAM)
    kedi.write("conftest.py", IN_FLIGHT_CONFTEST)
    kedi.run(
        "--kedi-eval", "--kedi-timeout", "1", "--kedi-retries", "5",
        "--kedi-concurrency", concurrency, "--kedi-report", "r.json",
    )  # fmt: skip
    report = kedi.json("r.json")
    (row,) = report["suites"][0]["rows"]
    assert row["error_class"] == "timeout"
    assert (row["retries"], report["retries"]) == (1, 1)


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_a_timed_out_row_keeps_the_output_its_procedure_returned(
    kedi: Kedi, concurrency: str
) -> None:
    """Before: a timed-out row's ``output`` was null although the suite's procedure had
    returned ``'ok'`` before the time ran out (an errored row keeps its output)."""
    kedi.write("label.kedi", PROGRAM)
    kedi.write("conftest.py", CONFTEST)
    result = kedi.run(
        "--kedi-eval", "--kedi-timeout", "1", "--kedi-concurrency", concurrency,
        "--kedi-rows", "summary", "-v", "--kedi-report", "r.json",
    )  # fmt: skip
    (row,) = kedi.json("r.json")["suites"][0]["rows"]
    assert (row["error_class"], row["output"]) == ("timeout", "'ok'")
    result.stdout.fnmatch_lines(
        ["    row 0: score 0.0000 | input 'fast' | expected 'ok' | output 'ok' | error: timeout: *"]
    )
