"""A real provider path under pytest: `openai-chat:` against a local keyless server."""

from __future__ import annotations

import pytest
from kedi_openai_stub import OpenAIStub
from kedi_plugin_helpers import Kedi

CLASSIFY = """\
@classify(text: str) -> str:
  >> Classify the sentiment of <text> as [label: str]
  = <label>

@eval: classify:
  > data: reviews:
    = `[("great", "positive"), ("awful", "negative")]`
  > metric: exact(reviews):
    = `classify(reviews) == expected`
"""


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
