"""Directives: agent state (``model``, ``instructions``/``system``, ``settings``,
``adapter``, ``requires``), group-(b) unsupported markers, inert declarations and
statements pytest-kedi refuses to run (§4.3, §4.5, §9.10, §9.11)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_kedi.errors import (
    KediExecutionError,
    KediModelError,
    KediTypeExecutionError,
    KediUnsupportedError,
    KediValueExecutionError,
)
from pytest_kedi.lang import nodes
from pytest_kedi.runtime.context import Frame
from pytest_kedi.runtime.evaluate import eval_code, render_text, where
from pytest_kedi.runtime.interpreter import register
from pytest_kedi.runtime.types import describe_value

__all__ = ["MODEL_DIRECTIVES", "STATEMENT_DIRECTIVES", "run_directive"]

#: Directives that are statements of pytest-kedi-unsupported features (§9.10).
STATEMENT_DIRECTIVES = frozenset({"task", "await", "send", "interrupt", "task_group", "process"})
#: Group (b): recorded in agent state, raised at the next model call in scope (§4.5).
_MARKERS = frozenset(
    {
        "agent",
        "effort",
        "history",
        "artifacts",
        "approval",
        "mcp",
        "use",
        "skills",
        "codemode",
        "budget",
        "hooks",
    }
)
_OFF_VALUES = frozenset({"disabled"})
_NOOP_WHEN_TOGGLE = frozenset({"hooks"})
#: Inert declarations (validated by the parser, stored nowhere at run time).
_INERT = frozenset({"profile", "subagent", "max_agents", "workflow", "tool", "output", "package"})
MODEL_DIRECTIVES = frozenset({"model", "instructions", "system", "settings", "adapter", "requires"})
_ADVERTISED = frozenset({"structured_output", "model_override", "settings"})


def _inline(stmt: nodes.Directive, ctx: Frame) -> Any:
    if stmt.code is not None:
        return eval_code(stmt.code, ctx)
    if stmt.text is not None:
        return render_text(stmt.text, ctx)
    return stmt.value


def _set_model(stmt: nodes.Directive, ctx: Frame) -> None:
    from pytest_kedi.runtime.model import ModelError, normalize_model_name

    value = _inline(stmt, ctx)
    if not isinstance(value, str) or not value.strip():
        raise KediTypeExecutionError(
            f"{where(ctx, stmt)}: > model: expects a model name (str), got {describe_value(value)}"
        )
    try:
        name = normalize_model_name(value.strip())
    except ModelError as exc:
        raise KediModelError(f"{where(ctx, stmt)}: {exc.message}") from exc
    ctx.scope.state = ctx.scope.state.replace(model=name)


def _set_instructions(stmt: nodes.Directive, ctx: Frame) -> None:
    captured = ctx  # rendered at each model call, in the directive's environment (§4.3)
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

    ctx.scope.state = ctx.scope.state.replace(instructions=thunk)


def _set_settings(stmt: nodes.Directive, ctx: Frame) -> None:
    from pytest_kedi.runtime.model import (
        DROPPED_SETTING_KEYS,
        ModelError,
        parse_setting_value,
        validate_settings,
    )

    new: dict[str, Any] = {}
    for kv in stmt.settings:
        if kv.key in DROPPED_SETTING_KEYS:
            continue  # documented only for other backends: dropped unevaluated (§4.3)
        if kv.code is not None:
            new[kv.key] = eval_code(kv.code, ctx)
        elif kv.items:
            new[kv.key] = list(kv.items)
        else:
            new[kv.key] = parse_setting_value(kv.value or "")
    merged = {**ctx.scope.state.settings, **new}
    try:
        merged = validate_settings(merged)
    except ModelError as exc:
        raise KediModelError(f"{where(ctx, stmt)}: {exc.message}") from exc
    ctx.scope.state = ctx.scope.state.replace(settings=merged)


def _set_adapter(stmt: nodes.Directive, ctx: Frame) -> None:
    value = _inline(stmt, ctx)
    name = str(value).strip() if value is not None else ""
    if name == "pydantic":
        ctx.scope.state = ctx.scope.state.replace(adapter="pydantic")
        return
    if name in ("dspy", "langchain"):
        marker = (f"> adapter: {name}", stmt.span.start_line)
        state = ctx.scope.state
        ctx.scope.state = state.replace(unsupported=(*state.unsupported, marker))
        return
    raise KediValueExecutionError(
        f"{where(ctx, stmt)}: unknown adapter {name!r} (expected pydantic, dspy or langchain)"
    )


def _set_requires(stmt: nodes.Directive, ctx: Frame) -> None:
    names = set(stmt.names)
    value = _inline(stmt, ctx) if stmt.value or stmt.code else None
    if isinstance(value, str) and value.strip():
        names.add(value.strip())
    state = ctx.scope.state
    ctx.scope.state = state.replace(requires=state.requires | frozenset(names))


def _marker(stmt: nodes.Directive, ctx: Frame) -> None:
    value = (stmt.value or "").strip()
    if stmt.body_kind == "none" and value in _OFF_VALUES:
        return
    if stmt.name in _NOOP_WHEN_TOGGLE and stmt.body_kind == "none" and value == "enabled":
        return
    marker = (f"> {stmt.name}:", stmt.span.start_line)
    state = ctx.scope.state
    ctx.scope.state = state.replace(unsupported=(*state.unsupported, marker))


def _modules(stmt: nodes.Directive, ctx: Frame) -> None:
    from pytest_kedi.runtime.modules import run_export, run_import

    if stmt.name == "import":
        run_import(stmt, ctx)
    else:
        run_export(stmt, ctx)


def _optimize(stmt: nodes.Directive, ctx: Frame) -> None:
    from pytest_kedi.runtime.model.calls import run_optimize

    run_optimize(stmt, ctx)


_ACTIONS: dict[str, Callable[[nodes.Directive, Frame], None]] = {
    "model": _set_model,
    "instructions": _set_instructions,
    "system": _set_instructions,
    "settings": _set_settings,
    "adapter": _set_adapter,
    "requires": _set_requires,
    "import": _modules,
    "export": _modules,
    "optimize": _optimize,
}


@register(nodes.Directive)
def run_directive(stmt: nodes.Directive, ctx: Frame) -> None:
    name = stmt.name
    action = _ACTIONS.get(name)
    if action is not None:
        action(stmt, ctx)
    elif name in _MARKERS:
        _marker(stmt, ctx)
    elif name in _INERT:
        pass
    elif name in STATEMENT_DIRECTIVES:
        raise KediUnsupportedError(f"> {name}", stmt.span.start_line)
    elif name == "auto":
        raise KediUnsupportedError("> auto:", stmt.span.start_line)
    else:
        raise KediExecutionError(f"{where(ctx, stmt)}: unknown directive `> {name}:`")
    return None
