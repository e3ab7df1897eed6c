"""Building generated procedure bodies (see `fastbody` for what they do and how their
errors are reported)."""

from __future__ import annotations

import ast
import builtins
import types
from typing import TYPE_CHECKING, Any

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.lang.pycheck import may_warn
from pytest_kedi.runtime.cancel import STATE as CANCEL
from pytest_kedi.runtime.cancel import check_current
from pytest_kedi.runtime.context import Frame
from pytest_kedi.runtime.evaluate import apply_callee, render
from pytest_kedi.runtime.fastbody import AT, PREFIX, FastBody, Op, fail, run_fence
from pytest_kedi.runtime.model.calls import TemplateCall
from pytest_kedi.runtime.pyanalysis import INTROSPECTION, compile_may_warn
from pytest_kedi.runtime.pyerrors import PYTHON_UNITS, UnitInfo
from pytest_kedi.runtime.pyglobals import global_reads
from pytest_kedi.runtime.pyinterop import function_code, relocated_expression
from pytest_kedi.runtime.scope import Scope
from pytest_kedi.runtime.typeresolve import resolve_strings, resolve_type_source
from pytest_kedi.runtime.types import validator_for

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.runtime.procedures import KediProcedure

__all__ = ["build"]

#: Types whose exact-type test implies the strict check passes.
EXACT = (str, int, float, bool, bytes)
_BUILTIN_NAMES = frozenset(vars(builtins))
#: Python that behaves differently inlined in a function than evaluated on its own.
_NOT_INLINED = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: Code that can run after its statement (reading module globals then): the interpreter
#: gives it a snapshot of the globals, a one-expression return (as before) the live ones.
_DEFERRED = (ast.Lambda, ast.GeneratorExp)
#: Names whose result depends on the evaluating namespace itself.
_NAMESPACE = INTROSPECTION
_NATIVE_ARG = (nodes.InlinePython, nodes.Subst, nodes.CallSubst, nodes.ExprSubst)


def _joined(pieces: list[ast.expr]) -> ast.expr:
    """The concatenation of string expressions."""
    joined = pieces[0]
    for piece in pieces[1:]:
        joined = ast.BinOp(left=joined, op=ast.Add(), right=piece)
    return joined


class _Unsupported(Exception):
    """The body is not one `build` compiles."""


def _pos(node: Any, line: int) -> Any:
    node.lineno, node.end_lineno, node.col_offset, node.end_col_offset = line, line, 0, 0
    return node


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Store() if store else ast.Load())


