"""Embedded Python (docs/language.md#python-interop, #errors): compile once per unit under a
unique virtual filename, run against a globals mapping of the visible Kedi environment, write
back rebound Kedi names; errors are mapped to `.kedi` lines by `pyerrors`."""

from __future__ import annotations

import ast
import itertools
import types
from collections.abc import Callable
from typing import Any, Protocol

from pytest_kedi.lang.freshstack import on_fresh_stack
from pytest_kedi.lang.nodes import PyCode, TypeRef
from pytest_kedi.lang.pycheck import Parsed, may_warn, parse_snippet
from pytest_kedi.lang.pycompile import BLOCK_NAME, generator_error, is_generator
from pytest_kedi.runtime.pyanalysis import (
    INTROSPECTION,
    code_names,
    compile_may_warn,
    nested_globals,
    top_level_targets,
    unannotated,
)
from pytest_kedi.runtime.pyerrors import (
    PYTHON_UNITS,
    UnitInfo,
    python_error,
    syntax_error,
)
from pytest_kedi.runtime.pyglobals import (
    build_globals,
    global_reads,
    module_globals,
)
from pytest_kedi.runtime.pypositions import fix_locations, relocate
from pytest_kedi.runtime.scope import MISSING
from pytest_kedi.runtime.sourcefile import SourceFile

__all__ = [
    "CodeStore",
    "CompiledUnit",
    "Transform",
    "build_globals",
    "compile_unit",
    "precompile",
    "function_code",
    "module_globals",
    "python_error",
    "relocated_expression",
    "type_code",
]

#: Changes a block's tree (which has its `.kedi` positions) in place before it is compiled;
#: given the tree and the `.kedi` file's path. It may add code, but bind only names that no
#: user code can bind (pytest's assertion rewriting binds ``@py_assert1`` and the like); a
#: node it adds without a position takes its parent's.
Transform = Callable[[ast.Module, str], None]

_COUNTER = itertools.count(1)

#: Compiles a block again: with the names given declared global, as a function of params.
Rebuild = Callable[..., types.CodeType]

#: A procedure's one-fence body runs this many times before it is compiled as a function
#: of the procedure's parameters (`CompiledUnit.with_params`: one more parse and compile).
PARAMS_AFTER = 16


class CompiledUnit:
    """One compiled unit. A block's top-level assignments are fast function locals
    except for ``shared`` names, declared ``global``; when a run finds other of its
    assigned names bound in the visible Kedi environment (they must then be read and
    written back as Kedi bindings), the block runs as a variant declaring exactly those
    global, compiled once by ``rebuild`` and kept in ``variants``."""

    __slots__ = (
        "candidates",
        "code",
        "filename",
        "info",
        "kind",
        "params",
        "reads",
        "rebuild",
        "runs",
        "shared",
        "simple",
        "top_assigned",
        "variants",
    )

    def __init__(
        self,
        info: UnitInfo,
        filename: str,
        kind: str,
        code: types.CodeType,
        top_assigned: frozenset[str] = frozenset(),
        candidates: frozenset[str] = frozenset(),
    ) -> None:
        self.info = info
        self.filename = filename
        self.kind = kind
        self.code = code
        self.top_assigned = top_assigned
        self.candidates = candidates
        self.simple = kind == "expr" and _is_simple(code)
        self.shared: frozenset[str] = top_assigned
        self.rebuild: Rebuild | None = None
        self.variants: dict[frozenset[str], types.CodeType] = {}
        self.reads: object = MISSING  # `global_reads`, on first run
        self.runs = 0  # runs as a procedure's whole body (`with_params`)
        self.params: tuple[tuple[str, ...], types.CodeType | None] | None = None

    def with_params(self, params: tuple[str, ...]) -> types.CodeType | None:
        """The block compiled as a function of ``params`` (fast locals, as a Python
        function's parameters), for a procedure whose whole body it is; compiled at its
        `PARAMS_AFTER`-th run (None before). None where that would change what the block
        does: it binds or declares global one of ``params`` (parameters are read-only) or
        any name (`shared`), or reads its namespace by name; and where parsing or compiling
        its text again may make Python warn again (`lang.pycheck.may_warn`,
        `pyanalysis.compile_may_warn`)."""
        known = self.params
        if known is not None and known[0] == params:
            return known[1]
        self.runs += 1
        if self.runs < PARAMS_AFTER:
            return None
        code = None
        rebuild = self.rebuild
        fits = self.candidates.isdisjoint(params) and not self.shared
        fits = fits and self.global_reads() is not None
        if rebuild is not None and fits and not may_warn(self.info.code.source):
            try:
                code = rebuild(self.shared, params)
            except (SyntaxError, SyntaxWarning):  # it would warn again (or, unexpectedly, fail)
                code = None
        self.params = (params, code)
        return code

    def global_reads(self) -> frozenset[str] | None:
        reads = self.reads
        if reads is MISSING:
            reads = self.reads = global_reads(self.code, self.top_assigned)
        return reads  # type: ignore[return-value]

    def code_for(self, before: dict[str, Any] | None) -> types.CodeType:
        """The block's code for globals whose write-back ``candidates`` are bound as in
        ``before`` (`raw_global` values; see the class doc)."""
        top = self.top_assigned
        if not top or self.rebuild is None or before is None:
            return self.code
        shared = self.shared
        visible = [name for name in top if name not in shared and before[name] is not MISSING]
        if not visible:
            return self.code
        names = shared.union(visible)
        code = self.variants.get(names)
        if code is None:
            code = self.variants[names] = self.rebuild(names)
        return code


