"""`> optimize:` artifacts: ``<file>.kedi.optimized.json`` prefixes
(docs/language.md#model-directives)."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

from pytest_kedi.constants import ENV_DEBUG_OPTIMIZED
from pytest_kedi.errors import ModelError
from pytest_kedi.text import one_line

__all__ = ["apply_optimized_prefix", "load_optimized", "optimized_path"]


def optimized_path(kedi_path: str | os.PathLike[str]) -> Path:
    """The sibling artifact of ``prog.kedi``: ``prog.kedi.optimized.json``."""
    path = Path(kedi_path)
    return path.with_name(path.name + ".optimized.json")


def _debug(message: str) -> None:
    if os.environ.get(ENV_DEBUG_OPTIMIZED) == "1":
        print(f"kedi optimized: {message}", file=sys.stderr)


def _check_shape(data: object, path: Path) -> dict[str, dict[str, str]]:
    shape = 'expected {"<procedure>": {"<span>": "<prefix>"}}'
    if not isinstance(data, dict):
        raise ModelError(f"invalid optimized prompts in {path}: {shape}")
    result: dict[str, dict[str, str]] = {}
    for proc, spans in data.items():
        if not isinstance(spans, dict):
            raise ModelError(f"invalid optimized prompts in {path}: entry '{proc}': {shape}")
        for span, prefix in spans.items():
            if not isinstance(prefix, str):
                raise ModelError(
                    f"invalid optimized prompts in {path}: '{proc}'.'{span}' is not a string"
                )
        result[proc] = dict(spans)
    return result


def load_optimized(
    kedi_path: str | os.PathLike[str],
    known_spans: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, dict[str, str]]:
    """Load the sibling artifact; ``{}`` when it is missing; `ModelError` when invalid.

    With ``known_spans`` (``{procedure: span names}``), entries naming no known
    procedure/span are reported as stale with a warning.
    """
    path = optimized_path(kedi_path)
    if not path.is_file():
        _debug(f"no {path.name}; using source prompts")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"invalid optimized prompts in {path}: {one_line(error)}") from error
    result = _check_shape(data, path)
    for proc, spans in result.items():
        for span, prefix in spans.items():
            _debug(f"{path.name}: {proc}.{span}: prefix of {len(prefix)} characters")
    if known_spans is not None:
        for proc, spans in result.items():
            known = set(known_spans.get(proc, ()))
            for span in spans:
                if span not in known:
                    message = (
                        f"stale optimized prompt in {path}: no `> optimize: {span}:` in @{proc}"
                    )
                    _debug(message)
                    # located at the artifact (not at pytest-kedi's code)
                    warnings.warn_explicit(message, UserWarning, os.fspath(path), 1)
    return result


def apply_optimized_prefix(prefix: str | None, template: str) -> str:
    """Prepend an optimized prefix: ``prefix.rstrip() + "\\n\\n" + template``
    (docs/language.md#model-directives)."""
    if not prefix or not prefix.strip():
        return template
    return prefix.rstrip() + "\n\n" + template
