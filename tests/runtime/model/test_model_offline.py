"""The offline default model answers every built-in type with a value of that type
(docs/language.md#model-selection)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import FileUrl, HttpUrl

from pytest_kedi.runtime.model import AgentState, ModelBoundary
from pytest_kedi.runtime.typenames import TYPE_BUILTINS


def _email() -> Any:
    return TYPE_BUILTINS["Email"]


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (datetime.datetime, datetime.datetime),
        (datetime.time, datetime.time),
        (datetime.timedelta, datetime.timedelta),
        (HttpUrl, HttpUrl),
        (FileUrl, FileUrl),
        (list[datetime.datetime], list),
        (datetime.datetime | None, datetime.datetime),
        (tuple[int, datetime.time], tuple),
        (dict[str, HttpUrl], dict),
    ],
)
def test_the_default_model_answers_formatted_types(field: Any, expected: type) -> None:
    """pydantic-ai's TestModel answered every string `"a"`, so a `datetime`, `time`,
    `timedelta`, `HttpUrl` or `FileUrl` output failed every call of the default model."""
    result = ModelBoundary().produce(AgentState(), "give", {"x": field})
    assert isinstance(result["x"], expected)


def test_the_default_model_answers_an_email() -> None:
    result = ModelBoundary().produce(AgentState(), "give", {"who": _email()})
    assert result["who"] == "user@example.com"


def test_the_default_model_keeps_its_name_and_cassette_keys() -> None:
    from pytest_kedi.runtime.model import describe_model
    from pytest_kedi.runtime.model.providers import resolve_model

    model = resolve_model("test")
    assert describe_model(model) == "test"
    assert type(model).__name__ == "TestModel"  # part of cassette keys