class _Builder:
    """Emits the statements of one generated body."""

    def __init__(self, proc: KediProcedure) -> None:
        self.proc = proc
        self.source_file = proc.unit.source_file
        self.ops: list[Op] = [Op("args")]
        self.helpers: dict[int, tuple[str, Any]] = {}
        self.bound: set[str] = set(proc.names)
        self.targets: set[str] = set()
        self.out: list[ast.stmt] = []
        self.line = proc.node.header_line
        self.temps = 0
        self.scoped_lines: list[tuple[int, int, UnitInfo]] = []
        body = proc.node.body
        #: the body is one ``= `expr` `` return
        first = body[0] if len(body) == 1 else None
        self.single = isinstance(first, nodes.Return) and first.value.mode == "expr"

    # -- emitting ---------------------------------------------------------------------------
    def helper(self, value: Any) -> ast.Name:
        entry = self.helpers.get(id(value))
        if entry is None:
            entry = self.helpers[id(value)] = (f"{PREFIX}h{len(self.helpers)}", value)
        return _name(entry[0])

    def emit(self, stmt: ast.stmt) -> None:
        self.out.append(_pos(stmt, self.line))

    def mark(self, op: Op) -> ast.stmt:
        self.ops.append(op)
        store = ast.Assign(targets=[_name(AT, True)], value=ast.Constant(len(self.ops) - 1))
        return _pos(store, self.line)

    def temp(self, value: ast.expr) -> ast.Name:
        name = f"{PREFIX}t{self.temps}"
        self.temps += 1
        self.emit(ast.Assign(targets=[_name(name, True)], value=value))
        return _name(name)

    def owned(self, value: ast.expr) -> ast.Name:
        """``value`` in a temporary of this body (which may be rebound)."""
        if isinstance(value, ast.Name) and value.id.startswith(f"{PREFIX}t"):
            return value
        return self.temp(value)

    def call(self, func: Any, *args: ast.expr) -> ast.Call:
        return ast.Call(func=self.helper(func), args=list(args), keywords=[])

    def not_exact(self, name: str, tp: type) -> ast.expr:
        """``type(name) is not tp``."""
        return ast.Compare(
            left=self.call(type, _name(name)), ops=[ast.IsNot()], comparators=[self.helper(tp)]
        )

    def check(self, value: ast.Name, tp: Any, op: Op) -> None:
        """``if not valid(value): fail`` (an exact-type test first where it decides)."""
        if tp is Any or tp is object:
            return
        cond: ast.expr = ast.UnaryOp(
            op=ast.Not(), operand=self.call(validator_for(tp), _name(value.id))
        )
        if tp in EXACT:
            cond = ast.BoolOp(op=ast.And(), values=[self.not_exact(value.id, tp), cond])
        failing = _pos(ast.Expr(value=self.call(fail, _name(value.id))), self.line)
        self.emit(ast.If(test=cond, body=[self.mark(op), failing], orelse=[]))

    # -- values -----------------------------------------------------------------------------
    def python(self, code: nodes.PyCode, stmt: nodes.Node) -> ast.Name:
        # Inlined, the expression is parsed and compiled again: Python would give its
        # warnings about it a second time (the interpreter's unit gave them once).
        if may_warn(code.source):
            raise _Unsupported
        try:
            tree = relocated_expression(code, self.source_file)
        except SyntaxError:
            raise _Unsupported from None  # the interpreter reports it when it runs
        if compile_may_warn(tree):
            raise _Unsupported
        scoped = False
        for node in ast.walk(tree):
            if isinstance(node, _NOT_INLINED):
                raise _Unsupported
            if isinstance(node, _SCOPES):
                scoped = True
                if isinstance(node, _DEFERRED) and not self.single:
                    raise _Unsupported
            elif isinstance(node, ast.Name):
                self.read(node.id, python=True)
        info = UnitInfo(code, self.source_file, self.proc.name)
        if scoped:
            self.scoped_lines.append((code.span.start_line, code.span.end_line, info))
        self.out.append(self.mark(Op("python", stmt, code, info)))
        return self.temp(tree.body)

    def read(self, name: str, *, python: bool = False) -> bool:
        """Whether ``name`` is a local here; raises `_Unsupported` for a name the
        generated function would read differently from the interpreter."""
        if name.startswith(PREFIX) or (python and name in _NAMESPACE):
            raise _Unsupported
        if name in self.bound:
            return True
        if name in self.targets:
            raise _Unsupported  # read before its assignment: a global until then
        if not python and name in _BUILTIN_NAMES:
            raise _Unsupported  # a Kedi name never falls back to a Python builtin
        return False

    def lookup(self, name: str, node: nodes.Node, stmt: nodes.Node) -> ast.Name:
        if self.read(name):
            return _name(name)
        self.out.append(self.mark(Op("lookup", stmt, node, name=name)))
        return self.temp(_name(name))

    def part(self, part: nodes.TextPart, stmt: nodes.Node) -> ast.expr:
        if isinstance(part, nodes.Subst):
            return self.lookup(part.name, part, stmt)
        if isinstance(part, (nodes.InlinePython, nodes.ExprSubst)):
            return self.python(part.code, stmt)
        if isinstance(part, nodes.CallSubst):
            return self.apply(part, stmt)
        if isinstance(part, nodes.Literal):
            return ast.Constant(part.value)
        return ast.Constant(f"[{part.name}]")

    def text(self, parts: tuple[nodes.TextPart, ...], stmt: nodes.Node) -> ast.expr:
        """Parts rendered left to right and joined (every piece an exact `str`)."""
        pieces: list[ast.expr] = []
        for part in parts:
            value = self.part(part, stmt)
            if isinstance(value, ast.Constant):
                pieces.append(value)
                continue
            rendered = self.owned(value)
            fix = ast.Assign(targets=[_name(rendered.id, True)], value=self.call(render, rendered))
            test = self.not_exact(rendered.id, str)
            body = [self.mark(Op("render", stmt)), _pos(fix, self.line)]
            self.emit(ast.If(test=test, body=body, orelse=[]))
            pieces.append(ast.FormattedValue(value=_name(rendered.id), conversion=-1))
        if all(isinstance(p, ast.Constant) for p in pieces):
            return ast.Constant("".join(str(getattr(p, "value", "")) for p in pieces))
        if len(pieces) == 1:
            assert isinstance(pieces[0], ast.FormattedValue)
            return pieces[0].value
        return ast.JoinedStr(values=pieces)

    def apply(self, call: nodes.CallSubst, stmt: nodes.Node) -> ast.Name:
        callee = self.owned(self.lookup(call.callee, call, stmt))
        args: list[ast.expr] = []
        for arg in call.args:
            if len(arg.parts) == 1 and isinstance(arg.parts[0], _NATIVE_ARG):
                args.append(self.part(arg.parts[0], stmt))
            else:
                args.append(self.text(arg.parts, stmt))
        values = self.temp(ast.List(elts=args, ctx=ast.Load()))
        self.out.append(self.mark(Op("call", stmt, call, name=callee.id)))
        # A Kedi procedure takes its arguments itself (what `apply_callee` does first).
        result = f"{PREFIX}t{self.temps}"
        self.temps += 1
        own = ast.Call(
            func=ast.Attribute(value=_name(callee.id), attr="invoke_positional", ctx=ast.Load()),
            args=[_name(values.id)],
            keywords=[],
        )
        other = self.call(apply_callee, _name(callee.id), _name(values.id))
        kind = ast.Attribute(value=_name(callee.id), attr="__class__", ctx=ast.Load())
        test = ast.Compare(left=kind, ops=[ast.Is()], comparators=[self.helper(type(self.proc))])
        self.emit(
            ast.If(
                test=test,
                body=[_pos(ast.Assign(targets=[_name(result, True)], value=own), self.line)],
                orelse=[_pos(ast.Assign(targets=[_name(result, True)], value=other), self.line)],
            )
        )
        return _name(result)

    def rhs(self, rhs: nodes.Rhs, stmt: nodes.Node) -> tuple[ast.expr, bool]:
        """The value's expression, and whether it is an exact `str` (text)."""
        if rhs.mode == "expr" and rhs.code is not None:
            return self.python(rhs.code, stmt), False
        if rhs.mode == "call" and rhs.call is not None:
            return self.apply(rhs.call, stmt), False
        if rhs.mode == "text" and rhs.text is not None:
            return self.text(rhs.text.parts, stmt), True
        if rhs.mode == "fence" and rhs.code is not None and len(self.proc.node.body) == 1:
            # The whole body is one fence: it runs as the interpreter runs it, in a frame
            # of the parameters (a Kedi local it rebinds would not be seen by later
            # generated statements, hence the one-statement limit).
            try:
                unit = self.proc.unit.runtime.unit_for(rhs.code, self.source_file, self.proc.name)
            except KediExecutionError:
                raise _Unsupported from None  # the interpreter reports it when it runs
            values = ast.Tuple(elts=[_name(name) for name in self.proc.names], ctx=ast.Load())
            self.out.append(self.mark(Op("fence", stmt)))
            run = self.call(run_fence, self.helper(unit), self.helper(self.proc), values)
            return self.temp(run), False
        raise _Unsupported

    # -- statements -------------------------------------------------------------------------
    def statement(self, stmt: nodes.Node, last: bool) -> None:
        self.line = stmt.span.start_line
        cancel = ast.Attribute(value=self.helper(CANCEL), attr="pending", ctx=ast.Load())
        checkpoint = _pos(ast.Expr(value=self.call(check_current)), self.line)
        self.emit(ast.If(test=cancel, body=[checkpoint], orelse=[]))
        if isinstance(stmt, nodes.Assign) and not last:
            target = stmt.target
            if target in self.bound or target == "args" or target.startswith(PREFIX):
                raise _Unsupported
            tp = self.static_type(stmt.type)
            value, text = self.rhs(stmt.value, stmt)
            self.emit(ast.Assign(targets=[_name(target, True)], value=value))
            if not (text and tp is str):
                self.check(_name(target), tp, Op("assign", stmt, tp=tp))
            self.bound.add(target)
        elif isinstance(stmt, nodes.Template) and not last and not stmt.bare:
            self.template(stmt)
        elif isinstance(stmt, nodes.Return) and last:
            value, text = self.rhs(stmt.value, stmt)
            result = self.owned(value)
            tp = self.proc.return_type
            if not (text and tp is str):
                self.check(result, tp, Op("return", stmt))
            self.emit(ast.Return(value=_name(result.id)))
        else:
            raise _Unsupported

    def template(self, stmt: nodes.Template) -> None:
        """``>> ...``: the prompt rendered as a text is, then `TemplateCall` asks the model
        and checks its values, which become locals (output types must be built-in ones)."""
        outputs = stmt.outputs
        for field in outputs:
            name = field.name
            if name in self.bound or name == "args" or name.startswith(PREFIX):
                raise _Unsupported  # the interpreter reports a read-only target
        types_ = tuple(self.static_type(field.type) for field in outputs)
        rows: list[ast.expr] = []
        for index, row in enumerate(stmt.rows):
            if index:
                rows.append(ast.Constant("\n"))
            rows.append(self.text(row.parts, stmt))
        prompt = self.owned(_joined(rows))
        ctx = Frame(
            Scope({}, self.proc.closure, "frame", self.proc.state),
            self.proc.unit,
            self.proc.name,
            self.proc,
        )
        self.out.append(self.mark(Op("template", stmt)))
        ask = self.call(TemplateCall(stmt, types_, ctx), _name(prompt.id))
        if not outputs:
            self.emit(ast.Expr(value=ask))
            return
        names: list[ast.expr] = [_name(field.name, True) for field in outputs]
        self.emit(ast.Assign(targets=[ast.Tuple(elts=names, ctx=ast.Store())], value=ask))
        self.bound.update(field.name for field in outputs)

    def static_type(self, ref: nodes.TypeRef | None) -> Any:
        """An annotation that names only built-in types (others resolve per run)."""
        if ref is None:
            return str
        if ref.backtick:
            raise _Unsupported

        def no_names(name: str) -> Any:
            raise KeyError(name)

        try:
            where = (self.source_file.path, ref.span.start_line)
            tp = resolve_type_source(ref.source, no_names, where)
            if not isinstance(tp, type):  # its strings are forward references, as the
                # interpreter resolves them (`evaluate.resolve_type`): `list["int"]` is
                # `list[int]`, and `list["P"]` (a name) resolves per run
                tp = resolve_strings(tp, lambda text: resolve_type_source(text, no_names, where))
            return tp
        except KediExecutionError:
            raise _Unsupported from None

    def parameters(self) -> None:
        self.line = self.proc.node.header_line
        for name, tp in zip(self.proc.names, self.proc.param_types, strict=True):
            if name.startswith(PREFIX):
                raise _Unsupported
            self.check(_name(name), tp, self.ops[0])

    def finish(self) -> FastBody:
        proc = self.proc
        names = tuple(name for name, _ in self.helpers.values())
        values = tuple(value for _, value in self.helpers.values())
        code = function_code(
            proc.name, (*proc.names, *names), self.out, self.source_file.path, proc.node.header_line
        )
        self.track(code)
        PYTHON_UNITS.show(self.source_file.path, self.source_file.source)
        return FastBody(code, values, tuple(self.ops), global_reads(code, frozenset()))

    def track(self, code: types.CodeType) -> None:
        """Record each nested scope (lambda, comprehension) as part of its unit."""
        for const in code.co_consts:
            if not isinstance(const, types.CodeType):
                continue
            line = const.co_firstlineno
            owners = [info for start, end, info in self.scoped_lines if start <= line <= end]
            if len(owners) != 1:
                raise _Unsupported
            PYTHON_UNITS.track(const, owners[0])


def build(proc: KediProcedure) -> FastBody | None:
    """The generated body of ``proc``, or None when it is not one of the simple shapes."""
    body = proc.node.body
    if not body or proc.closure.kind != "module":
        return None
    builder = _Builder(proc)
    targets = [s.target for s in body if isinstance(s, nodes.Assign)]
    for stmt in body:
        if isinstance(stmt, nodes.Template):
            targets.extend(field.name for field in stmt.outputs)
    builder.targets = set(targets)
    if len(builder.targets) != len(targets):
        return None  # a name assigned twice
    try:
        builder.parameters()
        for index, stmt in enumerate(body):
            builder.statement(stmt, index == len(body) - 1)
        return builder.finish()
    except (_Unsupported, SyntaxError, ValueError):
        return None
