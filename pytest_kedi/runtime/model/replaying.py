"""Structured calls the cassette answers in the calling thread: `ReplayRoute`.

A replayed call needs no request: its key is its `KeyTemplate` filled in, and its answer is
read from the entry stored under that key as the adapter's usual path reads it. A route does
that for one model, output schema and settings (`PydanticAIAdapter.replay_route`); the model
boundary keeps one per agent state and schema and asks it first (`ModelBoundary.producer`).
Whenever it gives ``None``, the call takes the usual path, which behaves exactly as without
the route, errors included.
"""

from __future__ import annotations

from collections.abc import Mapping
from threading import get_ident
from typing import Any, Protocol, cast

from pydantic_ai.settings import ModelSettings
from pydantic_core import from_json

from pytest_kedi.runtime.model.cassettefiles import (
    CACHED_STRINGS,
    ENTRY_VALUE,
    Entry,
    entry_from_text,
)
from pytest_kedi.runtime.model.cassettekeys import KeyTemplate, occurrence_key
from pytest_kedi.runtime.model.cassettes import CassetteModel
from pytest_kedi.runtime.model.direct import (
    OUTPUT_TOOL_NAME,
    CallStats,
    OutputPlan,
    stored_output,
)
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.schema import SchemaKey, output_fields
from pytest_kedi.runtime.model.stored import stored_tool_call

__all__ = ["ReplayRoute", "Usage"]

#: field types whose exact instances (all JSON gives them) the output model keeps as they
#: are: such values need no validation (`ReplayRoute.exact`)
_EXACT = (str, int, float, bool)
#: entries a route keeps what it read of (`ReplayRoute.read`)
_READ = 4096


class Usage(Protocol):
    """Where a replayed call's usage is added (a `RowScope`, a `CallStats`)."""

    requests: int
    input_tokens: int
    output_tokens: int


