"""Every static error (docs/language.md parse errors): its own message, line and column."""

from __future__ import annotations

import re

import pytest

from pytest_kedi.lang import Diagnostic, KediParseError, check_python, parse, parse_file

from .conftest import error_of

CASES = [
    pytest.param(
        "@eval: s:\n  > data: d:\n    = `[1]`\n  > metric: a(d):\n    = `1`\n"
        "  > metric: b(d):\n    = `1`\n",
        6,
        3,
        "an '@eval:' suite has exactly one '> metric:'",
        id="two_metrics",
    ),
    pytest.param(
        "@test: s:\n  > case: a:\n    `pass`\n  > case: a:\n    `pass`\n",
        4,
        11,
        "duplicate case name 'a' in suite",
        id="dup_case",
    ),
    pytest.param("@f(a, b, a):\n  = x\n", 1, 10, "duplicate parameter 'a'", id="dup_param"),
    pytest.param(
        "@g(a):\n  = <a>\n>> Classify <g([label])>\n= <label>\n",
        3,
        16,
        "an unescaped '[' in a call argument opens an output field",
        id="field_in_call_argument",
    ),
    pytest.param(
        "@g() -> str:\n  = G\n> instructions: Value <g()>\n= x\n",
        3,
        23,
        "'> instructions:' text takes literals, <name> and Python, not a procedure call",
        id="call_in_instructions",
    ),
    pytest.param(
        "@g() -> str:\n  = G\n> system:\n  Be brief.\n  Value <g()>\n= x\n",
        5,
        9,
        "'> instructions:' (written '> system:', its legacy spelling) text takes literals, "
        "<name> and Python, not a procedure call",
        id="call_in_system_block",
    ),
    pytest.param(  # diagnostics of the legacy spelling name `> instructions:` (and it)
        "> system: be [x]\n",
        1,
        14,
        "output fields are not allowed in '> instructions:' (written '> system:', its legacy",
        id="output_field_in_system",
    ),
    pytest.param(
        "> system:\n= x\n",
        1,
        1,
        "'> instructions:' (written '> system:', its legacy spelling) needs an indented body",
        id="system_without_body",
    ),
    pytest.param(
        "@f() -> int:\n  = ```\n  return 3\n```\n= x\n",
        4,
        1,
        "a closing fence must be indented as its opening line (2 columns, not 0)",
        id="fence_closed_left_of_its_opener",
    ),
    pytest.param(
        "@f():\n  ```\n  x = 1\n    ```\n  = x\n",
        4,
        5,
        "a closing fence must be indented as its opening line (2 columns, not 4)",
        id="fence_closed_right_of_its_opener",
    ),
    pytest.param(
        "@f(a = `1`, b):\n  = x\n",
        1,
        13,
        "required parameter 'b' follows a parameter wi",
        id="req_after_default",
    ),
    pytest.param("~T(a: int, a: str)\n", 1, 12, "duplicate field 'a'", id="dup_field"),
    pytest.param(
        "~T(a = `1`)\n", 1, 4, "untyped field 'a' cannot have a default: add ", id="untyped_default"
    ),
    pytest.param(
        "> frobnicate: yes\n", 1, 3, "unknown directive '> frobnicate:'", id="unknown_directive"
    ),
    pytest.param(
        "@f():\n  hello there\n", 2, 3, "template text must start with '>>'", id="bare_row"
    ),
    pytest.param(
        "[x] = a \\q b\n", 1, 9, "unsupported escape '\\q': in text, '\\' escapes", id="bad_escape"
    ),
    pytest.param(
        "[x] = a <b\n", 1, 9, "unbalanced '<': the substitution is never clo", id="unbalanced_lt"
    ),
    pytest.param(
        ">> a [b\n", 1, 6, "unbalanced '[': the output field is never clo", id="unbalanced_lsqb"
    ),
    pytest.param(
        "[x] = a `b\n", 1, 9, "unbalanced backtick: inline Python must be cl", id="unbalanced_bt"
    ),
    pytest.param(
        # a closed backtick in a bracket was "unbalanced backtick" (the `[` is at fault)
        ">> see [`1+1`] here\n",
        1,
        8,
        "an output field must be [name], [name: Type] or",
        id="backtick_in_bracket",
    ),
    pytest.param(
        "[x] = <a.b>\n", 1, 7, "a substitution must be <name>, <proc(args)> o", id="bad_subst"
    ),
    pytest.param(
        "[a] = x\n```\nx = 1\n",
        2,
        1,
        "unterminated fence: no closing ``` line was f",
        id="unterminated_fence",
    ),
    pytest.param(
        "@f():\n  [a] = ```\n  return 1\n",
        2,
        9,
        "unterminated fence: no closing ``` line was f",
        id="unterminated_fence_rhs",
    ),
    pytest.param(
        "[a] = x\n  ###\nfoo\n",
        2,
        3,
        "unterminated `###` block comment: no closing ",
        id="unterminated_doc",
    ),
    pytest.param(
        "@1f():\n  = x\n", 1, 2, "invalid name '1f' in procedure header: names ", id="invalid_ident"
    ),
    pytest.param(
        "[class] = x\n", 1, 2, "invalid target name 'class': it is a Python k", id="keyword_ident"
    ),
    pytest.param(
        "[args] = x\n", 1, 2, "'args' is reserved for command-line arguments", id="assign_args"
    ),
    pytest.param(
        "[x] << tell me [y]\n",
        1,
        16,
        "output fields are not allowed in a raw captur",
        id="raw_fields",
    ),
    pytest.param(
        "[x: int] << tell me\n",
        1,
        5,
        "a raw capture '<<' binds the whole reply as s",
        id="raw_type",
    ),
    pytest.param(
        ">> a [x] b [x: int]\n",
        1,
        12,
        "duplicate output field 'x' in this template b",
        id="dup_output",
    ),
    pytest.param(
        "@f():\n  > profile: p:\n    > model: x\n",
        2,
        3,
        "'> profile:' is allowed only at top level",
        id="profile_nested",
    ),
    pytest.param(
        "> case: a:\n  `pass`\n",
        1,
        1,
        "'> case:' belongs directly inside an '@test:'",
        id="case_outside",
    ),
    pytest.param(
        "[x: int] := `1`\n",
        1,
        5,
        "'[x: T] :=' is not allowed: ':=' keeps the ow",
        id="typed_reassign",
    ),
    pytest.param(
        "> else:\n  = x\n", 1, 1, "'> else:' must directly follow the body of a ", id="orphan_else"
    ),
    pytest.param(
        "> loop: `True`:\n  `pass`\n> else:\n  `pass`\n",
        3,
        1,
        "'> else:' must directly follow the body of a ",
        id="else_after_loop",
    ),
    pytest.param(
        "> map:\n  `pass`\n", 1, 1, "'> map:' must directly follow the body of an ", id="orphan_map"
    ),
    pytest.param(
        "> loop: `x`:\n  `pass`\n> map:\n  `pass`\n",
        3,
        1,
        "'> map:' must directly follow the body of an ",
        id="map_after_cond_loop",
    ),
    pytest.param(
        "@f():\n  = a\n  [b] = c\n",
        3,
        3,
        "unreachable statement: it follows a '=' retur",
        id="dead_code",
    ),
    pytest.param(
        "> hooks:\n  on_start: `h`\n",
        2,
        3,
        "unknown hook event 'on_start'; expected one o",
        id="hook_event",
    ),
    pytest.param(
        "> budget:\n  tokens: 5\n",
        2,
        3,
        "unknown key 'tokens' in '> budget:'; expected",
        id="budget_key",
    ),
    pytest.param(
        "> budget:\n  request_limit: -1\n",
        2,
        18,  # at the value
        "budget 'request_limit' must be a nonnegative ",
        id="budget_value",
    ),
    pytest.param(
        "> requires: telepathy\n",
        1,
        13,
        "unknown capability 'telepathy' in '> requires",
        id="requires_cap",
    ),
    pytest.param(
        "@f():\n  > tool:\n    risk: yolo\n  = x\n",
        3,
        11,  # at the value
        "invalid tool risk 'yolo'; expected read_only,",
        id="tool_risk",
    ),
    pytest.param(
        "@f():\n  > tool:\n    name: a\n  > tool:\n    name: b\n  = x\n",
        4,
        3,
        "a procedure has at most one '> tool:'",
        id="tool_twice",
    ),
    pytest.param(
        "@f():\n  [a] = b\n  > tool:\n    name: a\n  = x\n",
        3,
        3,
        "'> tool:' must come before the procedure's ex",
        id="tool_after_exec",
    ),
    pytest.param(
        "> effort: extreme\n", 1, 11, "invalid value 'extreme' for '> effort:'; expe", id="effort"
    ),
    pytest.param(
        "> approval: edit\n", 1, 13, "invalid value 'edit' for '> approval:'; expec", id="approval"
    ),
    pytest.param(
        "> artifacts: banana\n",
        1,
        14,
        "invalid value 'banana' for '> artifacts:'; expected one of enabled, disabled",
        id="artifacts",
    ),
    pytest.param(
        "> agent: pydantic\n",
        1,
        10,
        "'> agent: pydantic' names a framework; use '>",
        id="agent_framework",
    ),
    pytest.param("@eval: score\n", 1, 13, "suite header must end with ':'", id="suite_colon"),
    pytest.param("@f(a)\n  = x\n", 1, 6, "procedure header must end with ':'", id="proc_colon"),
    pytest.param(
        "[a] = b\n  [c] = d\n",
        2,
        3,
        "unexpected indentation: an assignment takes n",
        id="stray_indent",
    ),
    pytest.param(
        "@f():\n    [a] = b\n  [c] = d\n",
        3,
        3,
        "unexpected dedent: this indentation matches n",
        id="bad_dedent",
    ),
    pytest.param(
        "> if: <x>:\n  `pass`\n",
        1,
        6,
        "a '> if:' header ending in ':' must be exactl",
        id="claim_colon",
    ),
    pytest.param(
        "@f(a = ```):\n  = x\n",
        1,
        8,
        "a parameter default must be a one-line backti",
        id="fenced_default",
    ),
    pytest.param(
        "> profile: p:\n  > max_agents: 0\n",
        2,
        17,
        "'> max_agents:' must be an integer greater th",
        id="max_agents",
    ),
    pytest.param(
        "> show: [x]\n", 1, 9, "output fields ([name]) are only allowed in '>", id="show_field"
    ),
    pytest.param(
        "> task_group:\n  > await [r]: h\n  > process:\n    = x\n",
        4,
        5,
        "a '> process:' body cannot contain a '=' retu",
        id="process_return",
    ),
    pytest.param(
        ">> a \\\n", 1, 6, "a trailing '\\' continues only rendered '=' re", id="trailing_backslash"
    ),
    pytest.param(
        "@f(p):\n  [p] = x\n",
        2,
        4,
        "parameter 'p' is read-only and cannot be assi",
        id="param_assign",
    ),
    pytest.param(
        "> task [h]: c:\n  >> a\n  >> b\n",
        3,
        3,
        "a '> task:' body must be exactly one '>>' tem",
        id="task_two",
    ),
    pytest.param(
        "> send: h:\n  >> a [x]\n",
        2,
        8,
        "output fields are not allowed in a '> send:' ",
        id="send_fields",
    ),
    pytest.param(
        "> import: ../x\n", 1, 11, "invalid import path '../x': segments must be ", id="import_path"
    ),
    pytest.param(
        "> subagent: x\n", 1, 1, "'> subagent:' is allowed only as a '> profile", id="subagent_top"
    ),
    pytest.param(
        "> optimize: s:\n  >> a\n",
        1,
        1,
        "'> optimize:' is allowed only directly in a p",
        id="optimize_top",
    ),
]


