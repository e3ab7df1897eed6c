"""`> settings:` value parsing and key filtering (docs/language.md#model-directives)."""

from __future__ import annotations

import pytest

from pytest_kedi.runtime.model import (
    DROPPED_SETTING_KEYS,
    ModelError,
    model_setting_keys,
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
    assert set(settings) <= model_setting_keys()
    assert validate_settings(settings) == {**settings, "stop_sequences": ["END"]}


def test_keys_follow_the_installed_pydantic_ai() -> None:
    from pydantic_ai.settings import ModelSettings

    assert model_setting_keys() == frozenset(ModelSettings.__annotations__)
    # keys pydantic-ai gained after the first fixed list pass through too
    gained = {"top_k": 40, "request_timeout": 2.5, "cache": "5m"}
    assert validate_settings(gained) == gained


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("> settings:\n  request_timeout: 2\n  top_k: 5\n", {"request_timeout": 2, "top_k": 5}),
        ("> settings:\n  service_tier: flex\n  stop: END\n", {"service_tier": "flex"}),
        # one backtick mapping, merged like a body (it was silently ignored)
        (
            '> settings: `{"temperature": 0.2, "stop": ["x"]}`\n> settings:\n  top_k: 5\n',
            {"temperature": 0.2, "top_k": 5},
        ),
        # an indented list's rows read like one-line values: a backtick row was sent as its
        # source text, escapes and `~~` were kept as written (docs/language.md#model-directives)
        (
            '> settings:\n  stop_sequences:\n    `"x" * 2`\n    a\\#b\n    c~~d\n    e # note\n',
            {"stop_sequences": ["xx", "a#b", "c~d", "e"]},
        ),
        # a quoted row is the string it quotes, as a quoted one-line value is: the rows
        # were sent with their quotes (`'"a, b"'`)
        (
            '> settings:\n  service_tier: "flex"\n  stop_sequences:\n'
            '    - "a, b"\n    - \'x # y\'  # note\n    ""\n    "q" r\n',
            {"service_tier": "flex", "stop_sequences": ["a, b", "x # y", "", '"q" r']},
        ),
        # a quoted value's escapes are Python's, resolved once: Kedi's escapes were resolved
        # first, so `"a\\nb"` reached the model as a line break and `'C:\\t'` as a tab
        (
            '> settings:\n  extra_body: "a\\\\nb"\n  stop_sequences:\n'
            "    - 'C:\\\\t'\n    - \"\\u00e9\\t\"\n    c\\\\n\n",
            {"extra_body": "a\\nb", "stop_sequences": ["C:\\t", "\u00e9\t", "c\\n"]},
        ),
    ],
)
def test_settings_directive_reaches_the_model(source: str, expected: dict[str, object]) -> None:
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from pytest_kedi.runtime import load

    seen: list[object] = []

    def answer(messages: object, info: AgentInfo) -> object:
        from pydantic_ai.messages import ModelResponse, TextPart

        seen.append(info.model_settings)
        return ModelResponse(parts=[TextPart("ok")])

    program = load("inline.kedi", model=FunctionModel(answer), source=source + "[x] << hi\n= <x>\n")
    assert program.run() == "ok"
    assert seen == [expected]


def test_other_backend_keys_are_dropped_silently() -> None:
    settings = {key: "x" for key in DROPPED_SETTING_KEYS} | {"temperature": 0.5}
    assert {"stop", "cwd", "env", "sandbox", "permission_mode"} <= DROPPED_SETTING_KEYS
    assert validate_settings(settings) == {"temperature": 0.5}


@pytest.mark.parametrize("key", ["typesafe_threshold", "num_retries", "Temperature", "topk"])
def test_unknown_keys_are_rejected_with_a_clear_error(key: str) -> None:
    with pytest.raises(ModelError) as caught:
        validate_settings({key: 1})
    message = str(caught.value)
    assert f"unknown setting '{key}' in `> settings:`" in message
    assert "temperature" in message


@pytest.mark.parametrize("value", [0, 2])
def test_max_retries_is_refused_as_pytest_kedi_does_the_retrying(value: int) -> None:
    """`max_retries: 2` turned the provider SDK's own retries back on: a failing request was
    sent three times, unseen by the usage counts and by `--kedi-max-requests`."""
    with pytest.raises(ModelError) as caught:
        validate_settings({"max_retries": value})
    assert str(caught.value) == (
        "setting 'max_retries' is not available in `> settings:`: pytest-kedi retries failed "
        "requests itself (--kedi-retries), so that every request is counted and "
        "--kedi-max-requests holds"
    )