def _is_simple(code: types.CodeType) -> bool:
    """An expression with no nested scopes and no stores can read frame names as locals."""
    if any(isinstance(c, types.CodeType) for c in code.co_consts):
        return False
    return not any(name in INTROSPECTION for name in code.co_names)


# ----------------------------------------------------------------------------- compiling


def _register(info: UnitInfo, kind: str) -> str:
    """The unit's filename: its `.kedi` file's path, whose source is made available to
    `linecache` (Python's tracebacks and warnings then show `.kedi` lines); a unique
    virtual name is kept only in `KediPythonTrace.virtual_filename`."""
    source_file = info.source_file
    path = source_file.path
    PYTHON_UNITS.show(path, source_file.source)
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"<kedi {kind} {base}:{info.code.line} #{next(_COUNTER)}>"


def _parse(code: PyCode, info: UnitInfo, filename: str, mode: str) -> Parsed:
    """Parse a unit's source (`parse_snippet`: a backtick expression is stripped, as it is
    compiled); a syntax error is raised located at its `.kedi` line."""
    try:
        return parse_snippet(code.source, mode == "eval", code.line, info.source_file.path)
    except SyntaxError as exc:
        raise syntax_error(exc, info, filename, relative=True) from None


class CodeStore(Protocol):
    """A store of compiled code kept across runs (the pytest plugin keeps one in pytest's
    cache directory). A key is ``(file, unit)``: ``file`` is the source file's path and a
    digest of its text (so a store can keep one file's units together, and a changed file
    never reads another text's code), ``unit`` names the unit in the file. A value is a
    block's ``(code, top-level targets, write-back candidates, shared names)`` or an
    expression's ``(code, whether it holds an assignment expression)``."""

    def get(self, key: tuple[object, ...]) -> tuple[Any, ...] | None: ...

    def put(self, key: tuple[object, ...], value: tuple[Any, ...]) -> None: ...


def _store_key(
    code: PyCode, source_file: SourceFile, kind: str, transform: Transform | None
) -> tuple[object, ...]:
    """A unit's key in a `CodeStore`. What it holds depends on nothing else: the label of
    the procedure that runs it is not part of the compiled code."""
    return (
        (source_file.path, source_file.digest),
        (kind, code.source, code.line, code.col, transform is not None),
    )


def compile_unit(
    code: PyCode,
    source_file: SourceFile,
    procedure: str | None,
    *,
    mode: str | None = None,
    transform: Transform | None = None,
    store: CodeStore | None = None,
) -> CompiledUnit:
    """Compile one embedded unit. ``mode``: ``"expr"``, ``"block"`` or ``"prelude"``
    (default: ``"expr"`` for backtick expressions, ``"block"`` otherwise). The unit's code
    is looked up in (and added to) ``store`` when one is given."""
    info = UnitInfo(code, source_file, procedure)
    kind = mode or ("expr" if code.kind == "expr" else "block")
    filename = _register(info, kind)
    key = _store_key(code, source_file, kind, transform)
    value = store.get(key) if store is not None else None
    if value is None:
        value = _compiled(code, info, filename, kind, transform)
        if store is not None:
            store.put(key, value)
    if kind == "prelude":
        return CompiledUnit(info, filename, kind, _track(value[0], info))
    if kind == "expr":
        compiled, walrus = value
        unit = CompiledUnit(info, filename, kind, _track(compiled, info))
        if walrus:  # the names it may rebind, written back after it runs (`pyrun.run_expr`)
            unit.simple = False
            unit.candidates = frozenset(code_names(compiled))
        return unit
    func_code, top_names, candidate_names, shared = value
    unit = CompiledUnit(
        info, filename, kind, _track(func_code, info), frozenset(top_names),
        frozenset(candidate_names),
    )  # fmt: skip
    unit.shared = frozenset(shared)
    unit.rebuild = _rebuilder(code, info, filename, transform)
    return unit


