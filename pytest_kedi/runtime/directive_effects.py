"""Directives: agent state (``model``, ``instructions``/``system``, ``settings``,
``adapter``, ``requires``), group-(b) unsupported markers, inert declarations and
statements pytest-kedi refuses to run (docs/language.md#model-directives,
#unsupported-directives, #tasks, #newer-directives)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_kedi.lang import nodes
from pytest_kedi.lang.syntax import DIRECTIVES, Place, Runtime, names
from pytest_kedi.runtime.context import Frame
from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediModelError,
    KediNameError,
    KediTypeExecutionError,
    KediUnsupportedError,
    KediValueExecutionError,
)
from pytest_kedi.runtime.evaluate import eval_code, render_text, where
from pytest_kedi.runtime.interpreter import stmt_frame
from pytest_kedi.runtime.model.calls import run_optimize
from pytest_kedi.runtime.model.settings import parse_setting_row, parse_setting_value
from pytest_kedi.runtime.model.state import AgentState
from pytest_kedi.runtime.modules import run_export, run_import
from pytest_kedi.runtime.pyerrors import check_error
from pytest_kedi.runtime.types import describe_value
from pytest_kedi.runtime.valueerrors import header_value, kv_value, value_error

__all__ = ["MODEL_DIRECTIVES", "STATEMENT_DIRECTIVES", "run_directive"]

#: Directives that are statements of pytest-kedi-unsupported features (docs/language.md#tasks).
STATEMENT_DIRECTIVES = names(
    lambda d: d.runtime is Runtime.UNSUPPORTED and d.place in (Place.EXECUTABLE, Place.TASK_GROUP)
)
_OFF_VALUES = frozenset({"disabled"})
#: `disabled` turns these off, which pytest-kedi's runs already are (docs/language.md §4.5
#: and §8.11); `> skills: disabled` and `> codemode: disabled` still raise
_NOOP_WHEN_OFF = frozenset({"history", "artifacts", "hooks"})
_NOOP_WHEN_TOGGLE = frozenset({"hooks"})
MODEL_DIRECTIVES = names(lambda d: d.runtime is Runtime.STATE)
#: Directives naming one slot of the agent state: a later one replaces an earlier one,
#: marker included (docs/language.md §6.1); `> adapter:` and `> agent:` both choose the
#: backend. Unlisted markers (`> mcp:`, `> use:`, `> budget:`) add up.
_SLOTS = {
    "adapter": "backend",
    "agent": "backend",
    **{name: name for name in ("effort", "approval", "history", "artifacts", "skills")},
    **{name: name for name in ("codemode", "hooks")},
}


def _inline(stmt: nodes.Directive, ctx: Frame) -> Any:
    if stmt.code is not None:
        return eval_code(stmt.code, ctx)
    if stmt.text is not None:
        return render_text(stmt.text, ctx)
    return stmt.value


def _set_model(stmt: nodes.Directive, ctx: Frame) -> None:
    from pytest_kedi.runtime.model import ModelError, normalize_model_name

    value = _inline(stmt, ctx)
    # `str.strip`, not the value's own: a `str` subclass's override is no model name's
    if not isinstance(value, str) or not str.strip(value):
        raise value_error(
            KediTypeExecutionError,
            ctx,
            header_value(stmt, ctx),
            f"> model: expects a model name (str), got {describe_value(value)}",
        )
    try:
        name = normalize_model_name(str.strip(value))
    except ModelError as exc:
        raise value_error(KediModelError, ctx, header_value(stmt, ctx), exc.message) from exc
    ctx.scope.state = ctx.scope.state.replace(model=name)


def _set_instructions(stmt: nodes.Directive, ctx: Frame) -> None:
    # rendered at each model call, in the directive's environment
    # (docs/language.md#model-directives)
    captured = ctx
    if stmt.rows:
        rows = stmt.rows

        def thunk() -> str:
            return "\n".join(render_text(row, captured) for row in rows)
    elif stmt.text is not None:
        text = stmt.text

        def thunk() -> str:
            return render_text(text, captured)
    elif stmt.code is not None:
        code = stmt.code

        def thunk() -> str:
            return str(eval_code(code, captured))
    else:
        value = stmt.value or ""

        def thunk() -> str:
            return value

    render = thunk

    def located() -> str:
        # An error naming the directive's own text (an unknown `<name>`) has the
        # directive's line as its innermost frame, inside the model call's frame.
        try:
            return render()
        except KediExecutionError as err:
            if not err.frames and not err.python_traces:
                err.with_inner_frame(stmt_frame(stmt, captured, err))
            raise

    ctx.scope.state = ctx.scope.state.replace(instructions=located)


def _set_settings(stmt: nodes.Directive, ctx: Frame) -> None:
    from pytest_kedi.runtime.model import (
        DROPPED_SETTING_KEYS,
        ModelError,
        check_setting,
        model_setting_keys,
        parse_setting_value,
    )

    new: dict[str, Any] = {}
    if stmt.code is not None:  # `> settings: `{...}``: a mapping of settings
        given = eval_code(stmt.code, ctx)
        at = stmt.code.span.start_offset
        try:  # a user's mapping runs its own code: its error is located there
            pairs = list(given.items()) if isinstance(given, Mapping) else None
        except Exception as exc:
            raise check_error(exc) from exc
        if pairs is None or not all(isinstance(k, str) for k, _ in pairs):
            raise value_error(
                KediTypeExecutionError,
                ctx,
                at,
                "> settings: expects a mapping of setting names to values, got "
                + describe_value(given),
            )
        for key, value in pairs:
            if key not in DROPPED_SETTING_KEYS:
                try:
                    new[key] = check_setting(key, value)
                except ModelError as exc:
                    raise value_error(KediModelError, ctx, at, exc.message) from exc
    for kv in stmt.settings:
        if kv.key in DROPPED_SETTING_KEYS:
            # documented only for other backends: dropped unevaluated
            # (docs/language.md#model-directives)
            continue
        if kv.entries:  # not read as a mapping: never passed on as something else
            raise value_error(
                KediValueExecutionError,
                ctx,
                kv.entries[0].span.start_offset,
                f"setting {kv.key!r} takes one value, not nested 'key: value' lines; "
                f"write a backtick mapping ({kv.key}: `{{...}}`)",
            )
        if kv.code is not None:
            value = eval_code(kv.code, ctx)
        elif kv.items:  # a backtick item is Python (docs/language.md#model-directives)
            codes = kv.item_codes or (None,) * len(kv.items)
            value = [
                parse_setting_row(item) if code is None else eval_code(code, ctx)
                for item, code in zip(kv.items, codes, strict=True)
            ]
        else:
            value = parse_setting_value(kv.value or "")
        try:
            new[kv.key] = check_setting(kv.key, value)
        except ModelError as exc:
            # an unknown key is shown at the key, a bad value at the value
            known = kv.key in model_setting_keys()
            at = kv_value(kv, ctx) if known else kv.span.start_offset
            raise value_error(KediModelError, ctx, at, exc.message) from exc
    # inherited settings were checked where they were set
    ctx.scope.state = ctx.scope.state.replace(settings={**ctx.scope.state.settings, **new})


def _set_adapter(stmt: nodes.Directive, ctx: Frame) -> None:
    value = _inline(stmt, ctx)
    if not isinstance(value, str):  # (its own `__str__` was run, and could raise unlocated)
        raise value_error(
            KediTypeExecutionError,
            ctx,
            header_value(stmt, ctx),
            f"> adapter: expects an adapter name (str), got {describe_value(value)}",
        )
    name = str.strip(value)
    if name == "pydantic":
        state = ctx.scope.state
        ctx.scope.state = state.replace(adapter="pydantic", unsupported=_without(state, "adapter"))
        return
    if name in ("dspy", "langchain"):
        _set_marker(ctx, "adapter", (f"> adapter: {name}", stmt.span.start_line))
        return
    raise value_error(
        KediValueExecutionError,
        ctx,
        header_value(stmt, ctx),
        f"unknown adapter {name!r} (expected pydantic, dspy or langchain)",
    )


def _set_requires(stmt: nodes.Directive, ctx: Frame) -> None:
    names = set(stmt.names)
    value = _inline(stmt, ctx) if stmt.value or stmt.code else None
    if isinstance(value, str) and value.strip():
        names.add(value.strip())
    state = ctx.scope.state
    line = stmt.span.start_line
    new = sorted(names - state.requires)
    ctx.scope.state = state.replace(
        requires=state.requires | frozenset(names),
        requires_at=(*state.requires_at, *((name, line) for name in new)),
    )


def _slot(construct: str) -> str:
    """The state slot a marker's construct (``> name:…``) occupies."""
    name = construct[2:].partition(":")[0]
    return _SLOTS.get(name, name)


