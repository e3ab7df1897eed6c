"""One test per statement form (docs/language.md#statements): the AST the parser
builds."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang import parse

from .conftest import error_of


def only(source: str) -> n.Stmt:
    module = parse(source)
    assert len(module.body) == 1, module.body
    return module.body[0]


@pytest.mark.parametrize(
    ("body", "doc"),
    [
        ("      first, indented\n    second\n", "  first, indented\nsecond"),
        ("\n    one\n      two\n\n    three\n\n", "one\n  two\n\nthree"),
        ("\t\tfirst\n            second\n", "first\n    second"),
    ],
)
def test_docstring_keeps_each_line_relative_indentation(body: str, doc: str) -> None:
    # dedented by the lines' common indentation (a tab is four columns): the first line
    # keeps its indentation relative to the others, as a user wrote it
    proc = only(f"@f() -> str:\n  ###\n{body}  ###\n  = `'x'`\n")
    assert isinstance(proc, n.Procedure) and proc.docstring == doc


def test_default_path_is_string_marker() -> None:
    assert parse("[x] = a").path == "<string>"
    assert parse("[x] = a").body[0].span.path == "<string>"


def test_procedure_with_params_defaults_annotations_and_docstring() -> None:
    src = (
        "@clamp(value: float, f: `list[int]`, low: float = `0.0`, high = `1.0`) -> float:\n"
        "  ###\n  Restrict value.\n  ###\n"
        "  = `max(low, min(high, value))`\n"
    )
    proc = only(src)
    assert isinstance(proc, n.Procedure)
    assert proc.name == "clamp" and proc.docstring == "Restrict value."
    assert [p.name for p in proc.params] == ["value", "f", "low", "high"]
    value, f, low, high = proc.params
    assert value.type is not None and value.type.source == "float" and value.default is None
    assert low.default is not None and low.default.source == "0.0"
    assert high.type is None and high.default is not None
    assert f.type is not None and f.type.backtick and f.type.source == "list[int]"
    assert proc.return_type is not None and proc.return_type.source == "float"
    assert proc.header_line == 1
    ret = proc.body[0]
    assert isinstance(ret, n.Return) and ret.value.mode == "expr"


def test_multiline_signature_with_comments_and_empty_body() -> None:
    src = '@fmt(\n  count: int,  # how many\n  label: str = `"x"`,\n) -> str:\n[y] = z\n'
    module = parse(src)
    proc, assign = module.body
    assert isinstance(proc, n.Procedure) and proc.body == ()
    assert [p.name for p in proc.params] == ["count", "label"]
    assert isinstance(assign, n.Assign)


def test_nested_procedures_and_types() -> None:
    proc = only("@outer(x):\n  ~Inner(a: int)\n  @inner() -> int:\n    = `1`\n  = <inner()>\n")
    assert isinstance(proc, n.Procedure)
    assert [type(s) for s in proc.body] == [n.TypeDecl, n.Procedure, n.Return]
    ret = proc.body[2]
    assert isinstance(ret, n.Return) and ret.value.mode == "call"
    assert ret.value.call is not None and ret.value.call.callee == "inner"


def test_custom_type_multiline_with_annotated() -> None:
    src = (
        "~Shipment(\n  sku: str,\n  note,\n"
        '  qty: Annotated[int, "count"] = `1`,\n  tags: list[str] = `[]`\n)\n'
    )
    decl = only(src)
    assert isinstance(decl, n.TypeDecl) and decl.name == "Shipment"
    assert [(f.name, f.type.source if f.type else None) for f in decl.fields] == [
        ("sku", "str"),
        ("note", None),
        ("qty", 'Annotated[int, "count"]'),
        ("tags", "list[str]"),
    ]
    assert decl.span.end_line == 6


def test_assignment_modes() -> None:
    module = parse(
        "[a] = `1`\n[b: int] = <f(`2`)>\n[c] = hello <a>\n[d] = <a>\n[e] = ```\nreturn 3\n```\n"
    )
    modes = [s.value.mode for s in module.body if isinstance(s, n.Assign)]
    assert modes == ["expr", "call", "text", "text", "fence"]
    fence = module.body[4]
    assert isinstance(fence, n.Assign) and fence.value.code is not None
    assert fence.value.code.source == "return 3" and fence.value.code.line == 6
    typed = module.body[1]
    assert isinstance(typed, n.Assign) and typed.type is not None and typed.type.source == "int"


def test_fenced_rhs_is_dedented_by_statement_indentation() -> None:
    proc = only("@p() -> int:\n  [v: int] = ```\n  x = 1\n  return x\n  ```\n  = `v`\n")
    assert isinstance(proc, n.Procedure)
    assign = proc.body[0]
    assert isinstance(assign, n.Assign) and assign.value.code is not None
    assert assign.value.code.source == "x = 1\nreturn x"
    assert assign.value.code.col == 3


def test_multiline_backtick_expression() -> None:
    stmt = only("[xs: list[int]] = `[\n  1,\n  2,\n]`\n")
    assert isinstance(stmt, n.Assign) and stmt.value.mode == "expr"
    assert stmt.value.code is not None and stmt.value.code.source == "[\n  1,\n  2,\n]"


def test_reassign_and_raw_capture() -> None:
    module = parse("[n: int] = `0`\n[n] := `n + 1`\n[r] << Tell me about <n>\n[s: str] << Hi\n")
    _, re, cap, cap2 = module.body
    assert isinstance(re, n.Reassign) and re.target == "n" and re.value.mode == "expr"
    assert isinstance(cap, n.RawCapture) and cap.type is None
    assert [type(p) for p in cap.prompt.parts] == [n.Literal, n.Subst]
    assert isinstance(cap2, n.RawCapture) and cap2.type is not None


@pytest.mark.parametrize("spelled", ['"str"', "'str'"])
def test_a_raw_capture_may_spell_str_as_a_forward_reference(spelled: str) -> None:
    """A quoted annotation names the type it quotes (docs/language.md#types): `[x: "str"] << hi`
    was the parse error for a type other than str."""
    (cap,) = parse(f"[s: {spelled}] << Hi\n").body
    assert isinstance(cap, n.RawCapture) and cap.type is not None and cap.type.source == spelled


def test_template_block_rows_and_outputs() -> None:
    src = (
        ">> Bug report: <report>\n"
        "Component: [component: str].\n"
        "Hotfix: [hotfix: bool], owner [owner], kind [kind: `Kind`].\n"
        "\n"
        ">> Second block\n"
    )
    module = parse(src)
    first, second = module.body
    assert isinstance(first, n.Template) and isinstance(second, n.Template)
    assert len(first.rows) == 3 and not first.bare
    outs = [
        (o.name, o.type.source if o.type else None, o.type.backtick if o.type else None)
        for o in first.outputs
    ]
    assert outs == [
        ("component", "str", False),
        ("hotfix", "bool", False),
        ("owner", None, None),
        ("kind", "Kind", True),
    ]
    assert first.span.end_line == 3


def test_comment_line_does_not_end_template_run() -> None:
    tpl = only(">> a [x]\n# note\nb [y]\n")
    assert isinstance(tpl, n.Template) and len(tpl.rows) == 2


def test_annotated_output_field() -> None:
    tpl = only('>> Code: [code: Annotated[str, "ISO code, 2 letters"]].\n')
    assert isinstance(tpl, n.Template)
    (field,) = tpl.outputs
    assert field.type is not None and field.type.source == 'Annotated[str, "ISO code, 2 letters"]'


def test_returns_text_native_call_fence_and_continuation() -> None:
    module = parse(
        "@a():\n  = `1`\n@b():\n  = <a()>\n@c():\n  = ```\n  return 2\n  ```\n"
        "@d():\n  = A \\\n    B\n"
    )
    modes = []
    for proc in module.body:
        assert isinstance(proc, n.Procedure)
        ret = proc.body[0]
        assert isinstance(ret, n.Return)
        modes.append(ret.value.mode)
    assert modes == ["expr", "call", "fence", "text"]
    last = module.body[3]
    assert isinstance(last, n.Procedure)
    ret = last.body[0]
    assert isinstance(ret, n.Return) and ret.value.text is not None
    assert [p.value for p in ret.value.text.parts if isinstance(p, n.Literal)] == ["A B"]
    assert ret.span.end_line == 11


def test_python_statement_and_blocks_and_prelude() -> None:
    module = parse("# header comment\n```\nimport math\n```\n`x = 1`\n```\ny = 2\n```\n")
    assert module.prelude is not None and module.prelude.code.source == "import math"
    assert module.prelude.code.line == 3
    stmt, block = module.body
    assert isinstance(stmt, n.PythonStmt) and stmt.code.kind == "stmt"
    assert stmt.code.source == "x = 1"
    assert isinstance(block, n.PythonBlock) and block.code.source == "y = 2"


def test_indented_fence_and_crlf() -> None:
    proc = only("@p():\r\n  ```\r\n  a = 1\r\n    b = 2\r\n  ```\r\n")
    assert isinstance(proc, n.Procedure)
    block = proc.body[0]
    assert isinstance(block, n.PythonBlock) and block.code.source == "a = 1\n  b = 2"


def test_tabs_count_as_four() -> None:
    proc = only("@p():\n\t[a] = x\n    [b] = y\n")
    assert isinstance(proc, n.Procedure) and len(proc.body) == 2


@pytest.mark.parametrize(
    ("line", "dedented"),
    [
        ("\ttotal += 10", "  total += 10"),  # a tab is four columns: two stay, as spaces
        ("\t\ttotal += 10", "  \ttotal += 10"),
        (" \ttotal += 10", "   total += 10"),
        ("\t", "  "),
    ],
)
def test_a_tab_across_a_fences_indentation_keeps_its_other_columns(
    line: str, dedented: str
) -> None:
    """In a fence indented two spaces, a line starting with a tab lost the whole tab (four
    columns): ``total += 10`` left its ``for`` loop, and the program gave a wrong result."""
    source = f"@p():\n  ```\n  for i in range(3):\n    total += 1\n{line}\n  ```\n"
    proc = only(source)
    assert isinstance(proc, n.Procedure)
    block = proc.body[0]
    assert isinstance(block, n.PythonBlock)
    assert block.code.source == f"for i in range(3):\n  total += 1\n{dedented}"


def test_block_comment_elsewhere_is_ignored() -> None:
    module = parse("[a] = x\n###\nanything <here\n###\n[b] = y\n")
    assert len(module.body) == 2


def test_test_suite_and_cases() -> None:
    src = (
        "@test: initials:\n  > model: test\n  > case: two:\n    `assert 1`\n"
        "  > case: block:\n    ```\n    assert 2\n    ```\n    `assert 3`\n"
    )
    suite = only(src)
    assert isinstance(suite, n.TestSuite) and suite.name == "initials"
    assert [c.name for c in suite.cases] == ["two", "block"]
    assert [type(s) for s in suite.cases[1].body] == [n.PythonBlock, n.PythonStmt]
    assert [d.name for d in suite.directives] == ["model"]


def test_eval_suite() -> None:
    src = (
        "@eval: initials:\n  > data: people:\n    = ```\n    return [1]\n    ```\n"
        "  > test_data: people:\n    = `[2]`\n  > metric: exact(people):\n    [x] = `1`\n"
        "    = `x == expected`\n"
    )
    suite = only(src)
    assert isinstance(suite, n.EvalSuite)
    assert [(d.kind, d.name) for d in suite.datasets] == [
        ("data", "people"),
        ("test_data", "people"),
    ]
    assert suite.metric is not None and suite.metric.name == "exact"
    assert suite.metric.dataset == "people" and len(suite.metric.body) == 2


def test_legacy_metric_forms() -> None:
    for head in ("m", "m()"):
        suite = only(f"@eval: s:\n  > metric: {head}:\n    = `1.0`\n")
        assert isinstance(suite, n.EvalSuite) and suite.metric is not None
        assert suite.metric.dataset is None


def test_spacing_inside_headers_is_ignored() -> None:
    module = parse("[ x ] = a\n>loop [ i ]: `range(2)`:\n  `pass`\n")
    assign, loop = module.body
    assert isinstance(assign, n.Assign) and assign.target == "x"
    assert isinstance(loop, n.Loop) and loop.binder == "i"


@pytest.mark.parametrize("head", ["@tst: ratio:", "@Test: t:", "@evals: e", "@ tests : t :"])
def test_a_misspelled_suite_header_names_the_suite_kinds(head: str) -> None:
    # It read as a procedure header written as prose: "write '\@' for a literal '@'".
    d = error_of(f"{head}\n  > case: c:\n    `assert True`\n")
    kind = head.split(":")[0].replace(" ", "")
    assert d.message == (
        f"unknown suite kind '{kind}:': a suite header is '@test: name:' or '@eval: name:' "
        "(a procedure header is '@name(params):')"
    )
    assert (d.line, d.column) == (1, 1)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("@f:\n  = a\n", "unexpected ':' in procedure header; expected '('"),
        ("@note: deploy at 5\n", "a line starting with '@' is a procedure header"),
    ],
)
def test_other_lines_starting_with_an_at_sign_keep_their_messages(
    source: str, message: str
) -> None:
    assert error_of(source).message.startswith(message)


def test_a_raw_capture_with_an_indented_row_says_its_prompt_is_one_line() -> None:
    # It was called an assignment, and nothing said why the row could not continue it.
    d = error_of("@f() -> str:\n  [x] << Summarize\n    the report.\n  = <x>\n")
    assert d.message == (
        "unexpected indentation: a raw capture (its prompt is one line) takes no indented body"
    )
    assert (d.line, d.column) == (3, 5)


@pytest.mark.parametrize(
    ("source", "column", "kind"),
    [
        # "missing name ...: expected a name here" at the ')', the '[' unmentioned
        ('~T(a: Literal["x",)\n', 14, "custom type header"),
        ("@f(x: dict[str,) -> str:\n  = a\n", 11, "procedure header"),
    ],
)
def test_a_type_subscript_left_open_before_a_closing_parenthesis_is_named(
    source: str, column: int, kind: str
) -> None:
    d = error_of(source)
    assert d.message == f"unbalanced '[' in {kind}: missing ']'"
    assert (d.line, d.column) == (1, column)
    assert error_of("@f(,) -> str:\n  = a\n").message.startswith("missing name")
