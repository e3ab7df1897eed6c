"""A real provider path under pytest: `openai-chat:` against a local keyless server."""

from __future__ import annotations

import json
import re

import pytest
from kedi_openai_stub import OpenAIStub
from kedi_plugin_helpers import CLASSIFY, Kedi

#: a key no provider knows: these runs talk to a local stub, or to nothing
FAKE_KEY = "sk-test-123456789"


def test_keyless_openai_compatible_server_scores_the_suite(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    openai_stub.arguments = lambda body: {"label": "positive"}
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run("--kedi-eval", "--kedi-model", "openai-chat:local", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    suite = kedi.json("r.json")["suites"][0]
    assert (suite["score"], suite["rows_errored"]) == (0.5, 0)
    assert [body["model"] for _headers, body in openai_stub.requests] == ["local", "local"]


@pytest.mark.parametrize(
    ("options", "sent"),
    [
        (("--kedi-max-requests", "1"), 1),
        (("--kedi-retries", "1"), 4),
        ((), 2),
    ],
)
def test_the_provider_sdk_does_not_retry_behind_the_budget(
    kedi: Kedi,
    monkeypatch: pytest.MonkeyPatch,
    openai_stub: OpenAIStub,
    options: tuple[str, ...],
    sent: int,
) -> None:
    """The OpenAI SDK retried each 5xx twice on its own: `--kedi-max-requests 1` let three
    requests through, and `--kedi-retries 0` sent three per call, none of them counted."""
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    openai_stub.status = lambda body: 500
    kedi.write("classify.kedi", CLASSIFY)
    args = ("--kedi-eval", "--kedi-model", "openai-chat:local", "--kedi-report", "r.json")
    result = kedi.run(*args, *options)
    result.assert_outcomes(passed=1)
    if options[:1] == ("--kedi-max-requests",):  # under xdist a worker may get a 0 share
        assert len(openai_stub.requests) <= sent
        assert len(openai_stub.requests) == sent or kedi.workers is not None
    else:
        assert len(openai_stub.requests) == sent
    suite = kedi.json("r.json")["suites"][0]
    assert suite["rows_errored"] == 2


def test_a_connect_failure_inside_a_task_group_names_its_cause(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base URL with an impossible port failed every row with `ExceptionGroup: unhandled
    errors in a TaskGroup (1 sub-exception)`, hiding anyio's own message."""
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:99999/v1")  # never connects
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run("--kedi-eval", "--kedi-model", "openai-chat:local", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    rows = kedi.json("r.json")["suites"][0]["rows"]
    assert [row["error_class"] for row in rows] == ["model", "model"]
    for row in rows:
        assert "OverflowError: connect(): port must be 0-65535." in row["error"]
        assert "ExceptionGroup" not in row["error"]


HOOK_MODEL = """\
import os

import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(
        base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
    )
    return OpenAIChatModel("local", provider=provider)
"""


def test_a_hook_built_model_closes_its_connections_at_exit(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    """A model object from the hook, its provider's own HTTP client left to pydantic-ai, was
    never closed: `-W error` turned the session's end into `ResourceWarning: unclosed
    <socket.socket ...>` and exit 1."""
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    openai_stub.keep_alive = True  # the client's pool keeps its connection open
    openai_stub.arguments = lambda body: {"label": "positive"}
    kedi.write("conftest.py", HOOK_MODEL)
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.subprocess("--kedi-eval", "-W", "error", "--kedi-report", "r.json")
    assert result.ret == 0, result.stdout.str()
    output = result.stdout.str() + result.stderr.str()
    assert "ResourceWarning" not in output
    assert "unclosed" not in output
    assert kedi.json("r.json")["suites"][0]["score"] == 0.5
    assert len(openai_stub.requests) == 2


def _raw_provider(
    monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub, status: int, kind: str, body: bytes
) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    openai_stub.raw = lambda request: (status, kind, body)


def test_an_answer_without_choices_is_named_not_a_bare_index_error(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    """A 200 answer with ``"choices": []`` failed each row with pydantic-ai's
    ``IndexError: list index out of range``."""
    answer = {"id": "x", "object": "chat.completion", "created": 1, "model": "local", "choices": []}
    _raw_provider(monkeypatch, openai_stub, 200, "application/json", json.dumps(answer).encode())
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run("--kedi-eval", "--kedi-model", "openai-chat:local", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    rows = kedi.json("r.json")["suites"][0]["rows"]
    assert [row["error"] for row in rows] == [
        "KediModelError: classify.kedi:2: model call failed (openai-chat:local): the provider's "
        'answer is empty: it holds no choices ("choices": [])'
    ] * 2
    assert [row["error_class"] for row in rows] == ["model", "model"]


def test_a_huge_provider_error_is_shortened_visibly(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    """A 1 MB error page went whole into each row error, its feedback and every report."""
    page = b"<html><body>" + b"x" * 1_000_000 + b"</body></html>"
    _raw_provider(monkeypatch, openai_stub, 502, "text/html", page)
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run(
        "--kedi-eval", "--kedi-model", "openai-chat:local", "--kedi-report", "r.json",
        "--kedi-rows-jsonl", "rows.jsonl",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    prefix = "KediModelError: classify.kedi:2: model call failed (openai-chat:local): "
    for row in kedi.json("r.json")["suites"][0]["rows"]:
        error = row["error"]
        assert error.startswith(prefix + "ModelServerError: status_code: 502, ")
        assert re.search(r"<html><body>x+… \(\d+ more characters\)$", error), error[-80:]
        cut = re.fullmatch(r"(.*)… \((\d+) more characters\)", error[len(prefix) :])
        assert cut is not None
        assert len(cut[1]) == 1000 and len(cut[1]) + int(cut[2]) > len(page)
    for name in ("r.json", "rows.jsonl"):
        assert (kedi.pytester.path / name).stat().st_size < 50_000


@pytest.mark.parametrize(
    ("options", "sent"),
    [(("--kedi-max-requests", "1"), 1), (("--kedi-retries", "1"), 4), ((), 2)],
)
def test_a_hook_model_whose_provider_built_its_client_does_not_retry_behind_the_budget(
    kedi: Kedi,
    monkeypatch: pytest.MonkeyPatch,
    openai_stub: OpenAIStub,
    options: tuple[str, ...],
    sent: int,
) -> None:
    """A hook's `OpenAIProvider(base_url=..., api_key=...)` built its own OpenAI client, with
    the SDK's two retries: `--kedi-max-requests 1` let three requests through."""
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    openai_stub.status = lambda body: 500
    kedi.write("conftest.py", HOOK_MODEL)
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", *options)
    result.assert_outcomes(passed=1)
    if options[:1] == ("--kedi-max-requests",):  # under xdist a worker may get a 0 share
        assert len(openai_stub.requests) <= sent
        assert len(openai_stub.requests) == sent or kedi.workers is not None
    else:
        assert len(openai_stub.requests) == sent
    assert kedi.json("r.json")["suites"][0]["rows_errored"] == 2


GIVEN_CLIENT = HOOK_MODEL.replace(
    """    provider = OpenAIProvider(
        base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]
    )""",
    """    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"],
        max_retries=1,
    )
    provider = OpenAIProvider(openai_client=client)""",
)


def test_a_hook_model_on_a_client_the_user_gave_keeps_that_client(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    """README: a client the hook built and gave its provider is used as it is."""
    pytest.importorskip("openai")
    assert "openai_client=client" in GIVEN_CLIENT
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    openai_stub.status = lambda body: 500
    kedi.write("conftest.py", GIVEN_CLIENT)
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    assert len(openai_stub.requests) == 4  # its own retry, for each of the two rows
