"""Model-facing statements: ``>>`` templates, ``<<`` raw captures, claims and
``> optimize:`` bodies, all through the model boundary (docs/language.md#templates,
#raw-capture, #model-directives, #models, #branches)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from pytest_kedi.errors import (
    CassetteMiss,
    KediError,
    KediModelError,
    KediTypeExecutionError,
    KediUnsupportedError,
    ModelError,
    UnsupportedFeature,
)
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.cancel import STATE as CANCEL
from pytest_kedi.runtime.cancel import check_current, checkpoint
from pytest_kedi.runtime.context import Frame
from pytest_kedi.runtime.evaluate import render_text, resolve_type, type_violation, where
from pytest_kedi.runtime.interpreter import check_assignable, exec_stmt
from pytest_kedi.runtime.kediwarnings import python_module, warn_at
from pytest_kedi.runtime.pyerrors import module_traces
from pytest_kedi.runtime.types import (
    describe_type,
    field_description,
    validator_for,
    without_descriptions,
)

__all__ = ["TemplateCall", "ask_claim", "run_template"]

#: built-in types every exact instance of which passes their strict check
_EXACT = (str, int, float, bool, bytes)


def _call(ctx: Frame, node: nodes.Node, method: str, *args: Any) -> Any:
    checkpoint()  # a timed-out row stops before its next model call
    boundary = ctx.unit.runtime.boundary
    try:
        return getattr(boundary, method)(ctx.scope.state, *args)
    except (UnsupportedFeature, ModelError) as exc:
        raise _failure(ctx, node, exc) from exc


def _failure(ctx: Frame, node: nodes.Node, exc: UnsupportedFeature | ModelError) -> KediError:
    """What a failed call of the model boundary raises in the program."""
    if isinstance(exc, UnsupportedFeature):
        line = exc.line if exc.line is not None else node.span.start_line
        return KediUnsupportedError(exc.construct, line)
    message = exc.message
    if isinstance(exc, CassetteMiss):
        message += f" (procedure {ctx.procedure_name or '<top level>'})"
    # where the user's own model function (a `FunctionModel` in conftest.py) raised
    traces = module_traces(exc.__cause__)
    return KediModelError(f"{where(ctx, node)}: {message}", python_traces=traces)


def _schema_entry(tp: Any) -> tuple[Any, str | None]:
    """The field's type, its constraints kept (the model is asked for them, and a value
    breaking one is fed back), and its description."""
    return without_descriptions(tp), field_description(tp)


@dataclass(slots=True)
class TemplateShape:
    """A template's output fields, and its output schema for the field types it last
    resolved to (a schema is built once per template while its types stay the same)."""

    template: nodes.Template
    outputs: tuple[nodes.OutputField, ...]
    last: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    def schema(self, types_: tuple[Any, ...]) -> dict[str, Any]:
        last = self.last
        if last is not None and all(a is b for a, b in zip(last[0], types_, strict=True)):
            return last[1]
        schema = {f.name: _schema_entry(tp) for f, tp in zip(self.outputs, types_, strict=True)}
        self.last = (types_, schema)
        return schema


def _shape(template: nodes.Template, ctx: Frame) -> TemplateShape:
    """The template's shape, kept by the model boundary (one without ``shapes``, such as a
    test's stand-in, gets a fresh one per call)."""
    shapes: dict[int, TemplateShape] | None = getattr(ctx.unit.runtime.boundary, "shapes", None)
    if shapes is None:
        return TemplateShape(template, template.outputs)
    shape = shapes.get(id(template))
    if shape is None or shape.template is not template:
        warn_shadowing(template.outputs, ctx)
        shape = shapes[id(template)] = TemplateShape(template, template.outputs)
    return shape


def warn_shadowing(outputs: tuple[nodes.OutputField, ...], ctx: Frame) -> None:
    """Warn, at each field's `.kedi` line, about output fields named after an attribute of
    pydantic's ``BaseModel`` (``[json]``): they work, and only warn (docs/language.md
    #model-calls). Once per location, as Python's warnings are for a file's Python."""
    if not outputs:
        return
    from pytest_kedi.runtime.model.schema import shadows_base_model  # imports pydantic

    for field in outputs:
        if shadows_base_model(field.name):
            warn_at(
                f'output field "{field.name}" shadows an attribute of pydantic.BaseModel',
                field.span.path,
                field.span.start_line,
                *python_module(ctx.unit.prelude_scope.vars),
            )


def _prompt(template: nodes.Template, ctx: Frame, prefix: str | None) -> str:
    text = "\n".join(render_text(row, ctx) for row in template.rows)
    if prefix:
        return prefix.rstrip() + "\n\n" + text
    return text


def run_template(template: nodes.Template, ctx: Frame, prefix: str | None = None) -> None:
    """One model call; outputs are strictly validated and bound together."""
    shape = _shape(template, ctx)
    outputs = shape.outputs
    # Field types resolve (and fail) before the model is contacted (docs/language.md#model-calls).
    types_ = tuple(resolve_type(f.type, ctx) for f in outputs)
    prompt = _prompt(template, ctx, prefix)
    if not outputs:
        _call(ctx, template, "invoke", prompt)
        return
    for field in outputs:
        check_assignable(field.name, ctx, field)
    checks = tuple(validator_for(tp) for tp in types_)
    values = _answer(ctx, template, outputs, types_, checks, shape.schema(types_), prompt)
    for field, tp, value in zip(outputs, types_, values, strict=False):
        ctx.scope.bind(field.name, value, tp)