def _without(state: AgentState, name: str) -> tuple[tuple[str, int], ...]:
    """``state``'s markers less the one a later ``> name:`` replaces."""
    slot = _SLOTS.get(name)
    if slot is None:  # markers of directives that add up stay
        return state.unsupported
    return tuple(m for m in state.unsupported if _slot(m[0]) != slot)


def _set_marker(ctx: Frame, name: str, marker: tuple[str, int]) -> None:
    state = ctx.scope.state
    ctx.scope.state = state.replace(unsupported=(*_without(state, name), marker))


def _is_off(value: Any) -> bool:
    """``disabled`` (or a false ``enabled:``) turns a `_NOOP_WHEN_OFF` directive off."""
    return value is False or (isinstance(value, str) and str.strip(value) in _OFF_VALUES)


def _turned_off(stmt: nodes.Directive, ctx: Frame) -> bool:
    """`> history: disabled`, `` > history: `"disabled"` `` or a block whose `enabled:` is
    false, such as `> artifacts:` with `enabled: false` (docs/language.md §4.5)."""
    if stmt.name not in _NOOP_WHEN_OFF:
        return False
    if stmt.body_kind == "none":
        return _is_off(eval_code(stmt.code, ctx) if stmt.code is not None else stmt.value)
    for kv in stmt.settings:
        if kv.key == "enabled":
            if kv.code is not None:
                return _is_off(eval_code(kv.code, ctx))
            return _is_off(parse_setting_value(kv.value or ""))
    return False