def precompile(
    code: PyCode,
    source_file: SourceFile,
    store: CodeStore,
    *,
    transform: Transform | None = None,
    mode: str | None = None,
    parsed: Parsed | None = None,
) -> None:
    """Compile ``code`` into ``store`` unless it holds it already, as `compile_unit` would
    (with the same ``mode``), so that running it later finds it there. ``parsed``:
    ``code`` parsed already (by `parse_snippet`; its tree is changed in place). Code that
    does not compile is left out: running it reports the error."""
    kind = mode or ("expr" if code.kind == "expr" else "block")
    key = _store_key(code, source_file, kind, transform)
    if store.get(key) is not None:
        return
    try:
        info = UnitInfo(code, source_file, None)
        value = _compiled(code, info, source_file.path, kind, transform, parsed)
    except Exception:  # a syntax error (or a transform's): the run reports it
        return
    store.put(key, value)


def _compiled(*args: Any) -> tuple[Any, ...]:
    """`_compile(*args)`; code nested too deeply for the caller's stack is compiled again on
    a fresh stack (parsed again), as `check_python` parsed it: whether it compiles does not
    depend on the caller's stack."""
    try:
        return _compile(*args)
    except RecursionError:
        return on_fresh_stack(lambda: _compile(*args[:5]))


def _compile(
    code: PyCode,
    info: UnitInfo,
    filename: str,
    kind: str,
    transform: Transform | None,
    parsed: Parsed | None = None,
) -> tuple[Any, ...]:
    """An expression's ``(code, whether it holds an assignment expression)``, a block's
    ``(code, top-level targets, write-back candidates, shared names)`` (name tuples
    sorted) or a prelude's ``(module code,)``: what a `CodeStore` keeps. ``parsed``: the
    unit parsed by `parse_snippet` (parsed here when None). A syntax error is raised
    located."""
    path = info.source_file.path
    try:
        if kind == "expr":
            stripped = len(code.source) - len(code.source.lstrip())
            tree_e, delta = parsed or _parse(code, info, filename, "eval")
            assert isinstance(tree_e, ast.Expression)
            walrus = relocate(tree_e, code, info.source_file, stripped, delta)
            return compile(tree_e, path, "eval", dont_inherit=True), walrus
        tree, delta = parsed or _parse(code, info, filename, "exec")
        assert isinstance(tree, ast.Module)
        if kind == "prelude":
            _finish_tree(tree, code, info, transform, delta)
            return (compile(tree, path, "exec", dont_inherit=True),)
        # The block's own code is analysed before the transform adds to it (pytest's
        # assertion rewriting makes a tree about ten times larger): a transform binds
        # only names no user code can bind (`Transform`), which no Kedi binding can
        # hold, so they matter to the analysis only where every name is shared.
        top = top_level_targets(tree.body)
        # Names a nested scope declares global stay module-level for the whole block;
        # so does every name of a block that introspects its namespace.
        nested, introspects = nested_globals(tree.body)
        _finish_tree(tree, code, info, transform, delta)
        if introspects and transform is not None:
            top = top_level_targets(tree.body)
        shared = frozenset(top) if introspects else frozenset(top & nested)
        func_code = _block_code(tree, shared, info.source_file.path, code.line)
    except SyntaxError as exc:
        raise syntax_error(exc, info, filename) from exc
    candidates = top | nested
    return func_code, tuple(sorted(top)), tuple(sorted(candidates)), tuple(sorted(shared))


