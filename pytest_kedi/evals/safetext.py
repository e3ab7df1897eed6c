"""The one rule for text that leaves a run: encodable, and free of provider secrets.

Every string pytest-kedi writes or prints (reports, JSONL, JUnit properties, failure
text, sub-result labels, xdist transport, the terminal, the CLI) passes through
`clean_text` (or `clean_data` for builtin JSON-like values):

* lone surrogates (text that is not valid UTF-8, e.g. a model answer cut mid-emoji)
  become backslash escapes (``\\udcff``), so the text always encodes as UTF-8;
* the values of credential environment variables (every ``*_API_KEY``, which covers
  ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GROQ_API_KEY``, ``GOOGLE_API_KEY``,
  ``GEMINI_API_KEY`` and ``OPENROUTER_API_KEY``) are replaced with ``[REDACTED:NAME]``,
  so a provider error body that echoes a key never reaches a report or a log.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from typing import TypeVar

from pytest_kedi.constants import SECRET_ENV_SUFFIX

__all__ = [
    "MIN_SECRET_LENGTH",
    "SecretsHeld",
    "clean_data",
    "clean_text",
    "clean_with",
    "current_secrets",
    "secrets",
    "texts_clean",
]

#: Shorter values are not redacted (they would match ordinary text); real keys are longer.
MIN_SECRET_LENGTH = 8

T = TypeVar("T")


_SUFFIX_BYTES = SECRET_ENV_SUFFIX.encode()
#: the raw environment table last read, it without `_PER_TEST`, and the credentials found
_LAST: tuple[dict[bytes, bytes], dict[bytes, bytes], list[tuple[str, str]]] | None = None
#: Set by pytest for each phase of each test (``PYTEST_CURRENT_TEST``).
_PER_TEST = b"PYTEST_CURRENT_TEST"


def current_secrets() -> list[tuple[str, str]]:
    """`secrets()` of the process environment, shared: callers must not change it (this
    runs for every row: no copy). Inside `SecretsHeld`, the credentials found when it
    began, without reading the environment again."""
    held = _HELD
    if held is not None:
        return held
    last = _LAST
    if last is not None and os.name == "posix" and last[0] == getattr(os.environ, "_data", None):
        return last[2]
    secrets()
    return _LAST[2] if _LAST is not None else secrets()


#: While a `SecretsHeld` block runs: the credentials `current_secrets` answers with.
_HELD: list[tuple[str, str]] | None = None
_HOLDS = 0  # `SecretsHeld` blocks running (suites may run in several threads)
_HOLD_LOCK = threading.Lock()


class SecretsHeld:
    """A block (a suite's rows) in which `current_secrets` does not read the environment.

    Comparing the environment costs about a microsecond per read with a few dozen
    variables (more on CI machines), which every scored row paid. Inside the block the
    credentials found when the first running block began are used; on leaving, the
    environment is read again, and ``changed`` says whether the credentials differ from
    the ones used, so that what was cleaned with them is cleaned again (`reclean_rows`).
    """

    changed: bool = False

    def __enter__(self) -> SecretsHeld:
        global _HELD, _HOLDS
        with _HOLD_LOCK:
            if _HOLDS == 0:
                _HELD = None  # read afresh: the first block fixes the answer
                _HELD = current_secrets()
            _HOLDS += 1
            self._used = _HELD
        return self

    def __exit__(self, *exc: object) -> None:
        global _HELD, _HOLDS
        with _HOLD_LOCK:
            _HOLDS -= 1
            if _HOLDS == 0:
                _HELD = None
            self.changed = secrets() != self._used


def secrets(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """``(variable, value)`` of every credential variable set, longest value first."""
    if environ is None:
        raw = getattr(os.environ, "_data", None)
        if os.name == "posix" and isinstance(raw, dict):
            # This runs for every row and report: reuse the last answer while the raw
            # environment table is unchanged (a C-level comparison of the two tables), or
            # changed only in the variable pytest sets for every phase of every test.
            global _LAST
            last = _LAST
            if last is not None:
                if last[0] == raw:
                    return list(last[2])
                # Only the per-test variable changed (each phase of each test)? Our copy
                # takes its new value in place (no copy of the table): equal, it is the
                # table the answer was found in. (Another thread doing the same writes
                # only that key too: an equal table still means the same credentials.)
                seen = last[0]
                now = raw.get(_PER_TEST)
                if now is None:
                    seen.pop(_PER_TEST, None)
                else:
                    seen[_PER_TEST] = now
                if seen == raw:
                    return list(last[2])
            seen = dict(raw)
            table = dict(seen)
            table.pop(_PER_TEST, None)  # not a credential: it cannot change the answer
            if last is not None and last[1] == table:
                _LAST = (seen, last[1], last[2])
                return list(last[2])
            found = _sorted(
                (os.fsdecode(name), os.fsdecode(value).strip())
                for name, value in table.items()
                if type(name) is bytes and name.upper().endswith(_SUFFIX_BYTES)
            )
            _LAST = (seen, table, found)
            return list(found)
    env = os.environ if environ is None else environ
    found = [
        (name, value.strip())
        for name, value in env.items()
        if name.upper().endswith(SECRET_ENV_SUFFIX) and len(value.strip()) >= MIN_SECRET_LENGTH
    ]
    return sorted(found, key=lambda item: -len(item[1]))


def _sorted(found: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    kept = [item for item in found if len(item[1]) >= MIN_SECRET_LENGTH]
    return sorted(kept, key=lambda item: -len(item[1])) if kept else kept


def clean_with(text: str, found: list[tuple[str, str]]) -> str:
    """`clean_text` with the credential list `secrets()` already computed."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    for name, value in found:
        if value in text:
            text = text.replace(value, f"[REDACTED:{name}]")
    return text


def clean_text(text: str) -> str:
    """``text`` made UTF-8 encodable (surrogates escaped) with credential values redacted."""
    return clean_with(text, secrets())


def texts_clean(texts: Iterable[object]) -> bool:
    """Whether every one of ``texts`` is a string `clean_text` would leave unchanged:
    encodable and without a credential value (checked directly: large texts, such as
    report sections, need no JSON dump); ``False`` for anything else."""
    found = current_secrets()
    for text in texts:
        if type(text) is not str:
            return False
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return False
        for _name, secret in found:
            if secret in text:
                return False
    return True


def clean_data(value: T) -> T:
    """`clean_text` applied to every string (keys included) of a builtin JSON-like value."""
    if not value:  # empty (or a falsy scalar): nothing to clean, as the JSON check finds
        return value
    found = current_secrets()
    if _already_clean(value, found):
        return value
    return _clean_data(value, found)  # type: ignore[return-value]


def _already_clean(value: object, found: list[tuple[str, str]]) -> bool:
    """Whether ``value`` has nothing to clean, decided by one C-level JSON dump (large
    suite records cross this for every report): it encodes as UTF-8 and contains no
    credential value (one that JSON would escape is left to the full walk)."""
    try:
        dumped = json.dumps(value, ensure_ascii=False, check_circular=False)
        dumped.encode("utf-8")
    except (TypeError, ValueError, RecursionError):
        return False
    for _name, secret in found:
        if not secret.isprintable() or '"' in secret or "\\" in secret or secret in dumped:
            return False
    return True


def _clean_data(value: object, found: list[tuple[str, str]]) -> object:
    if isinstance(value, str):
        return clean_with(value, found)
    if isinstance(value, dict):
        return {_clean_data(k, found): _clean_data(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_data(v, found) for v in value]
    if isinstance(value, tuple):
        return tuple(_clean_data(v, found) for v in value)
    return value
