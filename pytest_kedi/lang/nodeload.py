"""The AST's nodes as the parse cache loads them: fast, and exactly the nodes of `nodes`.

Unpickling a node calls its class with its field values (`pytest_kedi.plugin.parsecache`),
and a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, the
dearest part of loading a file's syntax tree. Each class here has the layout of one node
class (its base and ``__slots__``) without the frozen check: its ``__init__`` stores the
fields directly, then makes the object an instance of the node class (``__class__``), so
what the load gives is that node, equal to the one the parser builds. `TWINS` maps each
node class to its class here; `tests/lang/test_nodeload.py` checks they agree field by
field. A change here or in `nodes` changes the parser's version (every `lang` source is
hashed), so no entry written with other classes is read.
"""

from __future__ import annotations

from typing import Any

from pytest_kedi.lang import nodes
from pytest_kedi.lang.nodes import Node

__all__ = ["LOADERS", "TWINS"]

#: Each node class -> the class its pickled instances are loaded through.
TWINS: dict[type, type] = {}


class _Span:
    __slots__ = nodes.Span.__slots__

    def __init__(
        self: Any, path, start_line, start_col, end_line, end_col, start_offset, end_offset
    ) -> None:
        self.path = path
        self.start_line = start_line
        self.start_col = start_col
        self.end_line = end_line
        self.end_col = end_col
        self.start_offset = start_offset
        self.end_offset = end_offset
        self.__class__ = nodes.Span


class _PyCode(Node):
    __slots__ = nodes.PyCode.__slots__

    def __init__(self: Any, span, source, kind, line, col) -> None:
        self.span = span
        self.source = source
        self.kind = kind
        self.line = line
        self.col = col
        self.__class__ = nodes.PyCode


class _TypeRef(Node):
    __slots__ = nodes.TypeRef.__slots__

    def __init__(self: Any, span, source, backtick) -> None:
        self.span = span
        self.source = source
        self.backtick = backtick
        self.__class__ = nodes.TypeRef


class _Literal(Node):
    __slots__ = nodes.Literal.__slots__

    def __init__(self: Any, span, value) -> None:
        self.span = span
        self.value = value
        self.__class__ = nodes.Literal


class _Subst(Node):
    __slots__ = nodes.Subst.__slots__

    def __init__(self: Any, span, name) -> None:
        self.span = span
        self.name = name
        self.__class__ = nodes.Subst


class _ExprSubst(Node):
    __slots__ = nodes.ExprSubst.__slots__

    def __init__(self: Any, span, code) -> None:
        self.span = span
        self.code = code
        self.__class__ = nodes.ExprSubst


class _InlinePython(Node):
    __slots__ = nodes.InlinePython.__slots__

    def __init__(self: Any, span, code) -> None:
        self.span = span
        self.code = code
        self.__class__ = nodes.InlinePython


class _CallSubst(Node):
    __slots__ = nodes.CallSubst.__slots__

    def __init__(self: Any, span, callee, args) -> None:
        self.span = span
        self.callee = callee
        self.args = args
        self.__class__ = nodes.CallSubst


class _Arg(Node):
    __slots__ = nodes.Arg.__slots__

    def __init__(self: Any, span, parts) -> None:
        self.span = span
        self.parts = parts
        self.__class__ = nodes.Arg


class _OutputField(Node):
    __slots__ = nodes.OutputField.__slots__

    def __init__(self: Any, span, name, type) -> None:
        self.span = span
        self.name = name
        self.type = type
        self.__class__ = nodes.OutputField


class _Text(Node):
    __slots__ = nodes.Text.__slots__

    def __init__(self: Any, span, parts) -> None:
        self.span = span
        self.parts = parts
        self.__class__ = nodes.Text


class _Rhs(Node):
    __slots__ = nodes.Rhs.__slots__

    def __init__(self: Any, span, mode, text, code, call) -> None:
        self.span = span
        self.mode = mode
        self.text = text
        self.code = code
        self.call = call
        self.__class__ = nodes.Rhs


class _Param(Node):
    __slots__ = nodes.Param.__slots__

    def __init__(self: Any, span, name, type, default) -> None:
        self.span = span
        self.name = name
        self.type = type
        self.default = default
        self.__class__ = nodes.Param


class _Procedure(Node):
    __slots__ = nodes.Procedure.__slots__

    def __init__(self: Any, span, name, params, return_type, body, docstring, header_line) -> None:
        self.span = span
        self.name = name
        self.params = params
        self.return_type = return_type
        self.body = body
        self.docstring = docstring
        self.header_line = header_line
        self.__class__ = nodes.Procedure


class _FieldDecl(Node):
    __slots__ = nodes.FieldDecl.__slots__

    def __init__(self: Any, span, name, type, default) -> None:
        self.span = span
        self.name = name
        self.type = type
        self.default = default
        self.__class__ = nodes.FieldDecl


class _TypeDecl(Node):
    __slots__ = nodes.TypeDecl.__slots__

    def __init__(self: Any, span, name, fields) -> None:
        self.span = span
        self.name = name
        self.fields = fields
        self.__class__ = nodes.TypeDecl


class _Assign(Node):
    __slots__ = nodes.Assign.__slots__

    def __init__(self: Any, span, target, type, value) -> None:
        self.span = span
        self.target = target
        self.type = type
        self.value = value
        self.__class__ = nodes.Assign


class _Reassign(Node):
    __slots__ = nodes.Reassign.__slots__

    def __init__(self: Any, span, target, value) -> None:
        self.span = span
        self.target = target
        self.value = value
        self.__class__ = nodes.Reassign


