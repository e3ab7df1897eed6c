"""A local OpenAI Chat Completions server (stdlib ``http.server`` on 127.0.0.1) for tests.

It answers ``POST /v1/chat/completions`` without streaming. A request that offers tools
(pydantic-ai's structured output) gets a call of the first tool with ``arguments(body)``;
a plain request gets ``text(body)`` as the assistant's message; ``status(body)`` other than
200 answers with that HTTP error instead, and ``raw(body)``, when set, gives the whole answer
(status, content type and body bytes) instead of all of these. Every request body and its
headers are recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = dict[str, Any]


def last_user_text(body: Body) -> str:
    """The text of the last user message of a chat request."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(part.get("text", "") for part in content)
            return str(content)
    return ""


@dataclass
class OpenAIStub:
    text: Callable[[Body], str] = lambda body: "stub answer"
    arguments: Callable[[Body], dict[str, Any]] = lambda body: {}
    status: Callable[[Body], int] = lambda body: 200
    raw: Callable[[Body], tuple[int, str, bytes]] | None = None
    requests: list[tuple[dict[str, str], Body]] = field(default_factory=list)
    #: answer HTTP/1.1 and keep connections open between requests, as real servers do
    keep_alive: bool = False
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _answer(self, body: Body) -> Body:
        tools = body.get("tools") or []
        message: Body = {"role": "assistant", "content": None}
        number = len(self.requests)  # ids differ from answer to answer, as a provider's do
        if tools:
            name = tools[0]["function"]["name"]
            call = {"name": name, "arguments": json.dumps(self.arguments(body))}
            call_id = f"call_{number}"
            message["tool_calls"] = [{"id": call_id, "type": "function", "function": call}]
            finish = "tool_calls"
        else:
            message["content"] = self.text(body)
            finish = "stop"
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1_700_000_000 + number,
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def start(self) -> OpenAIStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            @property  # type: ignore[override]
            def protocol_version(self) -> str:  # read per request: set after start() too
                return "HTTP/1.1" if stub.keep_alive else "HTTP/1.0"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append((dict(self.headers), body))
                kind = "application/json"
                failed = stub.status(body)
                if stub.raw is not None:
                    status, kind, data = stub.raw(body)
                else:
                    if failed != 200:
                        status, payload = failed, {"error": {"message": f"stub error {failed}"}}
                    elif self.path.rstrip("/").endswith("/chat/completions"):
                        status, payload = 200, stub._answer(body)
                    else:
                        status, payload = 404, {"error": {"message": f"no route {self.path}"}}
                    data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