@pytest.mark.parametrize(("source", "line", "column", "message"), CASES)
def test_static_error(source: str, line: int, column: int, message: str) -> None:
    diag = error_of(source)
    assert diag.message.startswith(message)
    assert (diag.line, diag.column) == (line, column)
    assert diag.path == "t.kedi"
    assert diag.source_line == source.splitlines()[line - 1]


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("[x]: int = `1`\n", "(a binding's type goes inside its brackets: '[x: int] = ...')"),
        (
            "@f():\n  [n]: str << hi\n",
            "(a binding's type goes inside its brackets: '[n: str] << ...')",
        ),
    ],
)
def test_a_type_after_the_brackets_says_where_it_goes(source: str, says: str) -> None:
    """``[x]: int = 1`` (a Python-style annotation) said only "template text must start
    with '>>'", no hint of the binding it almost is."""
    diag = error_of(source)
    assert diag.message == "template text must start with '>>' " + says


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("= A \\\n\n  B\n", "but the next line is blank"),
        ("= A \\\n   \n", "but the next line is blank"),
        ("@f():\n  = A \\\n\n  = B\n", "but the next line is blank"),
        ("= A \\\n", "but no line follows"),
        ("= A \\\n  # only a comment\n", "but no line follows"),
        ("= A \\\n# a comment\n\n  B\n", "but the next line is blank"),
        ("= A \\", "but no line follows"),
    ],
)
def test_a_continued_return_names_what_follows_it(source: str, says: str) -> None:
    # A blank line after a trailing '\\' is not "no line follows" (the file goes on).
    diag = error_of(source)
    assert diag.message.startswith("a trailing '\\' continues the return"), diag.message
    assert says in diag.message, diag.message
    assert diag.line == source.count("\n", 0, source.index("\\")) + 1