class _Template(Node):
    __slots__ = nodes.Template.__slots__

    def __init__(self: Any, span, rows, bare) -> None:
        self.span = span
        self.rows = rows
        self.bare = bare
        self.__class__ = nodes.Template


class _RawCapture(Node):
    __slots__ = nodes.RawCapture.__slots__

    def __init__(self: Any, span, target, type, prompt) -> None:
        self.span = span
        self.target = target
        self.type = type
        self.prompt = prompt
        self.__class__ = nodes.RawCapture


class _Return(Node):
    __slots__ = nodes.Return.__slots__

    def __init__(self: Any, span, value) -> None:
        self.span = span
        self.value = value
        self.__class__ = nodes.Return


class _PythonStmt(Node):
    __slots__ = nodes.PythonStmt.__slots__

    def __init__(self: Any, span, code) -> None:
        self.span = span
        self.code = code
        self.__class__ = nodes.PythonStmt


class _PythonBlock(Node):
    __slots__ = nodes.PythonBlock.__slots__

    def __init__(self: Any, span, code) -> None:
        self.span = span
        self.code = code
        self.__class__ = nodes.PythonBlock


class _Condition(Node):
    __slots__ = nodes.Condition.__slots__

    def __init__(self: Any, span, code, claim) -> None:
        self.span = span
        self.code = code
        self.claim = claim
        self.__class__ = nodes.Condition


class _If(Node):
    __slots__ = nodes.If.__slots__

    def __init__(self: Any, span, condition, body, orelse, else_span) -> None:
        self.span = span
        self.condition = condition
        self.body = body
        self.orelse = orelse
        self.else_span = else_span
        self.__class__ = nodes.If


class _Loop(Node):
    __slots__ = nodes.Loop.__slots__

    def __init__(self: Any, span, condition, binder, iterable, body, map_body, map_span) -> None:
        self.span = span
        self.condition = condition
        self.binder = binder
        self.iterable = iterable
        self.body = body
        self.map_body = map_body
        self.map_span = map_span
        self.__class__ = nodes.Loop


class _Show(Node):
    __slots__ = nodes.Show.__slots__

    def __init__(self: Any, span, value) -> None:
        self.span = span
        self.value = value
        self.__class__ = nodes.Show


class _KeyValue(Node):
    __slots__ = nodes.KeyValue.__slots__

    def __init__(self: Any, span, key, value, code, items, item_codes, entries) -> None:
        self.span = span
        self.key = key
        self.value = value
        self.code = code
        self.items = items
        self.item_codes = item_codes
        self.entries = entries
        self.__class__ = nodes.KeyValue


class _Directive(Node):
    __slots__ = nodes.Directive.__slots__

    def __init__(
        self: Any,
        span,
        name,
        arg,
        binder,
        value,
        text,
        code,
        body_kind,
        settings,
        rows,
        names,
        members,
        body,
        docstring,
    ) -> None:
        self.span = span
        self.name = name
        self.arg = arg
        self.binder = binder
        self.value = value
        self.text = text
        self.code = code
        self.body_kind = body_kind
        self.settings = settings
        self.rows = rows
        self.names = names
        self.members = members
        self.body = body
        self.docstring = docstring
        self.__class__ = nodes.Directive


class _Case(Node):
    __slots__ = nodes.Case.__slots__

    def __init__(self: Any, span, name, body) -> None:
        self.span = span
        self.name = name
        self.body = body
        self.__class__ = nodes.Case


class _TestSuite(Node):
    __slots__ = nodes.TestSuite.__slots__

    def __init__(self: Any, span, name, cases, directives) -> None:
        self.span = span
        self.name = name
        self.cases = cases
        self.directives = directives
        self.__class__ = nodes.TestSuite


class _Dataset(Node):
    __slots__ = nodes.Dataset.__slots__

    def __init__(self: Any, span, kind, name, body) -> None:
        self.span = span
        self.kind = kind
        self.name = name
        self.body = body
        self.__class__ = nodes.Dataset


class _Metric(Node):
    __slots__ = nodes.Metric.__slots__

    def __init__(self: Any, span, name, dataset, body) -> None:
        self.span = span
        self.name = name
        self.dataset = dataset
        self.body = body
        self.__class__ = nodes.Metric


class _EvalSuite(Node):
    __slots__ = nodes.EvalSuite.__slots__

    def __init__(self: Any, span, name, datasets, metric, directives) -> None:
        self.span = span
        self.name = name
        self.datasets = datasets
        self.metric = metric
        self.directives = directives
        self.__class__ = nodes.EvalSuite


class _Module(Node):
    __slots__ = nodes.Module.__slots__

    def __init__(self: Any, span, path, source, prelude, body, lines) -> None:
        self.span = span
        self.path = path
        self.source = source
        self.prelude = prelude
        self.body = body
        self.lines = lines
        self.__class__ = nodes.Module


def _register() -> None:
    """Fill `TWINS` (each class here is named ``_`` + its node class's name), and give
    each class plain attribute stores (the node classes' frozen ``__setattr__`` and
    ``__delattr__`` undone: stores on their slots are then as fast as on any object)."""
    for name, cls in list(globals().items()):
        if name.startswith("_") and isinstance(cls, type) and hasattr(nodes, name[1:]):
            cls.__setattr__ = object.__setattr__  # type: ignore[method-assign,assignment]
            cls.__delattr__ = object.__delattr__  # type: ignore[method-assign,assignment]
            TWINS[getattr(nodes, name[1:])] = cls


_register()

#: The classes of `TWINS` (what a pickle of nodes names).
LOADERS = tuple(TWINS.values())
