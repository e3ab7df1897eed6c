"""Record/replay cassettes: model answers stored as reviewable JSON beside each `.kedi` file.

`CassetteModel` wraps the pydantic-ai `Model` every request of a program goes through. Each
request has a key (`pytest_kedi.runtime.model.cassettekeys`): a hash of the resolved model,
the settings, the messages and instructions, the output schema and the row's repeat index,
and which time the row (case, run) sends it (`rowscope.request_counts`; the first: none).

Modes (``--kedi-record-mode``): ``record`` calls the model and stores every answer;
``replay`` answers from the cassette and calls (and stores) only on a miss; ``strict``
answers only from the cassette and raises `CassetteMiss` on a miss, without a live call.

A replayed call need not wait for the model loop: `CassetteModel.replay` finds the answer
to the first request of a call in the calling thread, its key filled into a `KeyTemplate`
made once per instructions, settings and output schema. On a miss, in record mode and for
an answer it does not read, the call takes the usual path through `CassetteModel.request`.

`CassetteBook` is the process-wide store: it reads a cassette file on first use (indexed by
`pytest_kedi.runtime.model.cassettefiles`, each entry parsed when used), keeps the
answers recorded in this process and the keys every request used, and writes each changed
file once, at the end of the run (an xdist worker hands its part to the controller, which
writes). A file is written to a temporary file in the same directory and moved into place,
so a reader never sees a half-written cassette. Entries hold the model's raw answer (in
pydantic-ai's `ModelResponse` JSON shape), its token usage and the pytest-kedi version; the
``clean`` function given to the book (the plugin passes its secret redaction) runs over every
entry before it is kept, and request headers or credentials are never part of an entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from pytest_kedi import __version__
from pytest_kedi.atomicwrite import reason
from pytest_kedi.constants import RECORD_MODES
from pytest_kedi.errors import CassetteMiss, KediError
from pytest_kedi.runtime import rowscope
from pytest_kedi.runtime.model.cassettefiles import (
    CASSETTE_VERSION,
    UNSTORED,
    Entry,
    Shelf,
    changed_entries,
    entry_from_text,
    read_cassette,
    shelf_entries,
    stored_response,
    write_cassette,
)
from pytest_kedi.runtime.model.cassettekeys import (
    KeyTemplate,
    canonical,
    key_template,
    key_view,
    occurrence_key,
    occurrence_note,
    request_key,
)
from pytest_kedi.runtime.model.names import describe_model
from pytest_kedi.runtime.model.stored import (
    StoredAnswer,
    StoredTokens,
    stored_answer,
    stored_tool_call,
)
from pytest_kedi.text import clip, display_path

__all__ = [
    "CASSETTE_SUFFIX",
    "CASSETTE_VERSION",
    "RECORD_MODES",
    "CassetteBook",
    "CassetteModel",
    "StoredAnswer",
    "StoredTokens",
    "read_cassette",
    "request_key",
    "stored_answer",
    "stored_tool_call",
]

CASSETTE_SUFFIX = ".cassette.json"
#: characters of the prompt kept in an entry (for review) and in a miss message
EXCERPT = 80
#: key templates one cassette model keeps (one per instructions, settings and schema)
_TEMPLATES = 256


def prompt_excerpt(messages: list[ModelMessage]) -> str:
    """The last user prompt of a request, on one line and clipped."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if part.part_kind == "user-prompt" and isinstance(part.content, str):
                    return clip(part.content, EXCERPT)
    return ""