def _marker(stmt: nodes.Directive, ctx: Frame) -> None:
    if stmt.name in _NOOP_WHEN_TOGGLE and stmt.body_kind == "none":
        # `enabled` and `disabled`, plain or from a backtick, are no-ops
        # (docs/language.md#newer-directives); the value is evaluated once
        given = eval_code(stmt.code, ctx) if stmt.code is not None else stmt.value
        toggled = isinstance(given, str) and str.strip(given) == "enabled"
        if toggled:
            return
        off = _is_off(given)
    else:
        off = _turned_off(stmt, ctx)
    if off:
        # turned off: an earlier setting of the slot is replaced (docs/language.md §6.1)
        state = ctx.scope.state
        ctx.scope.state = state.replace(unsupported=_without(state, stmt.name))
        return
    _set_marker(ctx, stmt.name, (f"> {stmt.name}:", stmt.span.start_line))


def _modules(stmt: nodes.Directive, ctx: Frame) -> None:
    if stmt.name == "import":
        run_import(stmt, ctx)
    else:
        run_export(stmt, ctx)


def _optimize(stmt: nodes.Directive, ctx: Frame) -> None:
    run_optimize(stmt, ctx)


def _inert(stmt: nodes.Directive, ctx: Frame) -> None:
    """Stored inertly (``> tool:``'s ``retry_on`` was checked when its procedure was
    defined: `check_retry_on`)."""


def check_retry_on(stmt: nodes.Directive, ctx: Frame) -> None:
    """``> tool:``'s ``retry_on`` names resolve, at definition, to visible `Exception`
    subclasses (docs/language.md §8.11); the directive is otherwise stored inertly."""
    import builtins

    from pytest_kedi.runtime.scope import MISSING

    for kv in stmt.settings:
        if kv.key != "retry_on":
            continue
        names = list(kv.items) or ([kv.value] if kv.value else [])
        for name in (n.strip().strip("`") for n in names):
            value = ctx.scope.get(name, MISSING)
            if value is MISSING:
                value = getattr(builtins, name, MISSING)
            if value is MISSING:
                raise value_error(
                    KediNameError,
                    ctx,
                    kv_value(kv, ctx, name),
                    f"retry_on names {name!r}, which is not defined",
                )
            if not (isinstance(value, type) and issubclass(value, Exception)):
                raise value_error(
                    KediTypeExecutionError,
                    ctx,
                    kv_value(kv, ctx, name),
                    f"retry_on names {name!r}, which is not an Exception class",
                )


def _unsupported(stmt: nodes.Directive, ctx: Frame) -> None:
    # `> auto:` (a procedure's body) is named with its colon, task statements without.
    head = "> auto:" if stmt.name == "auto" else f"> {stmt.name}"
    raise KediUnsupportedError(head, stmt.span.start_line)


Action = Callable[[nodes.Directive, Frame], None]

#: The agent-state directives, one action each.
_STATE_ACTIONS: dict[str, Action] = {
    "model": _set_model,
    "instructions": _set_instructions,
    "system": _set_instructions,
    "settings": _set_settings,
    "adapter": _set_adapter,
    "requires": _set_requires,
}
#: What each `Runtime` kind of directive does (`NODE` directives never reach the runtime).
_BY_KIND: dict[Runtime, Action] = {
    Runtime.MARKER: _marker,
    Runtime.INERT: _inert,
    Runtime.UNSUPPORTED: _unsupported,
    Runtime.MODULES: _modules,
    Runtime.OPTIMIZE: _optimize,
}
#: Directive name -> action, built from the directive table.
ACTIONS: dict[str, Action] = {
    spec.name: _STATE_ACTIONS[spec.name]
    if spec.runtime is Runtime.STATE
    else _BY_KIND[spec.runtime]
    for spec in DIRECTIVES.values()
    if spec.runtime is not Runtime.NODE
}


def run_directive(stmt: nodes.Directive, ctx: Frame) -> None:
    action = ACTIONS.get(stmt.name)
    if action is None:
        raise KediExecutionError(f"{where(ctx, stmt)}: unknown directive `> {stmt.name}:`")
    action(stmt, ctx)
    return None
