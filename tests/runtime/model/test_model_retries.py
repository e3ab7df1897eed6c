"""Retries of transient model failures at the model boundary (tenacity policy)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load
from pytest_kedi.runtime.model.policy import ModelPolicy
from pytest_kedi.runtime.model.retrying import RetryPolicy, is_transient

PROGRAM = """\
@label(text: str) -> str:
  >> Label <text> [word: str]
  = <word>

@eval: label:
  > data: rows:
    = `[("one", "ok"), ("two", "ok")]`
  > metric: exact(rows):
    = `label(rows) == expected`
"""


class Waits:
    """An injected tenacity sleep: records the waits, never sleeps."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def _flaky(failures: list[BaseException]) -> tuple[FunctionModel, list[str]]:
    """A model raising ``failures`` in turn (one per request), then answering."""
    calls: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append("call")
        if failures:
            raise failures.pop(0)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"word": "ok"})])

    return FunctionModel(respond), calls


def _run(tmp_path: Path, model: FunctionModel, policy: RetryPolicy) -> tuple[object, ...]:
    path = tmp_path / "label.kedi"
    path.write_text(PROGRAM, encoding="utf-8")
    program = load(str(path), mode="validate", model=model, model_policy=ModelPolicy(retry=policy))
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite, EvalOptions())
    return result.score, result.errors_by_class, [row.retries for row in result.rows]


def test_a_function_model_503_is_retried_with_exponential_backoff(tmp_path: Path) -> None:
    waits = Waits()
    model, calls = _flaky([ModelHTTPError(503, "fn"), ModelHTTPError(503, "fn")])
    policy = RetryPolicy(3, initial=1.0, maximum=30.0, jitter=0.0, sleep=waits)
    assert _run(tmp_path, model, policy) == (1.0, {}, [2, 0])
    assert len(calls) == 4
    assert waits.seconds == [1.0, 2.0]


def test_retry_after_is_honoured(tmp_path: Path) -> None:
    waits = Waits()
    failure = ModelHTTPError(429, "fn", headers={"Retry-After": "7"})
    model, _calls = _flaky([failure])
    assert _run(tmp_path, model, RetryPolicy(1, sleep=waits)) == (1.0, {}, [1, 0])
    assert waits.seconds == [7.0]


def test_jitter_stays_within_its_bound(tmp_path: Path) -> None:
    waits = Waits()
    model, _calls = _flaky([ModelHTTPError(500, "fn")] * 3)
    policy = RetryPolicy(3, initial=0.5, maximum=30.0, jitter=1.0, sleep=waits)
    _run(tmp_path, model, policy)
    assert len(waits.seconds) == 3
    for low, wait in zip((0.5, 1.0, 2.0), waits.seconds, strict=True):
        assert low <= wait <= low + 1.0


def test_exhausted_retries_report_the_last_failure(tmp_path: Path) -> None:
    waits = Waits()
    model, calls = _flaky([ModelHTTPError(502, "fn")] * 5)
    score, errors, retries = _run(tmp_path, model, RetryPolicy(2, sleep=waits))
    assert (score, errors) == (0.5, {"model": 1})
    assert retries == [2, 2] and len(calls) == 6  # row 2: two failures, then an answer