def test_messages_are_distinct() -> None:
    messages = {error_of(str(c.values[0])).message for c in CASES}
    assert len(messages) >= len(CASES) - 8


def test_rendering_matches_kedi() -> None:
    with pytest.raises(KediParseError) as info:
        parse("@eval: score\n", "suite.kedi")
    text = str(info.value)
    assert text.startswith("Kedi parse error:")
    assert 'File "suite.kedi", line 1, column 1' in text
    assert "@eval: score" in text and "suite header must end with ':'" in text
    assert "lark" not in text.lower() and "Traceback" not in text


def test_unexpected_token_names_kedi_terms() -> None:
    diag = error_of("@f(a: list[str) -> str:\n  = x\n")
    assert "lark" not in diag.message.lower() and "_" not in diag.message.split("expected")[-1]


EXTRA = [
    pytest.param("```python\nx = 1\n```\n", 1, 1, "a fence is ``` alone", id="fence_tag"),
    pytest.param(
        "> loop [x: int]: `xs`:\n  `pass`\n", 1, 9, "a loop binder is one name", id="typed_binder"
    ),
    pytest.param("> else: x\n", 1, 8, "'> else:' takes nothing", id="else_value"),
    pytest.param("> settings:\n  just text\n", 2, 3, "malformed setting", id="settings_shape"),
    pytest.param(
        "> settings: temperature\n",
        1,
        13,
        "'> settings:' takes 'key: value' lines",
        id="settings_plain_value",
    ),
    pytest.param(
        "> export: a b\n", 1, 11, "invalid name in the 'export' list 'a b'", id="export_inline"
    ),
    pytest.param(
        "> export: a, class\n",
        1,
        14,
        "invalid name in the 'export' list 'class'",
        id="export_inline_keyword",
    ),
    pytest.param(
        "> profile: p:\n  [x] = y\n", 2, 3, "a '> profile:' body holds only", id="profile_shape"
    ),
    pytest.param(
        "> show: ```\nx\n```\n", 1, 9, "'> show:' takes a one-line value", id="show_fence"
    ),
    pytest.param("> model: a \\q\n", 1, 12, "unsupported escape", id="directive_escape"),
    # a quoted settings value is a Python string, its escapes Python's (it was read with
    # Kedi's escapes first, then Python's: `"\\s"` passed, `"a\\\\nb"` became a line break)
    pytest.param(
        '> settings:\n  extra_body: "a\\sb"\n',
        2,
        15,
        "invalid escape sequence '\\s' in a quoted value (a Python string)",
        id="settings_python_escape",
    ),
    pytest.param(
        "> settings:\n  stop_sequences:\n    - '\\x1'\n",
        3,
        7,
        "truncated \\xXX escape in a quoted value (a Python string)",
        id="settings_row_python_escape",
    ),
    pytest.param(
        "> adapter: pydantic\n> agent: codex\n",
        2,
        1,
        "'> adapter:' and '> agent:'",
        id="adapter_and_agent",
    ),
    pytest.param(
        "@f():\n  > optimize: s:\n    >> a\n  > optimize: s:\n    >> b\n  = x\n",
        4,
        3,
        "duplicate '> optimize:' span name",
        id="dup_span",
    ),
    pytest.param("> import: m:\n  a\n  a\n", 3, 3, "'a' is listed twice", id="dup_import"),
    pytest.param(
        "> package: p:\n  version: 1\n[x] = y\n",
        3,
        1,
        "a '> package:' manifest",
        id="package_alone",
    ),
    pytest.param(
        "> profile: p:\n  > output: list[\n", 2, 17, "malformed type annotation", id="output_type"
    ),
    pytest.param(
        "@eval: s:\n  > data: d:\n    = `1`\n  > data: d:\n    = `2`\n",
        4,
        11,
        "duplicate '> data: d:'",
        id="dup_dataset",
    ),
    pytest.param(
        "@test: s:\n  > case: a:\n    [x] = y\n",
        3,
        5,
        "a '> case:' body holds only",
        id="case_not_python",
    ),
    pytest.param(
        "@f() -> int:\n  = `1`\n  > if: `x`:\n    `pass`\n",
        3,
        3,
        "unreachable statement",
        id="dead_if",
    ),
    pytest.param(
        "> if: `a`:\n  = x\n> else:\n  = y\n[z] = w\n",
        5,
        1,
        "unreachable statement",
        id="dead_after_if_else",
    ),
    pytest.param(
        "@test: s:\n  @f():\n    = x\n", 2, 3, "an '@test:' suite holds only", id="proc_in_suite"
    ),
    pytest.param(
        "@f():\n  @test: s:\n    > case: a:\n      `pass`\n",
        2,
        3,
        "'@test:' suites are allowed only at top level",
        id="nested_suite",
    ),
    pytest.param(  # each row binds `expected`: the row's input would be silently replaced
        "@eval: s:\n  > test_data: expected:\n    = `[(1, 2)]`\n  > metric: m(expected):\n"
        "    = `expected == 2`\n",
        2,
        16,
        "invalid dataset name 'expected'",
        id="dataset_named_expected",
    ),
]


