"""Retries of transient model failures at the model boundary (``--kedi-retries``).

`RetryingModel` wraps whatever pydantic-ai `Model` a program calls, so a `FunctionModel`
raising ``ModelHTTPError(503)`` is retried exactly like an HTTP provider. Transient are:
an HTTP status 408, 429 or 5xx (`ModelHTTPError`; a 429 that pydantic-ai classifies as an
exhausted quota is not, it does not recover by waiting), pydantic-ai's rate-limit,
unavailable and server-error categories with or without a status (`ModelRateLimitError`,
`ModelUnavailableError`, `ModelServerError`), connection failures and provider
timeouts (`ModelConnectionError`, `ModelTimeoutError`, `ModelRequestTimeout`, or any
`ModelAPIError` caused by the HTTP transport), and the same statuses and transport
failures raised untranslated by a model calling an SDK or HTTP client itself (an
``openai.RateLimitError``, an ``httpx.HTTPStatusError`` for a 503; not a 429 whose error
code names an exhausted quota). The policy is tenacity's: up to ``retries``
more attempts, waiting what the provider asked for (``Retry-After``, capped) or an
exponential backoff with jitter. Each retry issued adds one to the current row's
`RowScope.retries`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelServerError,
    ModelUnavailableError,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.wait import wait_base

from pytest_kedi.errors import BudgetExhausted
from pytest_kedi.runtime import rowscope

__all__ = ["RetryPolicy", "RetryingModel", "is_transient"]

#: the longest ``Retry-After`` honoured, in seconds (a longer one waits this long)
MAX_RETRY_AFTER = 60.0

Sleep = Callable[[float], Awaitable[None]]


#: transport failures of the HTTP libraries provider SDKs use (httpx, aiohttp, the SDKs' own
#: connection and timeout errors), matched by class name so none of them must be installed
_TRANSPORT_CLASSES = frozenset(
    {
        "TransportError",  # httpx (connect, read, write, pool, timeouts)
        "ClientConnectionError",  # aiohttp
        "ServerTimeoutError",  # aiohttp
        "APIConnectionError",  # openai, anthropic, groq SDKs (APITimeoutError derives from it)
    }
)


def _transport_failure(error: BaseException | None) -> bool:
    if error is None:
        return False
    if isinstance(error, ConnectionError | TimeoutError):
        return True
    return any(cls.__name__ in _TRANSPORT_CLASSES for cls in type(error).__mro__)


def is_transient(error: BaseException) -> bool:
    """Whether a model request that raised ``error`` is worth retrying."""
    if isinstance(error, ModelQuotaExceededError):
        return False
    if isinstance(error, ModelHTTPError):
        return error.status_code in (408, 429) or 500 <= error.status_code <= 599
    # pydantic-ai's categories of a failure that waiting cures, also when no HTTP status
    # came with it (a rate limit or an unavailable provider reported inside a stream, or
    # raised by a `FunctionModel`)
    if isinstance(error, ModelRateLimitError | ModelUnavailableError | ModelServerError):
        return True
    if isinstance(error, ModelConnectionError | ModelRequestTimeout):
        return True
    if isinstance(error, ModelAPIError):
        return _transport_failure(error.__cause__)
    status = http_status(error)
    if status is not None:
        # a provider SDK's or an HTTP library's own error, raised by a model that does not
        # translate it (a `FunctionModel` calling a client): judged by its status, as above
        return _transient_status(status) and not _says_quota(error)
    return _transport_failure(error)


def _transient_status(status: int) -> bool:
    return status in (408, 429) or 500 <= status <= 599


def http_status(error: BaseException) -> int | None:
    """The HTTP status a failure that is not pydantic-ai's carries, if any: its
    ``status_code`` (the OpenAI, Anthropic and Groq SDKs' status errors) or its response's
    (``httpx.HTTPStatusError``, ``requests.HTTPError``)."""
    for holder in (error, getattr(error, "response", None)):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599:
            return status
    return None


#: the error codes with which OpenAI-compatible APIs report an exhausted quota or spend
#: limit in a 429 (pydantic-ai's `ModelQuotaExceededError`): waiting does not cure them
_QUOTA_CODES = frozenset(
    {
        "insufficient_quota",
        "billing_hard_limit_reached",
        "credit_balance_exhausted",
        "organization_spend_limit_exceeded",
        "project_spend_limit_exceeded",
        "organization_usage_limit_exceeded",
    }
)


def _says_quota(error: BaseException) -> bool:
    """Whether an SDK's status error names an exhausted quota (its ``code`` or ``type``, or
    those of the ``error`` object of its body, or of its response's JSON body)."""
    body = getattr(error, "body", None)
    if body is None:
        try:
            body = error.response.json()  # type: ignore[attr-defined]
        except Exception:  # no response, or a body that is not JSON
            body = None
    inner = body.get("error") if isinstance(body, dict) else None
    holders = (error, body, inner)
    for holder in holders:
        for name in ("code", "type"):
            value = holder.get(name) if isinstance(holder, dict) else getattr(holder, name, None)
            if isinstance(value, str) and value in _QUOTA_CODES:
                return True
    return False


def _retry_after(error: BaseException | None) -> float | None:
    """The seconds ``error`` asks to wait: pydantic-ai's ``retry_after``, else the
    ``retry-after-ms`` or ``Retry-After`` header of the response an SDK's or HTTP library's
    status error carries (read as pydantic-ai reads a provider's)."""
    if error is None:
        return None
    after = getattr(error, "retry_after", None)
    if isinstance(after, int | float) and not isinstance(after, bool):
        return float(after) if after >= 0 else None
    status = http_status(error)
    headers = getattr(getattr(error, "response", None), "headers", None)
    if status is None or not isinstance(headers, Mapping):
        return None
    try:
        parsed = ModelHTTPError(status, "", headers={str(k): str(v) for k, v in headers.items()})
    except Exception:  # headers that cannot be read
        return None
    return parsed.retry_after


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``retries`` further attempts after a transient failure; waits of ``initial`` seconds
    doubling up to ``maximum``, plus up to ``jitter`` random seconds. ``sleep`` waits (tests
    inject one that does not)."""

    retries: int
    initial: float = 0.5
    maximum: float = 30.0
    jitter: float = 1.0
    sleep: Sleep = field(default=asyncio.sleep)


class _WaitRetryAfter(wait_base):
    """The provider's ``Retry-After`` when the failure carries one, else ``fallback``."""

    def __init__(self, fallback: wait_base) -> None:
        self.fallback = fallback

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        after = _retry_after(outcome.exception() if outcome is not None else None)
        if after is not None:
            return min(after, MAX_RETRY_AFTER)
        return float(self.fallback(retry_state))


def _count_retry(step: int) -> None:
    scope = rowscope.current()
    if scope is not None:
        scope.retries += step


class RetryingModel(WrapperModel):
    """Retries the wrapped model's transient failures under ``policy``."""

    def __init__(self, wrapped: Model, policy: RetryPolicy) -> None:
        super().__init__(wrapped)
        self.policy = policy

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        policy = self.policy
        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.retries + 1),
            wait=_WaitRetryAfter(
                wait_exponential_jitter(
                    multiplier=policy.initial, max=policy.maximum, jitter=policy.jitter
                )
            ),
            retry=retry_if_exception(is_transient),
            sleep=policy.sleep,
            reraise=True,
        )
        attempts = 0

        async def attempt() -> ModelResponse:
            # A retry counts as its request is sent: not when its wait begins (a row
            # cancelled by ``--kedi-timeout`` during the wait never sends it), nor when the
            # ``--kedi-max-requests`` budget refuses it (synchronously, before sending). It
            # counts before the request is awaited, so a row timed out while its retry is
            # in flight has that retry counted already.
            nonlocal attempts
            attempts += 1
            retry = attempts > 1
            if retry:
                _count_retry(1)
            try:
                return await self.wrapped.request(
                    messages, model_settings, model_request_parameters
                )
            except BudgetExhausted:
                if retry:
                    _count_retry(-1)  # refused: no request was sent
                raise

        response: ModelResponse = await retrying(attempt)
        return response
