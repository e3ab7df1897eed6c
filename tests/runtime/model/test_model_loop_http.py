"""The model loop against a real provider client (OpenAI chat API on a local 127.0.0.1 server):
one shared HTTP client per loop, closed with the loop; a cancelled row drops its request."""

from __future__ import annotations

import json
import select
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load
from pytest_kedi.runtime.model.loop import ModelLoop

ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-local",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hello"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.peers: list[int] = []
        self.hung = threading.Event()
        self.dropped = threading.Event()  # a hanging request's client went away
        self.closed = threading.Event()  # a kept-alive connection was closed by the client


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        self.server.peers.append(self.client_address[1])
        if "HANG" in body:
            self.server.hung.set()
            while True:  # never answer; notice when the client gives up
                readable, _, _ = select.select([self.connection], [], [], 30)
                if readable and not self.connection.recv(1):
                    self.server.dropped.set()
                    self.close_connection = True
                    return
        data = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def finish(self) -> None:
        super().finish()
        self.server.closed.set()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{srv.server_port}/v1")
    yield srv
    srv.shutdown()
    srv.server_close()


SOURCE = """\
@ask(word: str) -> str:
  [answer] << Say <word>.
  = `answer`

@eval: ask:
  > data: words:
    = `["HANG"]`
  > metric: m(words):
    = `ask(words) == "hello"`
"""


def test_calls_share_one_client_and_closing_the_loop_closes_it(
    server: Server, tmp_path: Path
) -> None:
    loop = ModelLoop()
    program = load(
        tmp_path / "a.kedi",
        source=SOURCE,
        mode="validate",
        default_model="openai-chat:gpt-local",
        model_loop=loop,
    )
    ask = program.procedures["ask"]
    assert [ask("one"), ask("two"), ask("three")] == ["hello"] * 3
    assert len(server.peers) == 3 and len(set(server.peers)) == 1  # one kept-alive connection
    assert not server.closed.is_set()
    loop.close()
    assert server.closed.wait(30), "closing the model loop left the HTTP connection open"


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_timed_out_row_drops_its_http_request(
    server: Server, tmp_path: Path, concurrency: int
) -> None:
    with ModelLoop() as loop:
        program = load(
            tmp_path / "a.kedi",
            source=SOURCE,
            mode="validate",
            default_model="openai-chat:gpt-local",
            model_loop=loop,
        )
        assert program.procedures["ask"]("warm up") == "hello"  # the client exists now
        (suite,) = program.module.eval_suites
        result = run_suite(program, suite, EvalOptions(concurrency=concurrency, timeout=2))
        assert server.hung.is_set()
        assert result.rows[0].error_class == "timeout"
        assert server.dropped.wait(30), "the timed-out row's request stayed open"