@pytest.mark.parametrize(("source", "line", "column", "message"), EXTRA)
def test_more_static_errors(source: str, line: int, column: int, message: str) -> None:
    diag = error_of(source)
    assert diag.message.startswith(message), diag.message
    assert (diag.line, diag.column) == (line, column)


def test_text_bodies_reject_statement_lines() -> None:
    diag = error_of("> instructions:\n  Be brief.\n  > model: x\n")
    assert diag.message.startswith("a '> instructions:' body holds only text rows")
    assert (diag.line, diag.column) == (3, 3)


@pytest.mark.parametrize("head", ["profile: p", "task [h]: child", "send: h", "package: p"])
def test_block_directives_need_a_trailing_colon(head: str) -> None:
    diag = error_of(f"> {head}\n")
    assert diag.message.endswith("must end with ':' and take an indented body")
    assert (diag.line, diag.column) == (1, len(head) + 3)  # where the ':' is expected


@pytest.mark.parametrize(
    ("source", "column", "shape"),
    [
        ("@f() -> str:\n  > optimize:\n    >> a [b]\n  = <b>\n", 14, "> optimize: span:"),
        ("> profile:\n  > model: m\n", 11, "> profile: name:"),
        ("@f() -> str:\n  > task [h]:\n    >> a\n", 14, "> task [handle]: child:"),
        ("@f() -> str:\n  > send:\n    >> a\n", 10, "> send: handle:"),
        ("@f() -> str:\n  > interrupt:\n    >> a\n", 15, "> interrupt: handle:"),
    ],
)
def test_named_block_directives_need_their_name(source: str, column: int, shape: str) -> None:
    """`> optimize:` without a span name parsed, and its `.optimized.json` prompt could never
    apply; a profile, task, send or interrupt without its name parsed too."""
    diag = error_of(source)
    name = shape[2:].split(":")[0].split(" ")[0]
    assert diag.message == f"'> {name}:' needs a name: '{shape}'"
    line = 1 if source.startswith(">") else 2
    assert (diag.line, diag.column) == (line, column)  # just after the ':'


