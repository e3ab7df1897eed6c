"""Model precedence (docs/language.md#model-selection) and the synthetic-output notice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic_ai.models.test import TestModel

from pytest_kedi.runtime.model import SYNTHETIC_NOTICE, AgentState, ModelBoundary

SOURCE = AgentState(model="anthropic/claude-x")


def selected(boundary: ModelBoundary, fake_adapter, state: AgentState) -> object:
    boundary.invoke(state, "hi")
    return fake_adapter.calls[-1]["model"]


def test_injected_model_forces_every_call_over_source_model(fake_adapter) -> None:
    injected = TestModel()
    boundary = ModelBoundary(injected, "groq:llama", adapter=fake_adapter)
    assert selected(boundary, fake_adapter, SOURCE) is injected
    assert selected(boundary, fake_adapter, AgentState()) is injected
    assert boundary.select(SOURCE) == (injected, "injected")


def test_injected_model_name_is_normalized(fake_adapter) -> None:
    boundary = ModelBoundary("openai/gpt-4o", adapter=fake_adapter)
    assert selected(boundary, fake_adapter, SOURCE) == "openai:gpt-4o"


def test_source_model_beats_configured_default(fake_adapter, monkeypatch) -> None:
    monkeypatch.setenv("KEDI_ADAPTER_MODEL", "openai:from-env")
    boundary = ModelBoundary(default="groq:default", adapter=fake_adapter)
    assert selected(boundary, fake_adapter, SOURCE) == "anthropic:claude-x"
    assert boundary.select(SOURCE)[1] == "source"


def test_configured_default_beats_environment(fake_adapter, monkeypatch) -> None:
    monkeypatch.setenv("KEDI_ADAPTER_MODEL", "openai:from-env")
    boundary = ModelBoundary(default="groq/default", adapter=fake_adapter)
    assert selected(boundary, fake_adapter, AgentState()) == "groq:default"
    assert boundary.select(AgentState())[1] == "default"


def test_environment_is_the_default_when_none_is_configured(fake_adapter, monkeypatch) -> None:
    monkeypatch.setenv("KEDI_ADAPTER_MODEL", "openai:from-env")
    boundary = ModelBoundary(adapter=fake_adapter)
    assert selected(boundary, fake_adapter, AgentState()) == "openai:from-env"


def test_builtin_default_is_the_offline_test_model(fake_adapter) -> None:
    boundary = ModelBoundary(adapter=fake_adapter)
    assert boundary.select(AgentState()) == ("test", "builtin")
    assert boundary.describe() == "test (synthetic output)"
    assert ModelBoundary(default="openai:gpt-4o").describe() == "openai:gpt-4o"


def test_constructing_a_provider_model_needs_no_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    boundary = ModelBoundary("openai:gpt-4o", "anthropic:claude-x")
    assert boundary.select(AgentState()) == ("openai:gpt-4o", "injected")


def test_synthetic_calls_are_counted_and_announced_once(fresh_notice, capsys) -> None:
    boundary = ModelBoundary()
    assert boundary.invoke(AgentState(), "hi") == "success (no tool calls)"
    assert boundary.produce(AgentState(), "hi", {"n": (int, None)}) == {"n": 0}
    assert boundary.synthetic_calls == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == SYNTHETIC_NOTICE + "\n"


def test_real_or_injected_models_are_not_synthetic(fresh_notice, capsys) -> None:
    boundary = ModelBoundary(TestModel())
    boundary.invoke(AgentState(), "hi")
    assert boundary.synthetic_calls == 0
    assert capsys.readouterr().err == ""


def test_notice_is_printed_once_per_process_to_stderr(tmp_path: Path) -> None:
    script = (
        "from pytest_kedi.runtime.model import ModelBoundary, AgentState\n"
        "for _ in range(2):\n"
        "    b = ModelBoundary()\n"
        "    b.invoke(AgentState(), 'x')\n"
        "print(b.synthetic_calls)\n"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PATH": "", "PYTHONPATH": str(root)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "1\n"
    assert done.stderr.count("synthetic output") == 1


def test_describe_names_models() -> None:
    assert ModelBoundary(TestModel()).describe() == "test"
    assert ModelBoundary("groq/llama").describe() == "groq:llama"


def test_calls_are_counted_per_resolved_model_name(fake_adapter, fresh_notice) -> None:
    """Issue 7 §4: the plugin's summary names the models that actually answered."""
    boundary = ModelBoundary(default="groq/default", adapter=fake_adapter)
    boundary.invoke(SOURCE, "a")
    boundary.invoke(SOURCE, "b")
    boundary.produce(AgentState(), "c", {"n": (int, None)})
    assert boundary.call_counts() == {"anthropic:claude-x": 2, "groq:default": 1}
    assert ModelBoundary(adapter=fake_adapter).call_counts() == {}


def test_a_state_follows_the_environment_variable_between_calls(fake_adapter, monkeypatch) -> None:
    # what a call needs of its state is worked out once, but the model it took from the
    # environment is chosen again when the variable changes (and the builtin one when unset)
    boundary = ModelBoundary(adapter=fake_adapter)
    state = AgentState()
    monkeypatch.setenv("KEDI_ADAPTER_MODEL", "openai:first")
    assert selected(boundary, fake_adapter, state) == "openai:first"
    assert selected(boundary, fake_adapter, state) == "openai:first"
    monkeypatch.setenv("KEDI_ADAPTER_MODEL", "groq/second")
    assert selected(boundary, fake_adapter, state) == "groq:second"
    monkeypatch.delenv("KEDI_ADAPTER_MODEL")
    assert selected(boundary, fake_adapter, state) == "test"
    assert boundary.call_counts() == {"openai:first": 2, "groq:second": 1, "test": 1}


def test_a_failing_state_fails_every_call(fake_adapter) -> None:
    import pytest

    from pytest_kedi.errors import UnsupportedFeature

    boundary = ModelBoundary(adapter=fake_adapter)
    state = AgentState(unsupported=(("> fallback: x", 3),))
    for _ in range(2):
        with pytest.raises(UnsupportedFeature):
            boundary.invoke(state, "hi")
    assert fake_adapter.calls == []
    assert boundary.call_counts() == {}