class CassetteBook:
    """The cassettes of one process, by file (see the module docstring). Thread-safe."""

    def __init__(self, mode: str, clean: Callable[[Entry], Entry] = lambda entry: entry) -> None:
        if mode not in RECORD_MODES or mode == "off":
            raise ValueError(f"record mode must be one of record, replay, strict, not {mode!r}")
        self.mode = mode
        self.clean = clean
        self._lock = threading.Lock()
        #: by cassette file: every file a program attached, recorded into or looked up
        self._shelves: dict[Path, Shelf] = {}
        #: `reader` of each cassette file
        self._readers: dict[Path, Callable[[str], Entry | str | None]] = {}
        #: cassettes in an older format, by path: their format (their entries are not read)
        self.stale: dict[Path, int] = {}

    def _shelf(self, path: Path) -> Shelf:
        shelf = self._shelves.get(path)
        if shelf is None:
            shelf = self._shelves[path] = Shelf()
        return shelf

    # ------------------------------------------------------------------ in the run
    def attach(self, path: Path) -> None:
        """A program whose cassette is ``path`` was loaded (it takes part in pruning)."""
        with self._lock:
            self._shelf(path)

    def lookup(self, path: Path, key: str) -> Entry | None:
        """The entry stored under ``key`` in the cassette at ``path``, or ``None``."""
        stored = self.stored(path, key)
        if type(stored) is str:
            # parsed when used; not kept, so the collector never walks the cassette
            return entry_from_text(path, key, stored)
        return cast("Entry | None", stored)

    def stored(self, path: Path, key: str) -> Entry | str | None:
        """`lookup` without parsing: an entry read from the file is its text
        (`entry_from_text` parses it)."""
        read = self._readers.get(path)
        return (read if read is not None else self.reader(path))(key)

    def reader(self, path: Path) -> Callable[[str], Entry | str | None]:
        """`stored` for the cassette at ``path``, bound to its shelf (a book keeps one shelf
        per path for its lifetime): what a replayed call looks its answer up with."""
        lock = self._lock
        with lock:
            shelf = self._shelf(path)
            found = self._readers.get(path)
            if found is not None:
                return found
        stale = self.stale  # (not the book: `_readers` holds this function)

        def stored(key: str) -> Entry | str | None:
            with lock:
                found: Entry | str | None = shelf.new.get(key) if shelf.new else None
                if found is None:
                    disk = shelf.disk
                    if disk is None:
                        disk = shelf_entries(path, shelf, stale)
                    found = disk.get(key)
                if found is not None and key not in shelf.used:
                    shelf.used.add(key)
                    shelf.fresh_used.add(key)
            return found

        self._readers[path] = stored
        return stored

    def store(self, path: Path, key: str, entry: Entry) -> None:
        cleaned = self.clean(entry)
        with self._lock:
            shelf = self._shelf(path)
            shelf.new[key] = cleaned
            shelf.fresh_new[key] = cleaned
            if key not in shelf.used:
                shelf.used.add(key)
                shelf.fresh_used.add(key)

    def keep(self, path: Path, key: str) -> None:
        """A request of this run whose live call failed used ``key``: an answer recorded
        for it earlier is kept by pruning, as if the call had been answered."""
        with self._lock:
            shelf = self._shelf(path)
            if key not in shelf.used:
                shelf.used.add(key)
                shelf.fresh_used.add(key)

    def miss_note(self, path: Path) -> str:
        """What a miss message adds about ``path`` (why none of its entries can match)."""
        version = self.stale.get(path)
        if version is None:
            return ""
        return (
            f"; the cassette is in format {version}, written by an older pytest-kedi whose "
            f"keys this one (format {CASSETTE_VERSION}) does not use: record it again"
        )

    # ------------------------------------------------------------------ across processes
    def export(self) -> dict[str, Any]:
        """This process's recordings and used keys as JSON builtins (xdist transport)."""
        with self._lock:
            return {
                str(path): {"new": shelf.new, "used": sorted(shelf.used)}
                for path, shelf in sorted(self._shelves.items())
            }

    def take(self) -> dict[str, Any]:
        """What this process recorded, used and attached since the last `take`, as `export`
        gives it: an xdist worker hands it over item by item, so that a worker that dies
        loses only what the item it was running did."""
        taken: dict[str, Any] = {}
        with self._lock:
            for path, shelf in self._shelves.items():
                if shelf.sent and not shelf.fresh_new and not shelf.fresh_used:
                    continue
                taken[str(path)] = {"new": shelf.fresh_new, "used": sorted(shelf.fresh_used)}
                shelf.sent = True
                shelf.fresh_new = {}
                shelf.fresh_used = set()
        return taken

    def absorb(self, exported: Mapping[str, Any]) -> None:
        """Add another process's `export`."""
        with self._lock:
            for name, part in exported.items():
                shelf = self._shelf(Path(name))
                shelf.new.update(part.get("new", {}))
                shelf.used.update(part.get("used", ()))

    def save(self, *, prune: bool, failed: list[str] | None = None) -> list[Path]:
        """Write every cassette with new entries (and, with ``prune``, drop the entries no
        request of this run used from every cassette of a loaded program): the files written.
        A file that cannot be read or written raises, or is added to ``failed``."""
        written: list[Path] = []
        with self._lock:
            for path, shelf in sorted(self._shelves.items()):
                if not (shelf.new or prune):
                    continue
                try:
                    current = read_cassette(path)
                    entries = {**current, **changed_entries(current, shelf.new)}
                    if prune:
                        entries = {k: v for k, v in entries.items() if k in shelf.used}
                    if entries == current and (path.exists() or not entries):
                        continue
                    write_cassette(path, entries)
                    written.append(path)
                except (OSError, KediError) as error:
                    if failed is None:
                        raise
                    # (an OSError names the temporary file written: name the cassette)
                    failed.append(
                        f"{display_path(str(path))}: {reason(error)}"
                        if isinstance(error, OSError)
                        else str(error)
                    )
        return written