MESSAGES = [
    pytest.param("[x] = <f(a, b>\n", 1, 9, "unbalanced '(' in a call", id="call_paren"),
    pytest.param(
        "~T(a: int) extra\n",
        1,
        12,
        "unexpected text after the custom type header",
        id="type_trailing",
    ),
    pytest.param("[x: list[] = 1\n", 1, 1, "unbalanced '[': missing ']'", id="target_bracket"),
    pytest.param("@test s:\n", 1, 6, "suite header must be '@test: name:'", id="suite_colon2"),
    pytest.param("[x y] = 1\n", 1, 4, "unexpected 'y' in assignment target", id="target_name"),
    pytest.param(
        "@f(a: ) -> str:\n  = x\n", 1, 7, "unexpected ')' in procedure header", id="missing_type"
    ),
]


@pytest.mark.parametrize(("source", "line", "column", "message"), MESSAGES)
def test_located_messages_in_kedi_terms(source: str, line: int, column: int, message: str) -> None:
    diag = error_of(source)
    assert diag.message.startswith(message), diag.message
    assert (diag.line, diag.column) == (line, column)
    assert re.search(r"\b[A-Z_]{3,}\b", diag.message) is None  # no lark terminal names


def test_procedure_named_like_a_suite_is_a_procedure() -> None:
    assert parse("@tester(a):\n  = x\n@test(a):\n  = y\n").procedures[1].name == "test"