def _block_tree(
    code: PyCode, info: UnitInfo, filename: str, transform: Transform | None
) -> ast.Module:
    tree, delta = _parse(code, info, filename, "exec")
    assert isinstance(tree, ast.Module)
    _finish_tree(tree, code, info, transform, delta)
    return tree


def _finish_tree(
    tree: ast.Module, code: PyCode, info: UnitInfo, transform: Transform | None, delta: int
) -> None:
    """Give a block's parsed tree (``delta``: see `relocate`) its `.kedi` positions, then
    apply ``transform``. The block is relocated first, while its tree is small: a node the
    transform adds takes its position from the statement it replaces, already relocated."""
    relocate(tree, code, info.source_file, 0, delta)
    if transform is not None:
        transform(tree, info.source_file.path)


def _block_code(
    tree: ast.Module, shared: frozenset[str], path: str, line: int, params: tuple[str, ...] = ()
) -> types.CodeType:
    """The block as a function of ``params``; the names in ``shared`` are declared
    ``global``. The block's tree has every position (`relocate` completed them), unless a
    transform added nodes without one. A ``yield`` at its level is a `SyntaxError`."""
    at = {"lineno": line, "col_offset": 0, "end_lineno": line, "end_col_offset": 0}
    body: list[ast.stmt] = []
    if shared:
        body.append(ast.Global(names=sorted(shared), **at))
    body.extend((unannotated(tree.body, shared) if shared else tree.body) or [ast.Pass(**at)])
    try:
        code = function_code(BLOCK_NAME, params, body, path, line, positioned=True)
    except TypeError:  # a transform added a node without a position: its parent's
        code = function_code(BLOCK_NAME, params, body, path, line)
    if is_generator(code):
        raise generator_error(tree.body, path)
    return code


def _rebuilder(code: PyCode, info: UnitInfo, filename: str, transform: Transform | None) -> Rebuild:
    """Compile the block again with other names declared ``global`` (see `pyrun.run_block`),
    or as a function of parameters (`CompiledUnit.with_params`)."""

    def rebuild(shared: frozenset[str], params: tuple[str, ...] = ()) -> types.CodeType:
        tree = _block_tree(code, info, filename, transform)
        if params and compile_may_warn(tree):  # (a variant is compiled whatever it gives)
            raise SyntaxWarning("compiling the block again may warn again")
        path = info.source_file.path
        return _track(_block_code(tree, shared, path, code.line, params), info)

    return rebuild


def _track(code: types.CodeType, info: UnitInfo) -> types.CodeType:
    """Record ``code`` and every code object nested in it as belonging to ``info``."""
    PYTHON_UNITS.track(code, info)
    return code


def function_code(
    name: str,
    params: tuple[str, ...],
    body: list[ast.stmt],
    filename: str,
    line: int,
    *,
    positioned: bool = False,
) -> types.CodeType:
    """Compile ``def <name>(<params>): <body>`` under ``filename``; its code object.
    ``positioned``: every node of ``body`` has its positions (none is completed)."""
    func = ast.FunctionDef(
        name=name,
        args=ast.arguments(
            posonlyargs=[],
            args=[
                ast.arg(arg=param, lineno=line, col_offset=0, end_lineno=line, end_col_offset=0)
                for param in params
            ],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=body,
        decorator_list=[],
        returns=None,
        lineno=line,
        col_offset=0,
        end_lineno=max((getattr(stmt, "end_lineno", None) or line for stmt in body), default=line),
        end_col_offset=0,
    )
    module = ast.Module(body=[func], type_ignores=[])
    if not positioned:
        fix_locations(module)
    module_code = compile(module, filename, "exec", dont_inherit=True)
    return next(c for c in module_code.co_consts if isinstance(c, types.CodeType))


def type_code(ref: TypeRef) -> PyCode:
    """A backtick type as the expression unit it is compiled as."""
    span = ref.span
    return PyCode(span, ref.source, "expr", span.start_line, span.start_col + 1)


def relocated_expression(code: PyCode, source_file: SourceFile) -> ast.Expression:
    """A backtick expression's tree with `.kedi` line numbers and columns, as
    `compile_unit` compiles it (raises `SyntaxError` when it does not parse)."""
    tree, delta = parse_snippet(code.source, True, code.line, source_file.path)
    assert isinstance(tree, ast.Expression)
    stripped = len(code.source) - len(code.source.lstrip())
    relocate(tree, code, source_file, stripped, delta)
    return tree
