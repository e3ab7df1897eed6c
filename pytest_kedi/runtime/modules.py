"""Loading `.kedi` files and ``> import:`` / ``> export:`` of relative modules
(docs/language.md#modules)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_kedi.constants import ENV_DEBUG_OPTIMIZED, ENV_HOME
from pytest_kedi.fileread import is_file
from pytest_kedi.lang import check_python, nodes, parse_file
from pytest_kedi.lang.diagnostics import ImportSite, KediParseError
from pytest_kedi.lang.files import path_text, source_text
from pytest_kedi.lang.syntax import is_identifier
from pytest_kedi.runtime.casecode import WarnedTrees
from pytest_kedi.runtime.context import Frame, ModuleUnit, Runtime
from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediImportError,
    KediModelError,
    KediTraceFrame,
    KediUnsupportedError,
)
from pytest_kedi.runtime.evaluate import where
from pytest_kedi.runtime.heap import made_without_collection
from pytest_kedi.runtime.interpreter import exec_body, named_line
from pytest_kedi.runtime.model.state import AgentState
from pytest_kedi.runtime.pyinterop import compile_unit
from pytest_kedi.runtime.pymodule import new_module
from pytest_kedi.runtime.pyrun import run_prelude
from pytest_kedi.runtime.rowscope import apart
from pytest_kedi.runtime.scope import EPOCHS, MISSING, KediArgs, Scope
from pytest_kedi.runtime.sourcefile import SourceFile
from pytest_kedi.runtime.valueerrors import listed_name, value_error

__all__ = ["BUNDLED_MODULES", "checked_arguments", "load_unit", "run_export", "run_import"]

BUNDLED_MODULES = frozenset({"errors", "require", "filesystem", "sandbox", "helpers", "this"})


def checked_arguments(path: object, source: object, mode: object) -> str:
    """`load`'s ``path`` as a str, once its arguments are checked: a clear `TypeError` for
    a path or source of the wrong type (``load(None)`` would read a file named ``None``),
    a `ValueError` for an unknown mode."""
    if mode not in ("run", "validate"):
        raise ValueError(f"mode must be 'run' or 'validate', not {mode!r}")
    if source is not None:
        source_text(source, "load")
    return path_text(path, "load")


def load_unit(
    runtime: Runtime,
    path: str | os.PathLike[str],
    source: str | None = None,
    *,
    python_checked: bool = False,
    args: Mapping[str, Any] | None = None,
) -> ModuleUnit:
    """Parse a file, check its embedded Python (unless the caller did: ``python_checked``),
    run its prelude and create its module scope (nothing else runs). ``args`` fills the
    reserved `args` namespace, which the prelude reads too (docs/language.md#program-runs)."""
    text_path = str(path)
    with made_without_collection():  # the syntax tree: no collection walks it as it grows
        if source is not None:
            from pytest_kedi.lang.parser import parse

            module = parse(source, text_path)
        else:
            try:
                module = parse_file(text_path)
            except (OSError, UnicodeDecodeError) as exc:
                raise KediImportError(f"cannot read {text_path}: {_reason(exc)}") from exc
        trees = None
        if not python_checked:  # a Python syntax error is a located parse error, at once
            trees = WarnedTrees(module)  # (docs/language.md#line-kinds), not at its first run
            check_python(module, trees if trees.wanted else None)
    source_file = SourceFile(text_path, module.source)
    if trees:  # what Python warned of as it parsed, compiled from those trees (once)
        runtime.code_store = trees.compile_into(source_file, runtime.code_store)
    # The prelude's globals are a module's, registered while the program is loaded (for
    # `dataclasses`, `pickle` ..., docs/language.md#python). One warnings registry for the
    # file's Python, as a module has one: each block's run gets fresh globals, which share
    # it, so the default action shows a warning once per location, not once per row or
    # call (docs/language.md#python-warnings).
    namespace = KediArgs(args)
    prelude_vars = new_module(text_path, runtime.py_modules)
    prelude_vars["__warningregistry__"] = {}
    prelude_vars["args"] = namespace
    prelude_scope = Scope(prelude_vars, None, "prelude", AgentState())
    if module.prelude is not None and re.search(r"\bglobal\b", module.prelude.code.source):
        prelude_scope.volatile = True  # prelude functions may rebind prelude globals
    scope = Scope({"args": namespace}, prelude_scope, "module", AgentState())
    prelude_scope.heir = scope
    scope.volatile = prelude_scope.volatile
    optimized = _optimized(text_path, module)
    unit = ModuleUnit(runtime, module, source_file, prelude_scope, scope, optimized)
    if module.prelude is not None:
        block = module.prelude
        ctx = Frame(scope, unit, "<prelude>")
        try:
            compiled = compile_unit(
                block.code, source_file, "<prelude>", mode="prelude", store=runtime.code_store
            )
            run_prelude(compiled, prelude_vars)
            EPOCHS.bump(prelude=True)
        except KediExecutionError as err:
            line = block.span.start_line
            if not err.frames and not err.python_traces:  # at the line that rebound `args`
                line = named_line(err.message, block.span) or line
            span = source_file.line_span(line)
            raise err.with_outer_frame(ctx.frame("prelude", span))
    return unit


def _reason(exc: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be read, without the exception's internals."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 (byte {exc.start})"
    if isinstance(exc, IsADirectoryError):
        return "it is a directory"
    return exc.strerror or type(exc).__name__


def _optimize_spans(body: tuple[Any, ...], owner: str | None, out: dict[str, list[str]]) -> None:
    """``{procedure: [span names]}`` of every ``> optimize: span:`` (nested included)."""
    for stmt in body:
        if isinstance(stmt, nodes.Procedure):
            out.setdefault(stmt.name, [])
            _optimize_spans(stmt.body, stmt.name, out)
        elif isinstance(stmt, nodes.Directive) and stmt.name == "optimize" and owner:
            out.setdefault(owner, []).append(stmt.arg or "")
        for attr in ("body", "orelse", "map_body"):
            inner = getattr(stmt, attr, None)
            if isinstance(inner, tuple) and not isinstance(stmt, nodes.Procedure):
                _optimize_spans(inner, owner, out)


def _optimized(path: str, module: nodes.Module) -> dict[str, dict[str, str]]:
    if not os.path.isfile(path):
        return {}
    # Most files have no artifact: none, no walk of the module for its spans (one `stat`
    # per file, not two), unless its absence is to be shown (`load_optimized`).
    if not is_file(path + ".optimized.json") and os.environ.get(ENV_DEBUG_OPTIMIZED) != "1":
        return {}
    from pytest_kedi.runtime.model import InvalidOptimizedPrompts, load_optimized, optimized_path

    known: dict[str, list[str]] = {}
    _optimize_spans(module.body, None, known)
    shown = os.path.join(os.path.dirname(path), optimized_path(path).name)
    try:
        return load_optimized(path, known)
    except InvalidOptimizedPrompts as exc:
        # located at the artifact's line (docs/language.md#model-directives)
        span = nodes.Span(shown, exc.line, exc.column, exc.line, exc.column, 0, 0)
        frame = KediTraceFrame("load", "<optimized prompts>", span, None, exc.snippet)
        raise KediModelError(exc.message, frames=(frame,)) from exc
    except KediExecutionError as exc:  # its stale-entry warning, made an error (-W error)
        span = nodes.Span(shown, 1, 1, 1, 1, 0, 0)  # where the warning is
        raise exc.with_outer_frame(KediTraceFrame("load", "<optimized prompts>", span))


# ----------------------------------------------------------------------------- imports


def _target(stmt: nodes.Directive) -> str:
    return (stmt.arg or stmt.value or "").strip()


def _check_path(target: str, ctx: Frame, stmt: nodes.Directive) -> list[str]:
    segments = target.split("/")
    if (
        not target
        or target.endswith(".kedi")
        or "\\" in target
        or target.startswith("/")
        or not all(map(is_identifier, segments))
    ):
        raise KediImportError(f"{where(ctx, stmt)}: invalid module path {target!r}")
    return segments


def run_import(stmt: nodes.Directive, ctx: Frame) -> None:
    target = _target(stmt)
    segments = _check_path(target, ctx, stmt)
    base = Path(ctx.unit.path).parent
    candidate = base.joinpath(*segments[:-1], segments[-1] + ".kedi")
    runtime = ctx.unit.runtime
    if is_file(candidate):
        module = _load_module(runtime, candidate, ctx, stmt)
    else:
        home = os.environ.get(ENV_HOME)
        registry = Path(home, "registry", *segments).with_suffix(".kedi") if home else None
        if segments[0] in BUNDLED_MODULES or (registry is not None and is_file(registry)):
            raise KediUnsupportedError(f"> import: {target}", stmt.span.start_line)
        tried = [str(candidate), f"bundled module {segments[0]!r}"]
        if registry is not None:
            tried.append(str(registry))
        raise KediImportError(
            f"{where(ctx, stmt)}: module {target!r} not found (tried: {', '.join(tried)})"
        )
    exports = module.exports or {}
    names = stmt.names if stmt.names else tuple(exports)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise KediImportError(f"{where(ctx, stmt)}: {name!r} is imported twice")
        seen.add(name)
        if name not in exports:
            raise value_error(
                KediImportError,
                ctx,
                listed_name(stmt, ctx, name),
                f"module {target!r} does not export {name!r}",
            )
        # an imported value keeps its declared type for `:=` (docs/language.md#rebinding)
        ctx.scope.bind(name, exports[name], module.export_contracts.get(name, MISSING))


def _load_module(runtime: Runtime, path: Path, ctx: Frame, stmt: nodes.Directive) -> ModuleUnit:
    key = str(path.resolve())
    if key in runtime.loading:
        chain = [*runtime.loading[runtime.loading.index(key) :], key]
        pretty = " -> ".join(Path(p).name for p in chain)
        raise KediImportError(f"{where(ctx, stmt)}: import cycle: {pretty}")
    cached = runtime.modules.get(key)
    if cached is not None:
        return cached
    runtime.loading.append(key)
    try:
        with apart("module load"):  # its own cassette request counts, whoever imports it
            unit = load_unit(runtime, str(path))
            unit.exports = {}
            exec_body(unit.module.body, Frame(unit.scope, unit, "<module>"))
        unit.exports = _collect_exports(unit, ctx, stmt)
    except KediParseError as exc:  # this file's, or one it imports: shown with this import
        line = stmt.span.start_line
        site = ImportSite(ctx.unit.path, line, ctx.unit.source_file.line_text(line))
        raise exc.imported_at(site) from None
    finally:
        runtime.loading.pop()
    runtime.modules[key] = unit
    return unit


#: `> export: *` in a module's export list (listed names are identifiers)
_ALL = "*"


def _collect_exports(unit: ModuleUnit, ctx: Frame, stmt: nodes.Directive) -> dict[str, Any]:
    spec = unit.export_spec
    if spec is None:
        return {}
    vars_ = unit.scope.vars
    out: dict[str, Any] = {}
    if _ALL in spec:
        out = {n: v for n, v in vars_.items() if not n.startswith("_") and n != "args"}
    for name in spec:
        if name == _ALL:
            continue
        if name not in vars_:
            raise _undefined_export(unit, name, ctx, stmt)
        out[name] = unit.scope.get(name)
    contracts = unit.scope.contracts
    unit.export_contracts = {n: contracts[n] for n in out if n in contracts}
    return out


def _undefined_export(
    unit: ModuleUnit, name: str, ctx: Frame, stmt: nodes.Directive
) -> KediImportError:
    """Located at ``name`` in the module's own `> export:` list (docs/language.md#modules),
    the import that loaded the module being the frame around it."""
    inner = Frame(unit.scope, unit, "<module>")
    for export in unit.module.body:
        if isinstance(export, nodes.Directive) and export.name == "export":
            listed = list(export.names) or (export.value or "").replace(",", " ").split()
            if name in listed:
                offset = listed_name(export, inner, name)
                message = f"exports {name!r}, which the module does not define"
                return value_error(KediImportError, inner, offset, message)
    message = f"{unit.path} exports {name!r}, which it does not define"
    return KediImportError(f"{where(ctx, stmt)}: {message}")


def run_export(stmt: nodes.Directive, ctx: Frame) -> None:
    """A module's `> export:` directives add up: `> export: *` with a list exports every
    public name and the listed ones, whichever comes first (docs/language.md#modules)."""
    unit = ctx.unit
    value = (stmt.value or "").strip()
    if value == _ALL:
        names = [_ALL]
    else:
        names = list(stmt.names) or [n.strip() for n in value.split(",") if n.strip()]
    previous = unit.export_spec or []
    unit.export_spec = previous + [n for n in names if n not in previous]