@pytest.mark.parametrize(
    ("source", "shown", "caret"),
    [
        # a Kedi error after an ESC sequence and a BEL: escaped, the caret under the `(`
        ("@f\x1b[2J\x07( -> int:\n  = `1`\n", "@f\\x1b[2J\\x07( -> int:", " " * 13 + "^"),
        # a Python error after one, and a lone CR in text before a backtick
        ('[a] = `"\x1b[31m" +* 1`\n', '[a] = `"\\x1b[31m" +* 1`', " " * 19 + "^"),
        ("[a] = x\ry <`1 +* 2`>\n", "[a] = x\\x0dy <`1 +* 2`>", " " * 18 + "^"),
    ],
)
def test_control_characters_in_a_quoted_line_are_escaped(
    source: str, shown: str, caret: str
) -> None:
    from pytest_kedi.lang import check_python

    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "c.kedi"))
    rendered = info.value.render()
    lines = rendered.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('  File "c.kedi"'))
    assert lines[at + 1 : at + 3] == ["  " + shown, "  " + caret]
    assert caret.index("^") == shown.index("(" if "(" in shown else "*")
    assert not any(c in rendered for c in "\x1b\x07\r")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "@f() -> int:\n  > tool:\n    retries:\n      -1\n  = `1`\n",
            "'retries' in '> tool:' takes one value, not an indented list",
        ),
        (
            "@f() -> int:\n  > tool:\n    risk:\n      reckless\n  = `1`\n",
            "'risk' in '> tool:' takes one value, not an indented list",
        ),
        (
            "@f() -> int:\n  > tool:\n    name:\n      1x\n  = `1`\n",
            "'name' in '> tool:' takes one value, not an indented list",
        ),
        (
            "> budget:\n  request_limit:\n    -1\n",
            "'request_limit' in '> budget:' takes one value, not an indented list",
        ),
        (
            "> hooks:\n  pre_tool_use:\n    plain\n",
            "hook 'pre_tool_use' needs a backtick handler such as `my_handler`",
        ),
        (
            "> mcp:\n  transport:\n    pigeon\n",
            "'transport' in '> mcp:' takes one value, not an indented list",
        ),
        (
            "> history:\n  enabled: true\n  compaction_mode:\n    bogus\n",
            "'compaction_mode' in '> history:' takes one value, not an indented list",
        ),
        (
            "> skills:\n  enabled: true\n  max_skills:\n    500\n",
            "'max_skills' in '> skills:' takes one value, not an indented list",
        ),
    ],
)
def test_a_checked_value_written_as_an_indented_list_is_an_error(source: str, message: str):
    """Written on the next line, a `> tool:` risk or retries (and the other checked
    literals) skipped its check: `retries:` then `-1` parsed and was stored."""
    diag = error_of(source)
    assert diag.message == message
    key = message.split("'")[1]
    assert diag.source_line.strip() == f"{key}:"  # at the key