def test_the_unknown_key_error_does_not_offer_max_retries() -> None:
    with pytest.raises(ModelError) as caught:
        validate_settings({"typo": 1})
    assert "max_retries" not in str(caught.value)


@pytest.mark.parametrize(
    ("key", "value", "wanted"),
    [
        ("max_tokens", "100", "Input should be a valid integer"),
        ("max_tokens", True, "Input should be a valid integer"),
        ("seed", 1.5, "Input should be a valid integer"),
        ("temperature", "hot", "Input should be a valid number"),
        ("parallel_tool_calls", 1, "Input should be a valid boolean"),
        ("stop_sequences", "END", "Input should be a valid list"),
        ("stop_sequences", ["END", 3], "Input should be a valid string"),
        ("service_tier", "fastest", "Input should be 'auto', 'default', 'flex' or 'priority'"),
    ],
)
def test_bad_values_are_rejected(key: str, value: object, wanted: str) -> None:
    with pytest.raises(ModelError) as caught:
        validate_settings({key: value})
    assert str(caught.value).startswith(f"setting '{key}': {wanted}")
    assert str(caught.value).endswith(f"got {value!r}")


def test_none_values_pass() -> None:
    assert validate_settings({"max_tokens": None}) == {"max_tokens": None}


def test_a_settings_value_must_be_a_mapping() -> None:
    from pytest_kedi.errors import KediTypeExecutionError
    from pytest_kedi.runtime import load

    program = load("inline.kedi", source="> settings: `5`\n[x] << hi\n= <x>\n")
    with pytest.raises(KediTypeExecutionError) as caught:
        program.run()
    assert "inline.kedi:1:13: > settings: expects a mapping of setting names to values, got 5" in (
        str(caught.value)
    )


@pytest.mark.parametrize(
    ("source", "line", "snippet", "caret", "message"),
    [
        # an unknown key: at the key
        (
            "> settings:\n  temperature: 0.5\n  bogus_key: 3\n",
            3,
            "bogus_key: 3",
            "^",
            "inline.kedi:3:3: unknown setting 'bogus_key' in `> settings:`",
        ),
        # a value of the wrong type (plain or backtick): at the value
        (
            "> settings:\n  temperature:   hot\n",
            2,
            "temperature:   hot",
            "               ^",
            "inline.kedi:2:18: setting 'temperature': Input should be a valid number",
        ),
        (
            '> settings:\n  max_tokens: `"many"`\n',
            2,
            'max_tokens: `"many"`',
            "            ^",
            "inline.kedi:2:15: setting 'max_tokens': Input should be a valid integer",
        ),
        # a one-line mapping: at its backtick
        (
            '> settings: `{"temperature": "x"}`\n',
            1,
            '> settings: `{"temperature": "x"}`',
            "            ^",
            "inline.kedi:1:13: setting 'temperature': Input should be a valid number",
        ),
        # a nested block is no value: at its first line, never passed on as ''
        (
            "> settings:\n  extra_headers:\n    x: y\n",
            3,
            "x: y",
            "^",
            "inline.kedi:3:5: setting 'extra_headers' takes one value, not nested",
        ),
        # the same for the other directives checked when they run
        (
            "> model: `42`\n",
            1,
            "> model: `42`",
            "         ^",
            "inline.kedi:1:10: > model: expects a model name (str), got 42 (int)",
        ),
        (
            '> adapter: `"xx"`\n',
            1,
            '> adapter: `"xx"`',
            "           ^",
            "inline.kedi:1:12: unknown adapter 'xx'",
        ),
        # a value that is no str: its own `__str__` ran, unlocated (an `int` gave "'42'")
        (
            "> adapter: `42`\n",
            1,
            "> adapter: `42`",
            "           ^",
            "inline.kedi:1:12: > adapter: expects an adapter name (str), got 42 (int)",
        ),
    ],
)
def test_a_bad_directive_value_is_located_at_the_value(
    source: str, line: int, snippet: str, caret: str, message: str
) -> None:
    """A bad key or value is named by its line and column, with a caret under it (it was
    located at the directive's header line)."""
    from pytest_kedi.errors import KediExecutionError
    from pytest_kedi.runtime import load

    program = load("inline.kedi", source=source + "[x] << hi\n= <x>\n")
    with pytest.raises(KediExecutionError) as caught:
        program.run()
    error = caught.value
    assert error.message.startswith(message)
    assert error.line == line
    shown = error.render().splitlines()
    assert shown[-3:-1] == [f"    {snippet}", f"    {caret}"]
