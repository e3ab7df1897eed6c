"""Model names and provider errors: one line naming the extra or the key, no SDK traceback."""

from __future__ import annotations

import importlib.util

import pytest

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
    [
        ("openai:gpt-4o", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("groq:llama-3.3-70b", "GROQ_API_KEY"),
        ("openrouter:x/y", "OPENROUTER_API_KEY"),
    ],
)
def test_missing_api_key_names_the_variable(monkeypatch, model: str, variable: str) -> None:
    monkeypatch.delenv(variable, raising=False)
    message = _call_error(model)
    assert message.startswith(f"model '{model}' is not available")
    assert f"set {variable}" in message


def test_missing_provider_package_names_the_extra(monkeypatch) -> None:
    from pytest_kedi.runtime.model import providers

    real = providers._module_available
    monkeypatch.setattr(providers, "_module_available", lambda m: m != "openai" and real(m))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    message = _call_error("openai:gpt-4o")
    assert message == (
        "model 'openai:gpt-4o' is not available: install its provider package: "
        "pip install 'pytest-kedi[openai]'"
    )


@pytest.mark.skipif(_installed("anthropic"), reason="the anthropic package is installed")
def test_vendor_slash_model_from_source_is_normalized(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with pytest.raises(ModelError, match=r"model 'anthropic:claude-x'.*pytest-kedi\[anthropic\]"):
        ModelBoundary().invoke(AgentState(model="anthropic/claude-x"), "hi")


def test_unknown_provider_is_one_line() -> None:
    assert _call_error("nosuch:model") == (
        "model 'nosuch:model' is not available: UserError: Unknown model: nosuch:model"
    )


def test_pydantic_ai_import_hint_is_translated(monkeypatch) -> None:
    from pytest_kedi.runtime.model import providers

    def fake_infer(name: str) -> None:
        raise ImportError(
            "Please install the `cohere` package to use the Cohere provider, you can use the "
            '`cohere` optional group — `pip install "pydantic-ai-slim[cohere]"`'
        )

    monkeypatch.setattr("pydantic_ai.models.infer_model", fake_infer)
    monkeypatch.setattr(providers, "_precheck", lambda name: None)
    assert _call_error("cohere:command") == (
        "model 'cohere:command' is not available: install its provider package: "
        "pip install 'pydantic-ai-slim[cohere]'"
    )


def test_pydantic_ai_key_hint_is_translated(monkeypatch) -> None:
    from pydantic_ai.exceptions import UserError

    from pytest_kedi.runtime.model import providers

    def fake_infer(name: str) -> None:
        raise UserError(
            "Set the `XAI_API_KEY` environment variable or pass it via `XaiProvider(api_key=...)`"
        )

    monkeypatch.setattr("pydantic_ai.models.infer_model", fake_infer)
    monkeypatch.setattr(providers, "_precheck", lambda name: None)
    assert _call_error("xai:grok") == "model 'xai:grok' is not available: set XAI_API_KEY"