@pytest.mark.parametrize("value", ["fx", '`{"name": "fx"}`'])
def test_tool_takes_no_inline_value(value: str) -> None:
    """`> tool: fx` parsed and was stored with nothing checked; its keys go in a block."""
    diag = error_of(f"@f() -> int:\n  > tool: {value}\n  = `1`\n")
    assert diag.message == (
        "'> tool:' takes an indented block of keys (name, description, risk, retries, "
        "retry_on), not an inline value"
    )
    assert (diag.line, diag.column) == (2, 11)


def test_an_empty_tool_block_keeps_every_default() -> None:
    parse("@f() -> int:\n  > tool:\n  = `1`\n", "t.kedi")


@pytest.mark.parametrize(
    "source",
    [
        "@f() -> int:\n  > tool:\n    retry_on:\n      ValueError\n      KeyError\n  = `1`\n",
        "> hooks:\n  pre_tool_use:\n    `first`\n    `second`\n",
        "> mcp:\n  name: files\n  args:\n    -y\n    server\n",
        "> codemode:\n  preload_tools:\n    f\n    g\n",
    ],
)
def test_keys_that_take_a_list_still_do(source: str) -> None:
    parse(source, "t.kedi")


@pytest.mark.parametrize(
    ("head", "key", "value"),
    [
        ("> settings:", "temperature", "0.1"),
        ("> history:", "enabled", "true"),
        ("> mcp:", "name", "files"),
        ("> skills:", "enabled", "true"),
        ("> artifacts:", "ttl", "3"),
        ("> codemode:", "max_calls", "3"),
        ("> agent:", "acp", "x"),
        ("> budget:", "request_limit", "3"),
        ("> hooks:", "pre_tool_use", "`h`"),
    ],
)
@pytest.mark.parametrize("where", ["top", "procedure", "profile"])
def test_duplicate_key_in_a_directive_body(head: str, key: str, value: str, where: str) -> None:
    """docs/language.md §4.1: duplicate members are parse errors, reported at the later
    one (KEDI.md §10.2). `> settings:`, `> history:`, `> mcp:` and `> skills:` kept the
    last value silently."""
    lines = [head, f"  {key}: {value}", f"  {key}: {value}"]
    if head == "> history:" or head == "> skills:":
        lines = [head, "  enabled: true", f"  {key}: {value}"]
    indent = {"top": "", "procedure": "  ", "profile": "  "}[where]
    first = {"top": [], "procedure": ["@f():"], "profile": ["> profile: p:"]}[where]
    tail = {"top": [], "procedure": ["  = x"], "profile": []}[where]
    source = "\n".join([*first, *(indent + line for line in lines), *tail]) + "\n"
    diag = error_of(source)
    assert diag.message.startswith(f"duplicate {key!r} in '{head}'"), diag.message
    assert (diag.line, diag.column) == (len(first) + 3, len(indent) + 3)


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        ("[n: int | None] = ```\nx = 4\n```\n= <n>\n", 1, 19),
        ("@f() -> str:\n  [n] = ```\n  x = 4\n  ```\n  = <n>\n", 2, 9),
        ("[n] = x\n[n] := ```\ndef g():\n    return 1\n```\n", 2, 8),
        ("[n: int] = ```\n# return 1\nx = 'return'\n```\n", 1, 12),
        ("[n: int] = ```\nclass C:\n    def m(self):\n        return 1\n```\n", 1, 12),
    ],
)
def test_a_fenced_right_hand_side_without_return(source: str, line: int, column: int) -> None:
    """docs/language.md §2.3: a fenced right-hand side must `return`. A block without a
    `return` statement (one in a function or class it defines does not count) bound None,
    or failed with a type error, at run time."""
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "t.kedi"))
    diag = info.value.diagnostics[0]
    assert diag.message.startswith("a fenced right-hand side must return its value")
    assert (diag.line, diag.column) == (line, column)