class ReplayRoute:
    """A structured call answered from the cassette in the calling thread, prepared once
    per model, output schema and settings (`PydanticAIAdapter.replay_route`): `answer`
    reads the stored answer as the adapter's usual path does (`stored_output`,
    `read_output`; a value of exactly its field's built-in type is taken as it is, which
    is what validating it gives) and gives ``None`` whenever that path must make the call
    instead (a miss, an answer needing a validation retry, an unreadable entry, the loop's
    own thread); that path then behaves exactly as without the route, errors included.
    An entry of the file answered with such values is read once (`read`)."""

    __slots__ = (
        "exact",
        "fields",
        "last",
        "loop",
        "model",
        "names",
        "plan",
        "read",
        "settings",
        "stored",
        "validate",
    )

    def __init__(
        self,
        model: CassetteModel,
        plan: OutputPlan,
        key: SchemaKey,
        settings: Mapping[str, Any],
        loop: ModelLoop,
    ) -> None:
        self.model = model
        self.plan = plan
        #: each output field's name and attribute on the output model (`read_output`)
        self.fields = output_fields(key)
        #: each output field's name and type when every type is one whose exact instances
        #: the output model takes as they are (`_EXACT`), else ``None``
        exact = tuple((name, tp) for name, tp, _ in key)
        self.exact = exact if all(any(tp is t for t in _EXACT) for _, tp in exact) else None
        self.names = tuple(name for name, _ in exact)
        #: by key, an entry of the file (its text, as `CassetteBook.reader` gives it)
        #: answered with such values: its text once it was read, and once it was read
        #: again, the text, the values (in schema order) and the token counts, which
        #: later uses take. An entry is used again by an identical request (a row with the
        #: same input, a model-graded metric asked about the same output)
        self.read: dict[str, str | tuple[str, tuple[Any, ...], int, int]] = {}
        #: the settings as the usual path passes them (read, never changed)
        self.settings = cast(ModelSettings | None, settings or None)
        self.loop = loop
        #: the last call's instructions and key template (`CassetteModel.replay_template`)
        self.last: tuple[str | None, KeyTemplate | None] = (None, None)
        #: the entry stored under a key in the model's cassette (`CassetteBook.reader`)
        self.stored = model.book.reader(model.path)
        #: the output model's validation of a Python value
        self.validate = plan.validator.validate_python

    def answer(
        self,
        prompt: str,
        instructions: str | None,
        repeat: int,
        seen: dict[str, int],
        usage: Usage,
    ) -> dict[str, Any] | None:
        """The output values (in schema order) of a call the cassette answers, or ``None``:
        its one request is counted in ``seen`` and, with the stored token counts, added to
        ``usage`` (the row's scope, or a call's `CallStats`)."""
        if self.loop.thread_id == get_ident():  # `ModelLoop.in_loop_thread`
            return None
        values: dict[str, Any] | None = None
        try:
            last_instructions, template = self.last  # (one read: calls on other threads)
            if template is None or instructions != last_instructions:
                template = self.model.replay_template(instructions, self.settings, self.plan.params)
                if template is None:
                    return None
                self.last = (instructions, template)
            first = template.key(prompt, repeat)
            occurrence = seen.get(first, 0)  # (`rowscope.request_counts`)
            key = occurrence_key(first, occurrence) if occurrence else first
            if (stored := self.stored(key)) is None:
                return None
            done = self.read.get(key) if type(stored) is str else None
            if type(done) is tuple and done[0] is stored:  # read before
                _, kept, tokens_in, tokens_out = done
                values = dict(zip(self.names, kept, strict=True))
            else:
                values, output, tokens_in, tokens_out = self._read(key, stored, done)
                if values is None and output is None:
                    return None
        except Exception:
            return None  # the usual path makes the call again and reports what failed
        seen[first] = occurrence + 1
        usage.requests += 1
        usage.input_tokens += tokens_in
        usage.output_tokens += tokens_out
        if values is not None:
            return values
        values = output.__dict__  # the output model's field values, by attribute name
        fields = self.fields
        if len(fields) == 1:
            ((name, attribute),) = fields
            return {name: values[attribute]}
        return {name: values[attribute] for name, attribute in fields}

    def _read(
        self, key: str, stored: Entry | str, done: str | tuple[Any, ...] | None
    ) -> tuple[dict[str, Any] | None, Any, int, int]:
        """The output values of the entry ``stored`` under ``key`` when they need no
        validation (else ``None``), else the validated output model (``None``: the usual
        path must make the call), and its token counts (``done``: what `read` holds under
        ``key``)."""
        if type(stored) is str:  # an entry of the file, parsed now (`CassetteBook.lookup`)
            try:
                entry = from_json(stored[ENTRY_VALUE], cache_strings=CACHED_STRINGS)
            except ValueError:
                entry = None
            if type(entry) is not dict:
                entry = entry_from_text(self.model.path, key, stored)  # raises
        else:
            entry = stored
        usual = stored_tool_call(entry, OUTPUT_TOOL_NAME)  # one call of the output tool
        if usual is None:
            stats = CallStats()
            output = stored_output(entry, self.plan, self.model, stats)
            return None, output, stats.input_tokens, stats.output_tokens
        args, tokens_in, tokens_out = usual
        exact = self.exact
        if exact is not None:
            # each value of its field's exact type: what validation would give
            values: dict[str, Any] = {}
            for name, tp in exact:
                if type(value := args.get(name)) is not tp:
                    break
                values[name] = value
            else:
                if type(stored) is str:
                    read = self.read
                    if len(read) >= _READ:
                        read.clear()
                    # the entry's text when first read (no object made), what was read of it
                    # when read again
                    read[key] = (
                        (stored, tuple(values.values()), tokens_in, tokens_out)
                        if done is stored
                        else stored
                    )
                return values, None, tokens_in, tokens_out
        return None, self.validate(args), tokens_in, tokens_out  # as `stored_output` does
