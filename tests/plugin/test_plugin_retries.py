"""``--kedi-retries``: transient model failures retried at the model boundary, per row in the
report, the row hook and the summary."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

PROGRAM = """\
@label(text: str) -> str:
  >> Label <text> [word: str]
  = <word>

@eval: label:
  > data: rows:
    = `[("one", "ok"), ("two", "ok"), ("three", "ok")]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""

#: every prompt fails once with a 503 (Retry-After: 0, so nothing waits), then is answered
CONFTEST = """\
import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

FAILED = set()


def respond(messages, info):
    prompt = str(messages[-1].parts[-1].content)
    if prompt not in FAILED:
        FAILED.add(prompt)
        raise ModelHTTPError(503, "flaky", headers={"Retry-After": "0"})
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"word": "ok"})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="flaky")


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_row_result(item, row):
    with open("rows.txt", "a", encoding="utf-8") as stream:
        stream.write(f"{row.index} {row.retries}\\n")
"""


def test_a_503_from_any_model_is_retried_and_counted(kedi: Kedi) -> None:
    kedi.write("label.kedi", PROGRAM)
    kedi.write("conftest.py", CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-retries", "2", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["usage: *3 retries", "- label::exact: 1.0000  [passed]"])
    report = kedi.json("r.json")
    suite = report["suites"][0]
    assert [row["retries"] for row in suite["rows"]] == [1, 1, 1]
    assert (suite["retries"], report["retries"], suite["errors_by_class"]) == (3, 3, {})
    hooked = (kedi.pytester.path / "rows.txt").read_text(encoding="utf-8").split("\n")
    assert sorted(filter(None, hooked)) == ["0 1", "1 1", "2 1"]


#: a model calling the OpenAI SDK itself: every prompt first gets the SDK's own 429
SDK_CONFTEST = """\
import openai
import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

try:
    import httpx
except ImportError:  # the SDK's successor package
    import httpx2 as httpx

FAILED = set()


def respond(messages, info):
    prompt = str(messages[-1].parts[-1].content)
    if prompt not in FAILED:
        FAILED.add(prompt)
        request = httpx.Request("POST", "https://api.example.test/v1/chat/completions")
        response = httpx.Response(429, request=request, headers={"retry-after": "0"})
        raise openai.RateLimitError("Rate limit reached", response=response, body=None)
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"word": "ok"})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="sdk")
"""


def test_an_sdk_429_raised_by_the_hook_model_is_retried_and_counted(kedi: Kedi) -> None:
    """A hook model calling a provider SDK itself lets the SDK's `RateLimitError` escape:
    it was a row error at once, whatever ``--kedi-retries``."""
    pytest.importorskip("openai")
    kedi.write("label.kedi", PROGRAM)
    kedi.write("conftest.py", SDK_CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-retries", "1", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["usage: *3 retries", "- label::exact: 1.0000  [passed]"])
    suite = kedi.json("r.json")["suites"][0]
    assert [row["retries"] for row in suite["rows"]] == [1, 1, 1]
    assert suite["errors_by_class"] == {}


def test_without_retries_the_failure_is_a_model_error(kedi: Kedi) -> None:
    kedi.write("label.kedi", PROGRAM)
    kedi.write("conftest.py", CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    suite = kedi.json("r.json")["suites"][0]
    assert suite["errors_by_class"] == {"model": 3} and suite["retries"] == 0
    result.stdout.no_fnmatch_line("usage:*")


def test_retries_from_the_environment_and_a_bad_value(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    kedi.write("label.kedi", PROGRAM)
    kedi.write("conftest.py", CONFTEST)
    monkeypatch.setenv("KEDI_RETRIES", "1")
    kedi.run("--kedi-eval", "--kedi-report", "r.json").assert_outcomes(passed=1)
    assert kedi.json("r.json")["suites"][0]["retries"] == 3
    monkeypatch.setenv("KEDI_RETRIES", "-1")
    bad = kedi.run("--kedi-eval")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*KEDI_RETRIES (environment): expected a whole number >= 0*"])


def test_usage_line_sums_every_suite() -> None:
    from pytest_kedi.evals import RowResult, SuiteResult, Usage
    from pytest_kedi.plugin.records import SuiteRecord
    from pytest_kedi.plugin.summary import usage_line

    def record(name: str, *usages: Usage) -> SuiteRecord:
        rows = [
            RowResult(i, None, None, 1.0, None, None, None, 0.0, retries=i, usage=usage)
            for i, usage in enumerate(usages)
        ]
        result = SuiteResult(name, "m", "d", "data", 1.0, rows, len(rows), 0, {}, None, None, 0)
        return SuiteRecord(f"x.kedi::eval:{name}", 1, result, None, "passed")

    suites = [record("a", Usage(1, 10, 2), Usage(1, 12, 3)), record("b", Usage(2, 1, 1))]
    assert usage_line(suites) == "usage: 4 requests, 23 input tokens, 6 output tokens; 1 retry"
    assert usage_line([record("c", Usage(1, 1, 1))]) == (
        "usage: 1 request, 1 input token, 1 output token"
    )
    assert usage_line([record("d", Usage())]) is None
