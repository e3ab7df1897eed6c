"""Errors raised at the model boundary (kept importable here; they live in
`pytest_kedi.errors`). The interpreter wraps them in Kedi frames.

`failure_text` is what a failed model call says of its cause: one line, of bounded length
(a provider's error page can be megabytes, and each row error and report would carry it),
and, for an answer pydantic-ai could not read, what was wrong with the answer rather than
pydantic-ai's bare ``IndexError``."""

from __future__ import annotations

from pytest_kedi.errors import ModelError, UnsupportedFeature
from pytest_kedi.text import one_line

__all__ = ["FAILURE_TEXT", "ModelError", "UnsupportedFeature", "failure_text", "shortened"]

#: characters of a failure's text kept in a row error (the rest is counted, not shown)
FAILURE_TEXT = 1000


def shortened(text: str, limit: int = FAILURE_TEXT) -> str:
    """``text``, or its first ``limit`` characters and how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def failure_text(error: BaseException) -> str:
    """``Class: message`` of the error a model call failed with, on one line and
    `shortened`."""
    unread = _unread_answer(error)
    if unread is not None:
        return unread
    text = one_line(error)
    return shortened(type(error).__name__ + (f": {text}" if text else ""))


def _unread_answer(error: BaseException) -> str | None:
    """What was wrong with a provider's answer that pydantic-ai's model code failed to read
    with an `IndexError` (an OpenAI-compatible server's ``"choices": []``); None for any
    other failure."""
    if not isinstance(error, IndexError):
        return None
    tb = error.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    if not str(frame.f_globals.get("__name__", "")).startswith("pydantic_ai.models"):
        return None
    choices = getattr(frame.f_locals.get("response"), "choices", None)
    if isinstance(choices, list) and not choices:
        return 'the provider\'s answer is empty: it holds no choices ("choices": [])'
    return shortened(
        f"pydantic-ai could not read the provider's answer (IndexError: {one_line(error)})"
    )
