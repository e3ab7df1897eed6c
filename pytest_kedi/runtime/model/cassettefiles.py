"""Cassette files: reading, indexing and writing the JSON document of one cassette.

A cassette is ``{"entries": {key: entry, ...}, "version": N}`` written with sorted keys and
two-space indentation (`write_cassette`), so a re-recording is a small diff. Reading the
whole document (`read_cassette`) makes hundreds of thousands of small objects for a large
cassette, which cost time to make and, while they live, slow every full pass of the cyclic
garbage collector. A replaying run only needs the entries it looks up, so `index_cassette`
cuts a file in the layout `write_cassette` gives into the text of each entry (strings, which
the collector never visits), and `entry_from_text` parses one entry when it is used. A file
in any other layout (edited by hand, reformatted) is read whole instead, with the same
result.
"""

from __future__ import annotations

import dataclasses
import errno
import gc
import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError
from pydantic_ai.messages import ModelResponse
from pydantic_core import from_json

from pytest_kedi.atomicwrite import reason, write_text_atomic
from pytest_kedi.errors import ModelError
from pytest_kedi.text import display_path, one_line

__all__ = [
    "CACHED_STRINGS",
    "CASSETTE_VERSION",
    "CassetteUnreadable",
    "UNSTORED",
    "Entry",
    "changed_entries",
    "entry_from_text",
    "ENTRY_VALUE",
    "Shelf",
    "index_cassette",
    "read_cassette",
    "shelf_entries",
    "stored_response",
    "usage_problem",
    "write_cassette",
]

#: the cassette format; 2: keys left pydantic-ai's serialization (`cassettekeys.key_view`)
CASSETTE_VERSION = 2

Entry = dict[str, Any]


class CassetteUnreadable(ModelError):
    """A cassette file, or an entry of it, that cannot be read: no model is called."""


#: what `write_cassette` puts around the entries
_HEAD = '{\n  "entries": {\n'
_TAIL = f'\n  }},\n  "version": {CASSETTE_VERSION}\n}}\n'
_EMPTY = f'{{\n  "entries": {{}},\n  "version": {CASSETTE_VERSION}\n}}\n'
#: the marks of each entry in that layout: ``    "<64 hex digits>": {`` ... ``    }``
_HEAD_LINE = _HEAD[:-1]
_KEY_LINES = re.compile('\n    "')
_OPEN_LINE = '": {\n'
_CLOSE = "\n    }"
_CLOSE_NEXT = _CLOSE + ","
#: an entry's value in the text `_cut` keeps of it: after the key and ``": ``, before the comma
_VALUE = ENTRY_VALUE = slice(67, -1)
#: the strings pydantic-core's parser keeps in its cache: object keys, which recur in every
#: entry; values (prompts, tool call ids) mostly do not, and caching each costs more
CACHED_STRINGS: Final = "keys"


def read_cassette(path: Path) -> dict[str, Entry]:
    """The entries of a cassette file: {} when it does not exist or is in an older format
    (its keys are not this version's: recording replaces it)."""
    raw = _read(path)
    return {} if raw is None else _document(path, raw)[1]


def _read(path: Path) -> bytes | None:
    """The cassette's bytes; None when there is none (or none can exist: a name too long)."""
    try:
        return path.read_bytes()
    except OSError as error:
        if isinstance(error, FileNotFoundError) or error.errno == errno.ENAMETOOLONG:
            return None
        raise CassetteUnreadable(
            f"cannot read cassette {display_path(str(path))}: {reason(error)}"
        ) from error


def _document(path: Path, text: bytes) -> tuple[int, dict[str, Entry]]:
    """The format and entries of a cassette document (entries of an older format: {})."""
    try:
        data = _parse(text)
        entries = data["entries"]
        version = data.get("version", 1)
        if not isinstance(entries, dict):
            raise TypeError("'entries' is not an object")
        if type(version) is not int:
            raise TypeError("'version' is not an integer")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CassetteUnreadable(
            f"cassette {display_path(str(path))} is not a pytest-kedi cassette: {one_line(error)}"
        ) from error
    if version > CASSETTE_VERSION:
        raise CassetteUnreadable(
            f"cassette {display_path(str(path))} is in format {version}, written by a newer "
            f"pytest-kedi (this one reads format {CASSETTE_VERSION}): upgrade pytest-kedi"
        )
    if version < CASSETTE_VERSION:
        return version, {}
    return version, entries


