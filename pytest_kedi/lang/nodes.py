"""The Kedi abstract syntax tree: frozen dataclasses, each carrying an exact `Span`.

Conventions
-----------
* Lines and columns are 1-based. ``end_line``/``end_col`` point one past the last
  character (exclusive), so ``source[span.start_offset:span.end_offset]`` is the
  exact text of the node (0-based character offsets into the whole source).
* Text (template rows, rendered returns/assignments, call arguments, instruction
  text) is a `Text`: a tuple of parts with escapes already resolved in `Literal`.
* Embedded Python is a `PyCode` that remembers where it came from, so the
  runtime can map Python line numbers back to `.kedi` lines.
* Types are kept as source text (`TypeRef`); the runtime resolves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal as _Lit

__all__ = [
    "Span",
    "Node",
    "PyCode",
    "TypeRef",
    "Literal",
    "Subst",
    "ExprSubst",
    "InlinePython",
    "CallSubst",
    "Arg",
    "OutputField",
    "Text",
    "TextPart",
    "Rhs",
    "Param",
    "Procedure",
    "FieldDecl",
    "TypeDecl",
    "Assign",
    "Reassign",
    "Template",
    "RawCapture",
    "Return",
    "PythonStmt",
    "PythonBlock",
    "Condition",
    "If",
    "Loop",
    "Show",
    "KeyValue",
    "Directive",
    "Case",
    "TestSuite",
    "Dataset",
    "Metric",
    "EvalSuite",
    "Stmt",
    "Module",
]


@dataclass(frozen=True, slots=True)
class Span:
    path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    start_offset: int
    end_offset: int

    def text(self, source: str) -> str:
        return source[self.start_offset : self.end_offset]


@dataclass(frozen=True, slots=True)
class Node:
    span: Span


# --------------------------------------------------------------------------- Python & types


@dataclass(frozen=True, slots=True)
class PyCode(Node):
    """Embedded Python.

    ``kind``: ``"expr"`` (a backtick expression), ``"stmt"`` (a backtick statement
    line) or ``"block"`` (a fence body, already dedented).
    ``line``/``col``: 1-based `.kedi` position of the first character of ``source``
    (for a fence: the first body line, col = the fence indentation + 1).
    Python line ``k`` (1-based) of ``source`` is `.kedi` line ``line + k - 1``.
    """

    source: str
    kind: _Lit["expr", "stmt", "block"]
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class TypeRef(Node):
    """A type annotation: direct (``list[str]``) or backtick (``backtick=True``)."""

    source: str
    backtick: bool = False


# --------------------------------------------------------------------------- text


@dataclass(frozen=True, slots=True)
class Literal(Node):
    value: str  # escapes resolved


@dataclass(frozen=True, slots=True)
class Subst(Node):
    """``<name>``."""

    name: str


@dataclass(frozen=True, slots=True)
class ExprSubst(Node):
    """``<`expr`>``."""

    code: PyCode


@dataclass(frozen=True, slots=True)
class InlinePython(Node):
    """A bare `` `expr` `` inside text."""

    code: PyCode


@dataclass(frozen=True, slots=True)
class Arg(Node):
    """One call argument (trimmed). Native when it is exactly one InlinePython,
    Subst, CallSubst or ExprSubst part; otherwise it renders to ``str``."""

    parts: tuple[TextPart, ...]


@dataclass(frozen=True, slots=True)
class CallSubst(Node):
    """``<proc(a, b)>`` (positional arguments only)."""

    callee: str
    args: tuple[Arg, ...]


@dataclass(frozen=True, slots=True)
class OutputField(Node):
    """``[name]``, ``[name: T]`` or ``[name: `T`]`` in a template row."""

    name: str
    type: TypeRef | None


TextPart = Literal | Subst | ExprSubst | InlinePython | CallSubst | OutputField


@dataclass(frozen=True, slots=True)
class Text(Node):
    """Text with substitutions. Whitespace at the text's ends is already trimmed."""

    parts: tuple[TextPart, ...]