@pytest.mark.parametrize(
    "source",
    [
        "[n: int] = ```\nif n_max:\n    return 1\n```\n",  # a return, maybe not reached
        "[n: int] = ```\nfor i in range(3):\n    return i\n```\n",
        "@f() -> int:\n  = ```\n  x = 1\n  ```\n",  # a return fence: None is checked
        "```\nx = 1\n```\n",  # a standalone fence
    ],
)
def test_fences_that_need_no_return_statement_parse(source: str) -> None:
    check_python(parse(source, "t.kedi"))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: parse(b"= x\n"),
            "parse() takes the source text as str, not bytes (decode it first: "
            "data.decode('utf-8'))",
        ),
        (lambda: parse(None), "parse() takes the source text as str, not NoneType"),
        (lambda: parse("= x\n", 3), "parse() takes the path as str or None, not int"),
        (
            lambda: parse_file(None),
            "parse_file() takes the path of a .kedi file as str or os.PathLike, not NoneType",
        ),
        (
            lambda: parse_file(b"p.kedi"),
            "parse_file() takes the path of a .kedi file as str or os.PathLike, not bytes",
        ),
        (
            lambda: check_python("= x\n"),
            "check_python() takes a module from parse or parse_file, not str",
        ),
    ],
    ids=["bytes", "none", "path", "file-none", "file-bytes", "check-source"],
)
def test_an_argument_of_the_wrong_type_is_a_clear_type_error(call, message: str) -> None:
    """``parse(b"...")`` raised ``startswith first arg must be bytes`` (``parse(None)`` an
    ``AttributeError``) from inside the parser; ``parse_file(None)`` Python's own
    ``expected str, bytes or os.PathLike object``; ``check_python(text)`` an
    ``AttributeError``."""
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == message


def test_control_characters_a_message_quotes_are_escaped() -> None:
    """A message quoting source text (here the rest of a line holding a lone CR and an ESC)
    shows them as escapes, as the quoted source line does."""
    diag = error_of("> profile: p:\r  > adapter: x\x1b[31mRED\n= ok\n")
    assert diag.message.startswith("'> profile: p:\\x0d  > adapter: x\\x1b[31mRED' must end")
    assert diag.message == Diagnostic("m.kedi", 1, 1, diag.message).message  # idempotent


def test_control_characters_in_a_path_are_escaped(tmp_path) -> None:
    """A file named with an ESC (or importing one) was printed raw in the `File` line
    of a parse error, while a Kedi stack trace escapes it."""
    (tmp_path / "lib\x1bx.kedi").write_text("[bad\n", encoding="utf-8")
    with pytest.raises(KediParseError) as info:
        parse_file(tmp_path / "lib\x1bx.kedi")
    assert 'lib\\x1bx.kedi", line 1, column 1' in info.value.render()
    from pytest_kedi.lang.diagnostics import ImportSite

    site = ImportSite(str(tmp_path / "main\x1by.kedi"), 1, "> import: lib\n")
    rendered = info.value.imported_at(site).render()
    assert "\x1b" not in rendered and 'main\\x1by.kedi", line 1' in rendered


@pytest.mark.parametrize(("ends", "hint"), [("\r", True), ("\n", False), ("\r\n", False)])
def test_a_file_with_lone_cr_line_ends_says_so(ends: str, hint: bool) -> None:
    """A file saved with lone CR line ends (classic Mac) is one line: its parse error says
    why the whole file is quoted as line 1."""
    source = ends.join(["@f(x: int) -> int:", "  = `x + 1`", "", "[y] = `f(2)`", "[= `y`", ""])
    with pytest.raises(KediParseError) as info:
        parse(source, path="mac.kedi")
    rendered = info.value.render()
    note = (
        "  (the line holds 4 carriage returns not followed by a line feed, which end no line: "
        "a Kedi file's lines end with \\n or \\r\\n)"
    )
    assert (rendered.splitlines()[-1] == note) is hint, rendered
