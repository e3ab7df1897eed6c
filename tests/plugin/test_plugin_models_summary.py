"""The summary and the JSON report name the models that answered, and provider error
bodies never carry a key into any output (issue 7 §4, §5).

The provider path runs against a stdlib HTTP server on 127.0.0.1 that speaks the
OpenAI Chat Completions protocol and echoes the API key in its error bodies.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kedi_plugin_helpers import Kedi

SECRET = "sk-proxy-echo-0123456789"

PROGRAM = """\
@classify(ticket: str) -> str:
  > model: openai-chat:gpt-4o-mini
  >> Classify the ticket.
  Ticket: <ticket>
  Category: [category: Literal["billing", "bug"]]
  = `category`

@rejected(ticket: str) -> str:
  > model: openai-chat:rejected-model
  >> Classify the ticket.
  Ticket: <ticket>
  Category: [category: Literal["billing", "bug"]]
  = `category`

@offline(ticket: str) -> str:
  >> Classify the ticket.
  Ticket: <ticket>
  Category: [category: Literal["billing", "bug"]]
  = `category`

@eval: classify:
  > data: tickets:
    = `[("refund please", "billing"), ("it crashes", "bug"), ("refund crash", "bug")]`
  > metric: accuracy(tickets):
    = `classify(tickets) == expected`

@eval: rejected:
  > data: tickets:
    = `[("refund please", "billing")]`
  > metric: accuracy(tickets):
    = `rejected(tickets) == expected`

@eval: offline:
  > data: tickets:
    = `[("refund please", "billing")]`
  > metric: accuracy(tickets):
    = `offline(tickets) in ("billing", "bug")`
"""


class _ChatCompletions(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if request["model"] == "rejected-model":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            self._send(401, {"error": {"message": f"Incorrect API key provided: {key}"}})
            return
        prompt = json.dumps(request["messages"])
        category = "bug" if "crash" in prompt else "billing"
        call = {
            "id": "call_1",
            "type": "function",
            "function": {
                "name": request["tools"][0]["function"]["name"],
                "arguments": json.dumps({"category": category}),
            },
        }
        self._send(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": request["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                        "finish_reason": "tool_calls",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    pytest.importorskip("openai")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _models_line(result: pytest.RunResult) -> str:
    return next(line for line in result.outlines if line.startswith("models:"))


def test_summary_counts_calls_per_answering_model_and_redacts_provider_bodies(
    kedi: Kedi, provider: str
) -> None:
    kedi.write("tickets.kedi", PROGRAM)
    result = kedi.subprocess(
        "--kedi-eval",
        "--kedi-report",
        "r.json",
        "--kedi-rows-jsonl",
        "rows.jsonl",
        "--junitxml",
        "junit.xml",
        "-v",
        "--kedi-max-errors",
        "0",
    )
    result.assert_outcomes(passed=2, failed=1)
    assert _models_line(result) == (
        "models: openai-chat:gpt-4o-mini (3 calls), openai-chat:rejected-model (1 call), "
        "test (1 call; offline default: synthetic output, not a real model)"
    )
    report = kedi.json("r.json")
    assert report["model_calls"] == {
        "openai-chat:gpt-4o-mini": 3,
        "openai-chat:rejected-model": 1,
        "test": 1,
    }
    rejected = next(s for s in report["suites"] if s["procedure"] == "rejected")
    assert "Incorrect API key provided: [REDACTED:OPENAI_API_KEY]" in rejected["feedback"]
    printed = result.stdout.str() + result.stderr.str()
    assert "[REDACTED:OPENAI_API_KEY]" in printed
    assert SECRET not in printed
    for name in ("r.json", "rows.jsonl", "junit.xml"):
        assert SECRET not in (kedi.pytester.path / name).read_text("utf-8"), name


UNAVAILABLE = """\
@classify(ticket: str) -> str:
  > model: openai:gpt-4o-mini
  >> Classify <ticket>: [category: str]
  = `category`

@eval: classify:
  > data: tickets:
    = `[("refund", "billing"), ("crash", "bug")]`
  > metric: exact(tickets):
    = `classify(tickets) == expected`
"""


def test_calls_to_a_model_that_cannot_be_built_are_not_counted_as_calls(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the provider's key no request is sent, yet the summary said ``models:
    openai:gpt-4o-mini (2 calls)``, as if the model had been called."""
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    kedi.write("tickets.kedi", UNAVAILABLE)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    assert _models_line(result) == "models: no model calls (default: test)"
    report = kedi.json("r.json")
    assert report["model_calls"] == {}
    suite = report["suites"][0]
    assert suite["errors_by_class"] == {"model": 2}
    assert "model 'openai:gpt-4o-mini' is not available: UserError:" in suite["feedback"]


UNBUILDABLE = """\
```
class Opaque:
    pass
```
@classify(ticket: str) -> str:
  >> Classify <ticket> as [category: `Opaque`]
  = ok

@eval: classify:
  > data: tickets:
    = `[("refund please", "billing"), ("it crashes", "bug")]`
  > metric: exact(tickets):
    = `classify(tickets) == expected`
"""


def test_a_template_whose_output_schema_cannot_be_built_counts_no_call(kedi: Kedi) -> None:
    """The schema fails before any request, yet the summary said ``models: test (2 calls;
    offline default: synthetic output, not a real model)``."""
    kedi.write("tickets.kedi", UNBUILDABLE)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    assert _models_line(result) == "models: no model calls (default: test)"
    report = kedi.json("r.json")
    assert report["model_calls"] == {}
    suite = report["suites"][0]
    assert suite["errors_by_class"] == {"model": 2}
    assert "cannot build the output schema: PydanticSchemaGenerationError:" in suite["feedback"]