@dataclass(frozen=True, slots=True)
class Rhs(Node):
    """Right-hand side of ``=``, ``:=``, a return or ``> show:``.

    ``mode``:
      * ``"expr"``   exactly one backtick expression → native (``code``)
      * ``"call"``   exactly one ``<proc(...)>`` → native (``call``)
      * ``"fence"``  ``=`` + fenced block whose ``return`` gives the value (``code``)
      * ``"text"``   anything else → rendered ``str`` (``text``)
    """

    mode: _Lit["expr", "call", "fence", "text"]
    text: Text | None = None
    code: PyCode | None = None
    call: CallSubst | None = None


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class Param(Node):
    name: str
    type: TypeRef | None
    default: PyCode | None  # a one-line backtick expression


@dataclass(frozen=True, slots=True)
class Procedure(Node):
    name: str
    params: tuple[Param, ...]
    return_type: TypeRef | None
    body: tuple[Stmt, ...]
    docstring: str | None
    header_line: int  # line of the ``@name(`` token

    @property
    def is_auto(self) -> bool:
        """Its body holds ``> auto:`` (its code comes from ``prog.cache.kedi``, if at all)."""
        return any(isinstance(s, Directive) and s.name == "auto" for s in self.body)


@dataclass(frozen=True, slots=True)
class FieldDecl(Node):
    name: str
    type: TypeRef | None
    default: PyCode | None


@dataclass(frozen=True, slots=True)
class TypeDecl(Node):
    name: str
    fields: tuple[FieldDecl, ...]


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Assign(Node):
    """``[x] = rhs`` / ``[x: T] = rhs``."""

    target: str
    type: TypeRef | None
    value: Rhs


@dataclass(frozen=True, slots=True)
class Reassign(Node):
    """``[x] := rhs``."""

    target: str
    value: Rhs


@dataclass(frozen=True, slots=True)
class Template(Node):
    """A ``>>`` block (or, ``bare=True``, legacy bare rows in optimize/auto)."""

    rows: tuple[Text, ...]
    bare: bool = False

    @property
    def outputs(self) -> tuple[OutputField, ...]:
        return tuple(p for r in self.rows for p in r.parts if isinstance(p, OutputField))


@dataclass(frozen=True, slots=True)
class RawCapture(Node):
    """``[x] << prompt`` / ``[x: str] << prompt`` / ``[x: `T`] << prompt``."""

    target: str
    type: TypeRef | None
    prompt: Text


@dataclass(frozen=True, slots=True)
class Return(Node):
    value: Rhs


@dataclass(frozen=True, slots=True)
class PythonStmt(Node):
    """A line that is only `` `stmt` ``."""

    code: PyCode


@dataclass(frozen=True, slots=True)
class PythonBlock(Node):
    """A standalone fence (statements; a ``return`` value is ignored)."""

    code: PyCode


@dataclass(frozen=True, slots=True)
class Condition(Node):
    """Deterministic (``code``: one backtick expression) or a model-judged claim (``claim``)."""

    code: PyCode | None
    claim: Text | None


@dataclass(frozen=True, slots=True)
class If(Node):
    condition: Condition
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] | None
    else_span: Span | None = None


@dataclass(frozen=True, slots=True)
class Loop(Node):
    """``> loop: cond`` (``condition``) or ``> loop [x]: `expr`:`` (``binder``, ``iterable``)."""

    condition: Condition | None
    binder: str | None
    iterable: PyCode | None
    body: tuple[Stmt, ...]
    map_body: tuple[Stmt, ...] | None = None
    map_span: Span | None = None


@dataclass(frozen=True, slots=True)
class Show(Node):
    value: Rhs


