"""`> settings:` value parsing and key filtering (`KEDI.md` §4.3)."""

from __future__ import annotations

import pytest

from pytest_kedi.runtime.model import (
    DROPPED_SETTING_KEYS,
    MODEL_SETTING_KEYS,
    ModelError,
    parse_setting_value,
    validate_settings,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", True),
        ("False", False),
        ("null", None),
        ("None", None),
        ("42", 42),
        (" -7 ", -7),
        ("0.25", 0.25),
        ("1e3", 1000.0),
        ("[1, 'a']", [1, "a"]),
        ("{'k': 2}", {"k": 2}),
        ("'quoted'", "quoted"),
        ("workspace-write", "workspace-write"),
        ("hello world", "hello world"),
        ("", ""),
    ],
)
def test_parse_setting_value(text: str, expected: object) -> None:
    value = parse_setting_value(text)
    assert value == expected
    assert type(value) is type(expected)


def test_documented_keys_pass_through() -> None:
    settings = {
        "max_tokens": 100,
        "temperature": 0,
        "top_p": 0.9,
        "timeout": 30,
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "seed": 7,
        "presence_penalty": 0.1,
        "frequency_penalty": 0.2,
        "logit_bias": {"50256": -100},
        "stop_sequences": ("END",),
        "extra_headers": {"x": "y"},
        "thinking": "low",
        "service_tier": "flex",
        "extra_body": {"a": 1},
    }
    assert set(settings) == MODEL_SETTING_KEYS
    assert validate_settings(settings) == {**settings, "stop_sequences": ["END"]}


def test_other_backend_keys_are_dropped_silently() -> None:
    settings = {key: "x" for key in DROPPED_SETTING_KEYS} | {"temperature": 0.5}
    assert {"stop", "cwd", "env", "sandbox", "permission_mode"} <= DROPPED_SETTING_KEYS
    assert validate_settings(settings) == {"temperature": 0.5}


@pytest.mark.parametrize("key", ["typesafe_threshold", "num_retries", "Temperature", "top_k"])
def test_unknown_keys_are_rejected_with_a_clear_error(key: str) -> None:
    with pytest.raises(ModelError) as caught:
        validate_settings({key: 1})
    message = str(caught.value)
    assert f"unknown setting '{key}' in `> settings:`" in message
    assert "temperature" in message


@pytest.mark.parametrize(
    ("key", "value", "wanted"),
    [
        ("max_tokens", "100", "an integer"),
        ("max_tokens", True, "an integer"),
        ("temperature", "hot", "a number"),
        ("parallel_tool_calls", 1, "true or false"),
        ("stop_sequences", "END", "a list of strings"),
        ("stop_sequences", ["END", 3], "a list of strings"),
    ],
)
def test_bad_values_are_rejected(key: str, value: object, wanted: str) -> None:
    with pytest.raises(ModelError, match=f"setting '{key}' must be {wanted}"):
        validate_settings({key: value})


def test_none_values_pass() -> None:
    assert validate_settings({"max_tokens": None}) == {"max_tokens": None}
