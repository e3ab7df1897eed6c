"""Model for the examples: a rule-based pydantic-ai ``FunctionModel``.

``pytest_kedi_model`` returns the model that answers **every** template of the
``.kedi`` files below this directory, so ``pytest --kedi-eval examples/`` runs offline
and its scores are repeatable. Real projects return a real model here (or use
``--kedi-model openai:gpt-4o``); tests and CI inject fakes exactly like this.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

CATEGORY_RULES = (
    ("bug", re.compile(r"\b(crash\w*|error|bug|broken)\b", re.IGNORECASE)),
    ("account", re.compile(r"\b(password|log ?in|sign ?in)\b", re.IGNORECASE)),
    ("billing", re.compile(r"\b(charg\w*|refund|invoice|payment|card)\b", re.IGNORECASE)),
)
CURRENCIES = {"$": "USD", "€": "EUR", "EUR": "EUR", "£": "GBP", "GBP": "GBP", "¥": "JPY"}
AMOUNT = re.compile(r"\d[\d,]*(?:\.\d+)?")


def classify_ticket(ticket: str) -> dict[str, Any]:
    """Keyword rules, checked in order; deliberately imperfect."""
    for category, pattern in CATEGORY_RULES:
        if pattern.search(ticket):
            return {"category": category}
    return {"category": "other"}


def extract_invoice(text: str) -> dict[str, Any]:
    """Vendor = the words before "invoice"; total = the first amount; currency from its sign.

    An unknown sign (``¥``) yields ``JPY``, which the program's ``Literal`` type rejects:
    that row becomes a model error.
    """
    vendor = re.split(r"\binvoice\b", text, maxsplit=1, flags=re.IGNORECASE)[0].strip(" ,:")
    amount = AMOUNT.search(text)
    total = float(amount.group(0).replace(",", "")) if amount else 0.0
    currency = next((code for sign, code in CURRENCIES.items() if sign in text), "USD")
    return {"vendor": vendor, "total": total, "currency": currency}


def _field(prompt: str, label: str) -> str | None:
    match = re.search(rf"^{label}:\s*(.+)$", prompt, re.MULTILINE)
    return match.group(1).strip() if match else None


def _placeholder(schema: dict[str, Any]) -> dict[str, Any]:
    """Type-correct filler for templates the rules do not know."""
    defaults = {"string": "", "number": 0.0, "integer": 0, "boolean": False}
    values: dict[str, Any] = {}
    for name, spec in schema.get("properties", {}).items():
        values[name] = spec["enum"][0] if "enum" in spec else defaults.get(spec.get("type"))
    return values


def _user_prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answer a Kedi template: fill its output fields (structured) or reply with text."""
    prompt = _user_prompt(messages)
    if (ticket := _field(prompt, "Ticket")) is not None:
        fields = classify_ticket(ticket)
    elif (invoice := _field(prompt, "Invoice")) is not None:
        fields = extract_invoice(invoice)
    elif info.output_tools:
        fields = _placeholder(info.output_tools[0].parameters_json_schema)
    else:
        return ModelResponse(parts=[TextPart("I only know tickets and invoices.")])
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, fields)])
    return ModelResponse(parts=[TextPart(str(fields))])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config: pytest.Config) -> FunctionModel:
    return FunctionModel(answer, model_name="example-rules")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The classifier misses its 0.90 gate (examples/pytest.ini) on purpose: mark it as an
    # expected failure so the demo exits 0. strict=True fails the run if it ever passes.
    for item in items:
        if item.nodeid.endswith("classifier.kedi::eval:classify"):
            item.add_marker(
                pytest.mark.xfail(strict=True, reason="demo: the keyword rules miss the 0.90 gate")
            )