def _parse(text: bytes) -> Any:
    """The JSON document ``text``, parsed with the cyclic garbage collector paused: a
    cassette is hundreds of thousands of small objects, and collections triggered while
    they are made would walk them again and again (the parse takes 2-3 times as long)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        try:  # pydantic-core's parser: the values `json.loads` gives, in about half the time
            return from_json(text, cache_strings=CACHED_STRINGS)
        except ValueError:  # what it refuses (a lone surrogate escape) or invalid JSON
            try:
                return json.loads(text)
            except RecursionError:  # Python's reader recurses per level of nesting
                raise ValueError("JSON nested too deeply") from None
    finally:
        if paused:
            gc.enable()


def write_cassette(path: Path, entries: Mapping[str, Entry]) -> None:
    """Write ``entries`` as stable, reviewable JSON, by the rules of every file pytest-kedi
    writes (`pytest_kedi.atomicwrite`): atomically, keeping a symbolic link and the file's
    mode (a new file: ``0666 & ~umask``)."""
    document = {"version": CASSETTE_VERSION, "entries": dict(entries)}
    write_text_atomic(
        path, json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    )


def index_cassette(path: Path) -> tuple[int, dict[str, Entry | str]]:
    """The format and entries of a cassette file for lookups: an entry is its JSON text
    (`entry_from_text`) when the file has `write_cassette`'s layout, else its value."""
    raw = _read(path)
    if raw is None:
        return CASSETTE_VERSION, {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    texts = _cut(text)
    if texts is not None:
        return CASSETTE_VERSION, texts
    version, entries = _document(path, raw)
    return version, dict(entries)


def _cut(text: str) -> dict[str, Entry | str] | None:
    """Each entry's text by key (`entry_from_text` parses it); ``None`` unless ``text`` has
    the written layout.

    In that layout a line indented by exactly four spaces is an entry's key line
    (``    "<key>": {``) or its closing line (``    }``): values are indented deeper, and
    a JSON string holds no raw line break. Cutting the text at each key line therefore
    gives one piece per entry, which must start with its key and the opening brace and end
    with the closing line and a comma (the last one: the end of the document). A piece is
    kept as it is, key and all (`_VALUE` cuts the value out when it is parsed).
    """
    if text == _EMPTY:
        return {}
    if not text.endswith(_TAIL):
        return None
    pieces = _KEY_LINES.split(text)  # a regular expression splits faster than `str.split`
    if pieces[0] != _HEAD_LINE:
        return None
    texts: dict[str, Entry | str] = {}
    last = len(pieces) - 1
    for index in range(1, last):
        piece = pieces[index]
        if piece[64:69] != _OPEN_LINE or not piece.endswith(_CLOSE_NEXT):
            return None
        texts[piece[:64]] = piece
    if last:
        piece = pieces[last]
        if piece[64:69] != _OPEN_LINE or not piece.endswith(_CLOSE + _TAIL):
            return None
        # the last entry ends like the others
        texts[piece[:64]] = piece[: len(piece) - len(_TAIL)] + ","
    return texts


def entry_from_text(path: Path, key: str, text: str) -> Entry:
    """The entry whose text `index_cassette` gave."""
    try:
        entry = from_json(text[_VALUE], cache_strings=CACHED_STRINGS)
        if not isinstance(entry, dict):
            raise TypeError("an entry is not an object")
    except (ValueError, TypeError) as error:
        raise CassetteUnreadable(
            f"cassette {display_path(str(path))} is not a pytest-kedi cassette: entry "
            f"{key[:12]}: {one_line(error)}"
        ) from error
    return entry


class Shelf:
    """What a book (`cassettes.CassetteBook`) holds of one cassette file: its entries on
    disk (indexed on first use), the answers recorded in this process and the keys
    requests used."""

    __slots__ = ("broken", "disk", "fresh_new", "fresh_used", "new", "sent", "used")

    def __init__(self) -> None:
        self.disk: dict[str, Entry | str] | None = None
        #: why the file cannot be read (read once: every lookup fails with it)
        self.broken: str | None = None
        self.new: dict[str, Entry] = {}
        self.used: set[str] = set()
        # what `CassetteBook.take` has not handed over yet
        self.sent = False
        self.fresh_new: dict[str, Entry] = {}
        self.fresh_used: set[str] = set()


def shelf_entries(path: Path, shelf: Shelf, stale: dict[Path, int]) -> dict[str, Entry | str]:
    """The entries of the cassette at ``path``, indexed into its ``shelf`` (an older
    format's recorded in ``stale``). A file that cannot be read is read once: each lookup
    fails with the same error."""
    if shelf.broken is not None:
        raise CassetteUnreadable(shelf.broken)
    try:
        version, entries = index_cassette(path)
    except CassetteUnreadable as error:
        shelf.broken = str(error)
        raise
    if version != CASSETTE_VERSION:
        stale[path] = version
    shelf.disk = entries
    return entries


_RESPONSE: TypeAdapter[ModelResponse] = TypeAdapter(ModelResponse)


def stored_response(path: Path, key: str, entry: Entry) -> ModelResponse:
    """The model response an entry of the cassette at ``path`` holds; an entry edited by
    hand without one, or with one pydantic-ai does not read, is an error naming both."""
    try:
        if not isinstance(entry, dict):
            raise TypeError("an entry is not an object")
        response = _RESPONSE.validate_python(entry["response"])
        problem = usage_problem(response, entry["response"].get("usage"))
        if problem is None:
            return response
    except (KeyError, TypeError) as error:
        problem = "no 'response'" if isinstance(error, KeyError) else one_line(error)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(["response", *(str(part) for part in first["loc"])])
        problem = f"{where}: {first['msg']}"
    raise CassetteUnreadable(
        f"cassette {display_path(str(path))} is not a pytest-kedi cassette: entry "
        f"{key[:12]}: {problem}"
    )


def usage_problem(response: ModelResponse, stored: object) -> str | None:
    """What makes the usage of a stored answer impossible (a count below 0, not finite, or
    ``true``), as `stored_response` names it; None when there is nothing."""
    where = "response.usage"
    if isinstance(stored, dict):
        for name, value in stored.items():
            if type(value) is bool:
                return f"{where}.{name}: {json.dumps(value)} is not a count"
    usage = response.usage
    counts: list[tuple[str, Any]] = [
        (f"{where}.{field.name}", getattr(usage, field.name))
        for field in dataclasses.fields(usage)
        if field.name != "details"
    ]
    counts += [(f"{where}.details.{name}", value) for name, value in usage.details.items()]
    for name, value in counts:
        if isinstance(value, Decimal):
            impossible = not value.is_finite() or value < 0  # (NaN is not ordered)
        else:
            impossible = isinstance(value, (int, float)) and not 0 <= value < math.inf
        if impossible:
            return f"{name}: {value} is not a count (0 or more)"
    return None


#: where and when an answer was made: not stored (a gateway URL may hold credentials, and
#: each would change every entry of a re-recording)
UNSTORED = frozenset({"timestamp", "provider_url", "provider_response_id"})
#: what a re-recorded answer may change and still be the same answer: the provider's
#: tool call ids (and the version of pytest-kedi that recorded it)
_INCIDENTAL = UNSTORED | {"tool_call_id", "pytest_kedi"}


def _answer_view(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _answer_view(v) for k, v in value.items() if k not in _INCIDENTAL}
    if isinstance(value, list):
        return [_answer_view(v) for v in value]
    return value


def changed_entries(current: Mapping[str, Entry], new: Mapping[str, Entry]) -> dict[str, Entry]:
    """The entries of ``new`` that change the cassette: an answer recorded again the same,
    but for incidental fields, keeps its stored entry (a re-recording diffs where the
    answers changed)."""
    return {
        key: entry
        for key, entry in new.items()
        if key not in current or _answer_view(current[key]) != _answer_view(entry)
    }