def test_a_permanent_failure_is_not_retried(tmp_path: Path) -> None:
    waits = Waits()
    model, calls = _flaky([ModelHTTPError(400, "fn")])
    assert _run(tmp_path, model, RetryPolicy(3, sleep=waits)) == (0.5, {"model": 1}, [0, 0])
    assert waits.seconds == [] and len(calls) == 2


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (ModelHTTPError(408, "m"), True),
        (ModelHTTPError(429, "m"), True),
        (ModelHTTPError(500, "m"), True),
        (ModelHTTPError(599, "m"), True),
        (ModelHTTPError(400, "m"), False),
        (ModelHTTPError(401, "m"), False),
        (ModelHTTPError(404, "m"), False),
        (ModelTimeoutError("m", "read timed out"), True),
        (ModelQuotaExceededError("m", "insufficient quota"), False),
        # the categories without an HTTP status (a stream's error event, a FunctionModel)
        (ModelRateLimitError("m", "RESOURCE_EXHAUSTED"), True),
        (ModelUnavailableError("m", "UNAVAILABLE"), True),
        (ModelServerError("m", "DEADLINE_EXCEEDED"), True),
        (ModelAPIError("m", "bad request shape"), False),
        (ConnectionRefusedError("refused"), True),
        (ValueError("not a model failure"), False),
    ],
)
def test_transient_failures(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient


def test_a_rate_limit_without_a_status_is_retried(tmp_path: Path) -> None:
    """A `ModelRateLimitError` carrying no HTTP status (a gRPC ``RESOURCE_EXHAUSTED``, or
    raised by a `FunctionModel`) was a model error at once, whatever ``--kedi-retries``."""
    waits = Waits()
    failures: list[BaseException] = [
        ModelRateLimitError("fn", "throttled"),
        ModelUnavailableError("fn", "unavailable"),
    ]
    model, calls = _flaky(failures)
    assert _run(tmp_path, model, RetryPolicy(2, jitter=0.0, sleep=waits)) == (1.0, {}, [2, 0])
    assert len(calls) == 4


class TransportError(Exception):
    """Stands in for httpx's transport error base class."""


class ConnectError(TransportError):
    pass


@pytest.mark.parametrize("cause", [ConnectError("refused"), ConnectionResetError("reset")])
def test_a_transport_caused_api_error_is_transient(cause: BaseException) -> None:
    error = ModelAPIError("m", "connection failed")
    error.__cause__ = cause
    assert is_transient(error)


def _sdk_errors() -> dict[str, BaseException]:
    """Provider SDK and HTTP library status errors, built offline, as a model that calls a
    client itself (a `FunctionModel`) lets them escape."""
    openai = pytest.importorskip("openai")
    try:
        import httpx
    except ImportError:  # the SDK's successor package
        httpx = pytest.importorskip("httpx2")
    request = httpx.Request("POST", "https://api.example.test/v1/chat/completions")

    def response(status: int, headers: dict[str, str] | None = None, body: object = None):
        return httpx.Response(status, request=request, headers=headers or {}, json=body or {})

    quota = {"error": {"code": "insufficient_quota", "type": "insufficient_quota"}}
    return {
        "openai 429": openai.RateLimitError(
            "rate limited",
            response=response(429, {"retry-after-ms": "1500"}),
            body={"code": "rate_limit_exceeded"},
        ),
        "openai 503": openai.InternalServerError("down", response=response(503), body=None),
        "openai 400": openai.BadRequestError("bad", response=response(400), body=None),
        "openai quota": openai.RateLimitError("quota", response=response(429), body=quota["error"]),
        "httpx 429": httpx.HTTPStatusError(
            "429", request=request, response=response(429, {"Retry-After": "4"})
        ),
        "httpx 502": httpx.HTTPStatusError("502", request=request, response=response(502)),
        "httpx 404": httpx.HTTPStatusError("404", request=request, response=response(404)),
        "httpx quota": httpx.HTTPStatusError(
            "429", request=request, response=response(429, body=quota)
        ),
    }


@pytest.mark.parametrize(
    ("name", "transient"),
    [
        ("openai 429", True),
        ("openai 503", True),
        ("openai 400", False),
        ("openai quota", False),
        ("httpx 429", True),
        ("httpx 502", True),
        ("httpx 404", False),
        ("httpx quota", False),
    ],
)
def test_an_sdk_status_error_is_judged_by_its_status(name: str, transient: bool) -> None:
    """A model that calls an SDK or HTTP client itself raises its errors untranslated: a
    429 or 5xx was never retried (only pydantic-ai's own `ModelHTTPError` was)."""
    assert is_transient(_sdk_errors()[name]) is transient


def test_sdk_status_errors_raised_by_a_function_model_are_retried(tmp_path: Path) -> None:
    errors = _sdk_errors()
    waits = Waits()
    model, calls = _flaky([errors["openai 429"], errors["httpx 429"], errors["openai 503"]])
    policy = RetryPolicy(3, initial=0.25, jitter=0.0, sleep=waits)
    assert _run(tmp_path, model, policy) == (1.0, {}, [3, 0])
    assert len(calls) == 5
    # each status error's own `retry-after-ms` / `Retry-After`, else the backoff
    assert waits.seconds == [1.5, 4.0, 1.0]


def test_an_sdk_quota_error_is_not_retried(tmp_path: Path) -> None:
    waits = Waits()
    model, calls = _flaky([_sdk_errors()["openai quota"]])
    assert _run(tmp_path, model, RetryPolicy(3, sleep=waits)) == (0.5, {"model": 1}, [0, 0])
    assert waits.seconds == [] and len(calls) == 2