class CassetteModel(WrapperModel):
    """Answers requests from (and records them into) the cassette at ``path``."""

    def __init__(self, wrapped: Model, book: CassetteBook, path: Path) -> None:
        super().__init__(wrapped)
        self.book = book
        self.path = path
        self._names: tuple[str, str] | None = None
        self._templates: dict[
            tuple[int, str | None, str | int],
            tuple[ModelRequestParameters, ModelSettings | None, KeyTemplate | None],
        ] = {}
        book.attach(path)

    def names(self) -> tuple[str, str]:
        """The model part of every key (class and name of the innermost wrapped model) and
        the model's name."""
        if self._names is None:
            inner = self.wrapped
            while isinstance(inner, WrapperModel):
                inner = inner.wrapped
            # the key keeps pydantic-ai's own label (`system:name`): recorded keys stay valid
            label = describe_model(inner, as_named=False)
            self._names = (f"{type(inner).__name__} {label}", describe_model(inner))
        return self._names

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        scope = rowscope.current()
        repeat = scope.repeat if scope is not None else 0
        model, name = self.names()
        key = first = request_key(model, messages, model_settings, model_request_parameters, repeat)
        # the n-th request alike in all of the key's parts in its row (case, run) has its
        # own entry; each request counts once, answered or not
        counts = rowscope.request_counts()
        occurrence = 0
        if counts is not None:
            seen = counts[0]
            occurrence = seen.get(first, 0)
            seen[first] = occurrence + 1
            if occurrence:
                key = occurrence_key(first, occurrence)
        if self.book.mode != "record":
            entry = self.book.lookup(self.path, key)
            if entry is not None:
                return stored_response(self.path, key, entry)
            if self.book.mode == "strict":
                raise CassetteMiss(
                    f"cassette miss (--kedi-record-mode strict): no recorded answer in "
                    f"{display_path(str(self.path))} for {name} prompt "
                    f"{prompt_excerpt(messages)!r}"
                    f"{occurrence_note(counts, occurrence, self.book.stored(self.path, first))}"
                    f"{self.book.miss_note(self.path)}"
                )
        try:
            response = await self.wrapped.request(
                messages, model_settings, model_request_parameters
            )
        except BaseException:  # a provider failure, or a refusal: the recorded answer stays
            self.book.keep(self.path, key)
            raise
        self.book.store(self.path, key, _entry(name, messages, repeat, occurrence, response))
        return response

    # ------------------------------------------------------------------ in the calling thread
    def replay(
        self,
        prompt: str,
        instructions: str | None,
        settings: ModelSettings | None,
        parameters: ModelRequestParameters,
        repeat: int | None = None,
        read: Callable[[Entry], Any] = lambda entry: entry,
    ) -> Any:
        """``read`` of the entry holding the answer to the first request of a call
        (`direct.first_request`), found without a request (``read``, by default the entry
        itself, reads it with `stored_tool_call` or `stored_answer`): ``None`` in record
        mode, on a miss and when ``read`` gives ``None`` (the call then goes through
        `request`, which handles it as always). Only a request answered here is counted in
        its row's (case's, run's) `rowscope.request_counts`, as `request` counts it.
        ``repeat``: the row's repeat index (``None``: read from the current row scope)."""
        if self.book.mode == "record":
            return None
        template = self.replay_template(instructions, settings, parameters)
        if template is None:
            return None
        scope = rowscope.current()
        if repeat is None:
            repeat = scope.repeat if scope is not None else 0
        key = template.key(prompt, repeat)
        seen = scope.seen if scope is not None else (rowscope.outside() or ({}, ""))[0]
        occurrence = seen.get(key, 0)
        entry = self.book.lookup(self.path, occurrence_key(key, occurrence) if occurrence else key)
        if entry is None:
            return None
        output = read(entry)
        if output is not None:
            seen[key] = occurrence + 1
        return output

    def replay_template(
        self,
        instructions: str | None,
        settings: ModelSettings | None,
        parameters: ModelRequestParameters,
    ) -> KeyTemplate | None:
        """The key template of a call's first request with these instructions, settings
        and request parameters (`cassettekeys.key_template`), made once for each."""
        # by the settings object first (a state's settings are one object, never changed),
        # then by their content
        fast = (id(parameters), instructions, id(settings))
        hit = self._templates.get(fast)
        if hit is not None and hit[0] is parameters and hit[1] is settings:
            return hit[2]
        cache_key = (id(parameters), instructions, canonical(settings) if settings else "")
        hit = self._templates.get(cache_key)
        if hit is None or hit[0] is not parameters:
            template = key_template(self, self.names()[0], instructions, settings, parameters)
            hit = (parameters, None, template)
        if len(self._templates) >= _TEMPLATES:
            self._templates.clear()
        self._templates[cache_key] = (parameters, None, hit[2])
        # the entry holds the settings, so their id cannot be reused while it exists
        self._templates[fast] = (parameters, settings, hit[2])
        return hit[2]


def _stored_response(response: ModelResponse) -> dict[str, Any]:
    view: dict[str, Any] = key_view(response, UNSTORED)
    details = view.get("provider_details")
    if isinstance(details, dict):  # the provider's own fields (OpenAI's `created` time)
        details = {k: v for k, v in details.items() if k not in UNSTORED}
        if details:
            view["provider_details"] = details
        else:
            del view["provider_details"]
    return view


def _entry(
    name: str, messages: list[ModelMessage], repeat: int, occurrence: int, response: ModelResponse
) -> Entry:
    usage = response.usage
    entry: Entry = {
        "model": name,
        "prompt": prompt_excerpt(messages),
        "repeat": repeat,
        "response": _stored_response(response),
        "usage": {
            "requests": 1,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        },
        "pytest_kedi": __version__,
    }
    if occurrence:  # (for review: a first occurrence's entry is as it always was)
        entry["occurrence"] = occurrence
    return entry
