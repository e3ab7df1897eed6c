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
from json.encoder import encode_basestring
from threading import get_ident
from typing import Any, Protocol, cast

from pydantic_ai.settings import ModelSettings
from pydantic_core import from_json

from pytest_kedi.runtime.model.cassettefiles import (
    CACHED_STRINGS,
    ENTRY_VALUE,
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
from pytest_kedi.runtime.model.stored import usage_ok

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
            # `KeyTemplate.key`, written out: one frame less per replayed call
            after = template.afters.get(repeat) if type(repeat) is int else None
            if after is None:
                after = template.after(repeat)
            hashed = template.hashed.copy()
            hashed.update(encode_basestring(prompt).encode("utf-8", "surrogatepass"))
            hashed.update(after)
            first = hashed.hexdigest()
            occurrence = seen.get(first, 0)  # (`rowscope.request_counts`)
            key = occurrence_key(first, occurrence) if occurrence else first
            if (stored := self.stored(key)) is None:
                return None
            values, output, tokens_in, tokens_out = None, None, 0, 0
            if type(stored) is str:  # an entry of the file (`CassetteBook.lookup`)
                done = self.read.get(key)
                if type(done) is tuple and done[0] is stored:  # read before
                    _, kept, tokens_in, tokens_out = done
                    values = dict(zip(self.names, kept, strict=True))
                else:  # parsed now; one that does not parse is reported by the usual path
                    entry = from_json(stored[ENTRY_VALUE], cache_strings=CACHED_STRINGS)
                    if type(entry) is not dict:
                        return None
            else:
                done, entry = None, stored
            if values is None:
                # `stored_tool_call(entry, OUTPUT_TOOL_NAME)`, written out (three frames less
                # per replayed call): one call of the output tool, its arguments and tokens
                try:
                    data = entry["response"]
                    (part,) = data["parts"]
                    args = part["args"]
                    if (
                        type(args) is not dict
                        or part["part_kind"] != "tool-call"
                        or part["tool_name"] != OUTPUT_TOOL_NAME
                        or type(part["tool_call_id"]) is not str
                    ):
                        args = None
                    else:
                        counts = data.get("usage", {})  # counts at their default are not stored
                        tokens_in = counts.get("input_tokens", 0)
                        tokens_out = counts.get("output_tokens", 0)
                        if not (
                            type(tokens_in) is int
                            and tokens_in >= 0
                            and type(tokens_out) is int
                            and tokens_out >= 0
                            and (len(counts) < 3 or usage_ok(counts))
                        ):
                            args = None
                except (KeyError, TypeError, AttributeError, ValueError):
                    args = None
                if args is None:  # any other answer: read as the usual path reads it
                    stats = CallStats()
                    output = stored_output(entry, self.plan, self.model, stats)
                    if output is None:
                        return None
                    tokens_in, tokens_out = stats.input_tokens, stats.output_tokens
                elif (exact := self.exact) is not None:
                    # each value of its field's exact type: what validation would give
                    values = {}
                    for name, tp in exact:
                        if type(value := args.get(name)) is not tp:
                            values = None
                            break
                        values[name] = value
                    else:
                        if type(stored) is str:
                            read = self.read
                            if len(read) >= _READ:
                                read.clear()
                            # the entry's text when first read (no object made), what was
                            # read of it when read again
                            read[key] = (
                                (stored, tuple(values.values()), tokens_in, tokens_out)
                                if done is stored
                                else stored
                            )
                if values is None and output is None:
                    output = self.validate(args)  # as `stored_output` does
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
