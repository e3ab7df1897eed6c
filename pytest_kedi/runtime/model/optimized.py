"""`> optimize:` artifacts: ``<file>.kedi.optimized.json`` prefixes
(docs/language.md#model-directives)."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from pytest_kedi.constants import ENV_DEBUG_OPTIMIZED
from pytest_kedi.errors import InvalidOptimizedPrompts
from pytest_kedi.fileread import is_file
from pytest_kedi.runtime.kediwarnings import warn_at
from pytest_kedi.text import display_path, one_line

__all__ = [
    "InvalidOptimizedPrompts",
    "apply_optimized_prefix",
    "load_optimized",
    "optimized_path",
]


def optimized_path(kedi_path: str | os.PathLike[str]) -> Path:
    """The sibling artifact of ``prog.kedi``: ``prog.kedi.optimized.json``."""
    path = Path(kedi_path)
    return path.with_name(path.name + ".optimized.json")


def _debug(message: str) -> None:
    if os.environ.get(ENV_DEBUG_OPTIMIZED) == "1":
        print(f"kedi optimized: {message}", file=sys.stderr)


def _key_position(text: str, *keys: str) -> tuple[int, int]:
    """Line and column of the nested ``"key":`` path in ``text`` (each key searched after
    the one before it); (1, 1) when the first is not found."""
    offset = -1
    for key in keys:
        pattern = "|".join(
            re.escape(json.dumps(key, ensure_ascii=ascii)) for ascii in (True, False)
        )
        found = re.compile(rf"(?:{pattern})\s*:").search(text, offset + 1)
        if found is None:
            break
        offset = found.start()
    if offset < 0:
        return 1, 1
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _check_shape(data: object, path: Path, text: str) -> dict[str, dict[str, str]]:
    shape = 'expected {"<procedure>": {"<span>": "<prefix>"}}'
    if not isinstance(data, dict):
        raise InvalidOptimizedPrompts(path, shape, text=text)
    result: dict[str, dict[str, str]] = {}
    for proc, spans in data.items():
        if not isinstance(spans, dict):
            line, column = _key_position(text, proc)
            raise InvalidOptimizedPrompts(path, f"entry '{proc}': {shape}", line, column, text)
        for span, prefix in spans.items():
            if not isinstance(prefix, str):
                line, column = _key_position(text, proc, span)
                detail = f"'{proc}'.'{span}' is not a string"
                raise InvalidOptimizedPrompts(path, detail, line, column, text)
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
    if not is_file(path):
        _debug(f"no {path.name}; using source prompts")
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidOptimizedPrompts(
            path, one_line(error), error.lineno, error.colno, text
        ) from error
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidOptimizedPrompts(path, one_line(error)) from error
    except RecursionError:  # Python's reader recurses per level of nesting
        raise InvalidOptimizedPrompts(path, "JSON nested too deeply") from None
    result = _check_shape(data, path, text)
    for proc, spans in result.items():
        for span, prefix in spans.items():
            _debug(f"{path.name}: {proc}.{span}: prefix of {len(prefix)} characters")
    if known_spans is not None:
        for proc, spans in result.items():
            known = set(known_spans.get(proc, ()))
            for span in spans:
                if span not in known:
                    message = (
                        f"stale optimized prompt in {display_path(os.fspath(path))}: no "
                        f"`> optimize: {span}:` in @{proc}"
                    )
                    _debug(message)
                    # located at the artifact (not at pytest-kedi's code)
                    warn_at(message, os.fspath(path), 1)
    return result


def apply_optimized_prefix(prefix: str | None, template: str) -> str:
    """Prepend an optimized prefix: ``prefix.rstrip() + "\\n\\n" + template``
    (docs/language.md#model-directives)."""
    if not prefix or not prefix.strip():
        return template
    return prefix.rstrip() + "\n\n" + template