def _answer(
    ctx: Frame,
    template: nodes.Template,
    outputs: tuple[nodes.OutputField, ...],
    types_: tuple[Any, ...],
    checks: tuple[Callable[[Any], bool], ...],
    schema: dict[str, Any],
    prompt: str,
) -> list[Any]:
    """The model's output values for ``prompt``, each checked against its field's type
    (``checks``: `validator_for` of each type)."""
    raw = _call(ctx, template, "produce", prompt, schema)
    values: list[Any] = []
    for field, tp, check in zip(outputs, types_, checks, strict=False):
        value = raw.get(field.name)
        if not check(value):
            raise type_violation(ctx, field, f"model output [{field.name}]", tp, value)
        values.append(value)
    return values


class TemplateCall:
    """A ``>>`` statement of a generated procedure body (`pytest_kedi.runtime.fastbuild`),
    whose output types are built-in ones fixed when the body is built: called with the
    rendered prompt, it asks the model as `run_template` does and returns the checked output
    values in field order (none for a template without outputs). ``ctx`` stands for the
    procedure's frame: its state, file and name; nothing is bound in it."""

    __slots__ = (
        "boundary",
        "checks",
        "ctx",
        "fields",
        "outputs",
        "produce",
        "schema",
        "template",
        "types",
    )

    def __init__(self, template: nodes.Template, types_: tuple[Any, ...], ctx: Frame) -> None:
        self.template = template
        self.outputs = template.outputs
        self.types = types_
        self.checks = tuple(validator_for(tp) for tp in types_)
        self.schema = {
            f.name: _schema_entry(tp) for f, tp in zip(self.outputs, types_, strict=True)
        }
        #: each output field's name, node, type, checker and the type whose exact instances
        #: the checker accepts without being asked (``None``: none)
        self.fields = tuple(
            (f.name, f, tp, check, tp if any(tp is t for t in _EXACT) else None)
            for f, tp, check in zip(self.outputs, types_, self.checks, strict=True)
        )
        self.ctx = ctx
        #: the program's model boundary, from the first call on (a unit's runtime makes it
        #: when first asked and keeps it), and its `produce` in this frame's state with
        #: this schema, as a function of the prompt (`ModelBoundary.producer`)
        self.boundary: Any = None
        self.produce: Callable[[str], dict[str, Any]] | None = None

    def __call__(self, prompt: str) -> list[Any]:
        ctx = self.ctx
        if not self.outputs:
            _call(ctx, self.template, "invoke", prompt)
            return []
        # `_answer`, written out: one frame per model call instead of three
        if CANCEL.pending:  # `checkpoint`: a timed-out row stops before its next model call
            check_current()
        produce = self.produce
        if produce is None:
            boundary = self.boundary = ctx.unit.runtime.boundary
            _shape(self.template, ctx)  # its fields' warnings, unless the interpreter gave them
            produce = self.produce = _producer(boundary, ctx.scope.state, self.schema)
        try:
            raw = produce(prompt)
        except (UnsupportedFeature, ModelError) as exc:
            raise _failure(ctx, self.template, exc) from exc
        values: list[Any] = []
        for name, field, tp, check, exact in self.fields:
            value = raw.get(name)
            if type(value) is not exact and not check(value):
                raise type_violation(ctx, field, f"model output [{name}]", tp, value)
            values.append(value)
        return values


def _producer(boundary: Any, state: Any, schema: dict[str, Any]) -> Callable[[str], dict[str, Any]]:
    """``boundary.produce`` in ``state`` with ``schema`` as a function of the prompt (a
    test's stand-in boundary may have no `ModelBoundary.producer`)."""
    make = getattr(boundary, "producer", None)
    if make is not None:
        return cast("Callable[[str], dict[str, Any]]", make(state, schema))
    return lambda prompt: boundary.produce(state, prompt, schema)


def run_raw_capture(stmt: nodes.RawCapture, ctx: Frame) -> None:
    check_assignable(stmt.target, ctx, stmt)
    tp = resolve_type(stmt.type, ctx)
    if tp is not str:
        described = describe_type(tp)
        if described == "str" and stmt.type is not None:  # `Annotated[str, "d"]` is not str
            described = stmt.type.source
        raise KediTypeExecutionError(
            f"{where(ctx, stmt)}: raw capture [{stmt.target}] must be str, not {described}"
        )
    prompt = render_text(stmt.prompt, ctx)
    text = _call(ctx, stmt, "invoke", prompt)
    if type(text) is not str:
        raise type_violation(ctx, stmt, f"raw capture [{stmt.target}]", str, text)
    ctx.scope.bind(stmt.target, text, str)
    return None


def ask_claim(claim: nodes.Text, ctx: Frame, node: nodes.Node) -> bool:
    """One structured ``holds: bool`` call quoting the rendered claim
    (docs/language.md#branches)."""
    from pytest_kedi.runtime.model import CLAIM_FIELD, CLAIM_SCHEMA, claim_prompt

    text = render_text(claim, ctx)
    # one schema object for every claim: the boundary and adapter prepare it once
    raw = _call(ctx, node, "produce", claim_prompt(text), CLAIM_SCHEMA)
    holds = raw.get(CLAIM_FIELD)
    if type(holds) is not bool:
        raise type_violation(ctx, node, "claim answer [holds]", bool, holds)
    return holds


def run_optimize(stmt: nodes.Directive, ctx: Frame) -> None:
    """``> optimize: span:``: the body's one template, prefixed by the stored prompt."""
    proc = ctx.procedure_name
    prefix = None
    if proc is not None and stmt.arg is not None:
        prefix = ctx.unit.optimized.get(proc, {}).get(stmt.arg)
    for inner in stmt.body:
        if isinstance(inner, nodes.Template):
            run_template(inner, ctx, prefix)
        else:
            exec_stmt(inner, ctx)
