"""Model names and provider errors: one line naming the extra or the key, no SDK traceback."""

from __future__ import annotations

import importlib.util

import pytest
from kedi_openai_stub import OpenAIStub, last_user_text

from pytest_kedi.runtime.model import AgentState, ModelBoundary, ModelError, normalize_model_name


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai:gpt-4o", "openai:gpt-4o"),
        ("groq/qwen/qwen3-32b", "groq:qwen/qwen3-32b"),
        ("openrouter:meta/llama", "openrouter:meta/llama"),
        (" anthropic/claude-sonnet ", "anthropic:claude-sonnet"),
        ("test", "test"),
        ("/x", "/x"),
    ],
)
def test_normalize_model_name(name: str, expected: str) -> None:
    assert normalize_model_name(name) == expected


def _call_error(model: str) -> str:
    with pytest.raises(ModelError) as caught:
        ModelBoundary(default=model).invoke(AgentState(), "hi")
    message = str(caught.value)
    assert "\n" not in message
    assert "Traceback" not in message
    return message


@pytest.mark.parametrize(
    ("model", "variable"),
    [("openai:gpt-4o", "OPENAI_API_KEY"), ("openrouter:x/y", "OPENROUTER_API_KEY")],
)
def test_missing_api_key_is_pydantic_ais_own_error(monkeypatch, model: str, variable: str) -> None:
    monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    message = _call_error(model)
    assert message.startswith(f"model '{model}' is not available: UserError: Set the `{variable}`")


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-5", "groq:llama-3.3-70b"])
def test_missing_provider_package_is_pydantic_ais_own_error(monkeypatch, model: str) -> None:
    package = model.partition(":")[0]
    if _installed(package):
        pytest.skip(f"the {package} package is installed")
    monkeypatch.setenv(f"{package.upper()}_API_KEY", "k")
    message = _call_error(model)
    assert message.startswith(
        f"model '{model}' is not available: ImportError: Please install the `{package}` package"
    )
    assert f'pip install "pydantic-ai-slim[{package}]"' in message


def test_vendor_slash_model_from_source_is_normalized(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError, match=r"^model 'openai:gpt-x' is not available: UserError: "):
        ModelBoundary().invoke(AgentState(model="openai/gpt-x"), "hi")


def test_unknown_provider_is_one_line() -> None:
    assert _call_error("nosuch:model") == (
        "model 'nosuch:model' is not available: UserError: Unknown model: nosuch:model"
    )


def test_construction_errors_are_one_line_class_and_message(monkeypatch) -> None:
    from pydantic_ai.exceptions import UserError

    def fake_infer(name: str) -> None:
        raise UserError("first line\n  second line")

    monkeypatch.setattr("pydantic_ai.models.infer_model", fake_infer)
    assert _call_error("xai:grok") == (
        "model 'xai:grok' is not available: UserError: first line second line"
    )


@pytest.fixture
def keyless_openai(monkeypatch, openai_stub: OpenAIStub) -> OpenAIStub:
    """``OPENAI_BASE_URL`` at the local stub and no ``OPENAI_API_KEY`` at all."""
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    return openai_stub


def test_keyless_openai_compatible_server_answers(keyless_openai: OpenAIStub) -> None:
    boundary = ModelBoundary(default="openai-chat:local-model")
    assert boundary.invoke(AgentState(), "hello there") == "stub answer"
    _headers, body = keyless_openai.requests[-1]
    assert body["model"] == "local-model"
    assert last_user_text(body) == "hello there"


def test_keyless_server_answers_structured_calls_from_a_program(
    keyless_openai: OpenAIStub,
) -> None:
    from pytest_kedi.runtime import load

    keyless_openai.arguments = lambda body: {"city": last_user_text(body).split()[-1].upper()}
    source = "> model: openai-chat:local-model\n>> Capital of [city: str] for France\n= <city>\n"
    program = load("prog.kedi", source=source)
    assert program.run() == "FRANCE"
    assert program.synthetic_calls == 0


def test_provider_model_needs_no_key_or_network_until_a_call(monkeypatch) -> None:
    from pytest_kedi.runtime import load

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    source = "> model: openai:gpt-4o\n@greet() -> str:\n  = hi\n[x] << hello\n= <x>\n"
    program = load("prog.kedi", source=source, mode="validate", default_model="openai:gpt-4o")
    assert program.procedures["greet"]() == "hi"
    with pytest.raises(Exception, match="UserError: Set the `OPENAI_API_KEY`"):
        load("prog.kedi", source=source).run()


@pytest.mark.parametrize("keyed", [True, False])
def test_named_models_have_no_sdk_retries(monkeypatch: pytest.MonkeyPatch, keyed: bool) -> None:
    """The SDK's default two retries per request would hide behind --kedi-retries and the
    request budget (also for the keyless model a replay builds)."""
    pytest.importorskip("openai")
    from pytest_kedi.runtime.model.providers import resolve_model

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    if keyed:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    else:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = resolve_model("openai-chat:gpt-4o", answered_from_cassette=not keyed)
    wrapped = getattr(model, "wrapped", model)
    assert wrapped.client.max_retries == 0