@dataclass(frozen=True, slots=True)
class KeyValue(Node):
    """``key: value`` in a directive body: ``value`` plain text or backtick ``code``; ``items``
    an indented list (backtick items' code in ``item_codes``); ``entries`` nested lines."""

    key: str
    value: str | None
    code: PyCode | None = None
    items: tuple[str, ...] = ()
    item_codes: tuple[PyCode | None, ...] = ()
    entries: tuple[KeyValue, ...] = ()


@dataclass(frozen=True, slots=True)
class Directive(Node):
    """Any ``> name: ...`` directive not modelled by a dedicated node.

    ``name``   directive name as written (``system`` stays ``system``).
    ``arg``    the name between ``name:`` and a trailing ``:`` (``> optimize: span:``,
               ``> profile: p:``, ``> import: m:``, ``> task [h]: child:``).
    ``binder`` ``[h]`` of ``> task [h]:`` / ``> await [r]:``.
    ``value``  inline plain value (text after ``name:``), escapes resolved; ``text``
               is the same value parsed as Text when the directive takes text
               (instructions/system); ``code`` when the inline value is a backtick.
    ``body_kind`` one of ``none | settings | text | names | members | statements``.
    ``settings`` key/value lines; ``rows`` text rows; ``names`` list items;
    ``members`` nested directives (profiles); ``body`` statements (optimize, auto
    legacy ``>>``, task/send/interrupt, task_group, process).
    """

    name: str
    arg: str | None = None
    binder: str | None = None
    value: str | None = None
    text: Text | None = None
    code: PyCode | None = None
    body_kind: _Lit["none", "settings", "text", "names", "members", "statements"] = "none"
    settings: tuple[KeyValue, ...] = ()
    rows: tuple[Text, ...] = ()
    names: tuple[str, ...] = ()
    members: tuple[Directive, ...] = ()
    body: tuple[Stmt, ...] = ()
    docstring: str | None = None


# --------------------------------------------------------------------------- suites


@dataclass(frozen=True, slots=True)
class Case(Node):
    """``> case: label:`` whose body is Python only (statement lines and fences)."""

    name: str
    body: tuple[PythonStmt | PythonBlock, ...]


@dataclass(frozen=True, slots=True)
class TestSuite(Node):
    __test__ = False  # not a pytest test class

    name: str
    cases: tuple[Case, ...]
    directives: tuple[Directive, ...] = ()


@dataclass(frozen=True, slots=True)
class Dataset(Node):
    kind: _Lit["data", "test_data"]
    name: str
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Metric(Node):
    """``> metric: m(dataset):``; ``dataset`` is ``None`` for the legacy ``m:`` / ``m():``."""

    name: str
    dataset: str | None
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class EvalSuite(Node):
    name: str
    datasets: tuple[Dataset, ...]
    metric: Metric | None
    directives: tuple[Directive, ...] = ()


Stmt = (
    Procedure
    | TypeDecl
    | Assign
    | Reassign
    | Template
    | RawCapture
    | Return
    | PythonStmt
    | PythonBlock
    | If
    | Loop
    | Show
    | Directive
    | TestSuite
    | EvalSuite
)


@dataclass(frozen=True, slots=True)
class Module(Node):
    """A parsed file. ``prelude`` is the leading top-level fence, if any (it is
    *not* repeated in ``body``). ``lines`` are the source lines without endings
    (for snippets/carets)."""

    path: str
    source: str
    prelude: PythonBlock | None
    body: tuple[Stmt, ...]
    lines: tuple[str, ...] = field(repr=False, default=())

    @property
    def eval_suites(self) -> tuple[EvalSuite, ...]:
        return tuple(s for s in self.body if isinstance(s, EvalSuite))

    @property
    def test_suites(self) -> tuple[TestSuite, ...]:
        return tuple(s for s in self.body if isinstance(s, TestSuite))

    @property
    def procedures(self) -> tuple[Procedure, ...]:
        return tuple(s for s in self.body if isinstance(s, Procedure))
