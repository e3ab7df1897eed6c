"""Acceptance checks of the front end against docs/language.md (§1, §2, §4, §5.1-5.2, §7, §9,
§10.2): located errors (caret under the offending token), the §7 rendering, and
input encodings (CRLF, tabs, UTF-8, BOM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kedi.lang import KediParseError, parse, parse_file
from pytest_kedi.lang import nodes as n

from .conftest import error_of

SUITE = "@eval: s:\n  > data: d:\n    = `[1]`\n  > metric: m(d):\n    = `1`\n"

# (source, line, column, message prefix): every error lands on the token at fault.
LOCATED = [
    # A header missing its ':' is reported where the ':' is expected.
    pytest.param("@eval: score\n", 1, 13, "suite header must end with ':'", id="suite_colon"),
    pytest.param("@test: t  # note\n", 1, 9, "suite header must end with", id="suite_comment"),
    pytest.param("@f(a)\n  = x\n", 1, 6, "procedure header must end with ':'", id="proc_colon"),
    pytest.param("@f(a) -> int\n  = `1`\n", 1, 13, "procedure header must end", id="proc_ret"),
    pytest.param("@f(a,\n   b)\n  = x\n", 2, 6, "procedure header must end", id="proc_multiline"),
    pytest.param(
        "@test: s:\n  > case: a\n    `pass`\n", 2, 12, "'> case:' header must end", id="case"
    ),
    pytest.param(SUITE.replace("d:\n", "d\n", 1), 2, 12, "'> data:' header must", id="data"),
    pytest.param(SUITE.replace("m(d):", "m(d)"), 4, 17, "'> metric:' header must end", id="metric"),
    pytest.param("> profile: p\n", 1, 13, "'> profile: p' must end with ':'", id="profile"),
    pytest.param(
        "@f():\n  > optimize: s\n    >> a [b]\n", 2, 16, "'> optimize: s' must", id="optimize"
    ),
    pytest.param(
        "> loop [x]: `xs`\n  `pass`\n", 1, 17, "an iterable loop is", id="loop_binder_colon"
    ),
    # Duplicates are reported at their later occurrence, on the name.
    pytest.param("@f(a, b,\n   a):\n  = x\n", 2, 4, "duplicate parameter 'a'", id="dup_param"),
    pytest.param("~T(\n  a: int,\n  a: str\n)\n", 3, 3, "duplicate field 'a'", id="dup_field"),
    pytest.param(
        "@test: s:\n  > case: a:\n    `pass`\n\n  > case: a:\n    `pass`\n",
        5,
        11,
        "duplicate case name 'a'",
        id="dup_case",
    ),
    pytest.param(
        SUITE.replace(
            "  > metric", "  > test_data: d:\n    = `1`\n  > test_data: d:\n    = `2`\n  > metric"
        ),
        6,
        16,
        "duplicate '> test_data: d:'",
        id="dup_test_data",
    ),
    pytest.param(
        SUITE + "  > metric: k(d):\n    = `1`\n",
        6,
        3,
        "an '@eval:' suite has exactly one",
        id="two_metrics",
    ),
    pytest.param("> import: m:\n  a\n  b\n  a\n", 4, 3, "'a' is listed twice", id="dup_list"),
    pytest.param(
        "> profile: p:\n  > model: a\n  > model: b\n",
        3,
        3,
        "duplicate '> model:'",
        id="profile_dup",
    ),
    # Unterminated fences and ### blocks are reported where they open.
    pytest.param(
        "@eval: s:\n  > data: d:\n    = ```\n    return [1]\n",
        3,
        7,
        "unterminated fence",
        id="fence",
    ),
    pytest.param("[x] := ```\nreturn 1\n", 1, 8, "unterminated fence", id="fence_reassign"),
    pytest.param("> profile: p:\n  ###\n  doc\n", 2, 3, "unterminated `###`", id="block_comment"),
    pytest.param("[x] = `a +\n  1\n[y] = 2\n", 1, 7, "unbalanced backtick", id="open_backtick"),
    pytest.param("[x] = ``` py\n```\n", 1, 7, "a fence opener '```' must end", id="fence_text"),
    pytest.param("[x] = <f(a,)>\n", 1, 12, "missing argument in a call", id="empty_arg"),
    # a blank argument is a missing one (`<f( )>` alone is `<f()>`), on both text paths
    pytest.param("[x] = <f(a, )>\n", 1, 13, "missing argument in a call", id="blank_arg"),
    pytest.param("[x] = <f( , a)>\n", 1, 11, "missing argument in a call", id="blank_first"),
    pytest.param("[x] = <f((a),  )>\n", 1, 16, "missing argument in a call", id="blank_grammar"),
    # Escapes, directives and values.
    pytest.param("> instructions: hi \\x\n", 1, 20, "unsupported escape '\\x'", id="escape"),
    pytest.param("@f():\n  >  frob: yes\n", 2, 6, "unknown directive '> frob:'", id="unknown"),
    pytest.param(  # spelled as written: no colon added
        "@f():\n  > just text\n", 2, 5, "unknown directive '> just'", id="unknown_no_colon"
    ),
    pytest.param(
        "@test: s:\n  > case: a:\n    > frob: x\n", 3, 7, "unknown directive", id="unknown_in_case"
    ),
    pytest.param("> instructions:\n  hi\n  > frob: x\n", 3, 5, "unknown directive", id="in_text"),
    pytest.param("> settings:\n  > frob: x\n", 2, 5, "unknown directive", id="in_settings"),
    pytest.param("> effort: extreme\n", 1, 11, "invalid value 'extreme'", id="effort"),
    pytest.param("> import: ../x\n", 1, 11, "invalid import path '../x'", id="import_path"),
    pytest.param("> requires:\n  hooks\n  flying\n", 3, 3, "unknown capability 'flying'", id="cap"),
    pytest.param("> agent:\n  foo: bar\n", 2, 3, "unknown key 'foo' in '> agent:'", id="agent_key"),
    pytest.param(
        "> history:\n  enabled: true\n  compaction_mode: disabled\n  compaction_threshold: 5\n",
        4,
        3,
        "compaction_threshold cannot be set",
        id="history_threshold",
    ),
    pytest.param("> use: 1a\n", 1, 8, "'> use:' takes a name; '1a'", id="use_name"),
    pytest.param(
        "> profile: p:\n  > subagent: c-d\n", 2, 15, "'> subagent:' takes a name", id="subagent"
    ),
    # Names.
    pytest.param("~T(a-b: int)\n", 1, 4, "invalid name 'a-b' in custom type header", id="glued"),
    pytest.param("[café] = x\n", 1, 2, "invalid name 'café' in assignment target", id="non_ascii"),
    pytest.param(
        SUITE.replace("m(d):", "m-x(d):"), 4, 13, "invalid name 'm-x' in metric", id="metric_name"
    ),
    pytest.param(
        "> loop [x: int]: `xs`:\n  `pass`\n", 1, 9, "a loop binder is one name", id="typed_binder"
    ),
    pytest.param(
        ">> hi [if]\n", 1, 8, "invalid output field name 'if': it is a Python", id="kw_field"
    ),
    pytest.param("@\n", 1, 2, "missing name in procedure header", id="no_proc_name"),
    pytest.param("@test: :\n", 1, 8, "missing suite name", id="no_suite_name"),
    pytest.param("@f():\n  = A \\\n\n", 2, 7, "a trailing '\\' continues the return", id="cont"),
    # `args` is runtime-owned wherever a name is bound (§1.5).
    pytest.param("[ args ] = x\n", 1, 3, "'args' is reserved", id="args_assign"),
    pytest.param(">> hi [args: int]\n", 1, 8, "'args' is reserved", id="args_output"),
    pytest.param("@f(args):\n  = x\n", 1, 4, "'args' is reserved", id="args_param"),
    pytest.param("> loop [args]: `xs`:\n  `pass`\n", 1, 9, "'args' is reserved", id="args_binder"),
    pytest.param("@args():\n  = x\n", 1, 2, "'args' is reserved", id="args_proc"),
    # Parameters are read-only under every binding form (§2.1).
    pytest.param("@f(p):\n  [p] := x\n", 2, 4, "parameter 'p' is read-only", id="param_reassign"),
    pytest.param("@f(p):\n  [p] << x\n", 2, 4, "parameter 'p' is read-only", id="param_capture"),
    pytest.param("@f(p):\n  >> a [p]\n", 2, 9, "parameter 'p' is read-only", id="param_output"),
    # A nested declaration binds its name too, so it may not replace a parameter either.
    pytest.param(
        "@f(p):\n  ~p(a: int)\n  = x\n", 2, 4, "parameter 'p' is read-only", id="param_type"
    ),
    pytest.param(
        "@f(p):\n  @p():\n    = y\n  = x\n", 2, 4, "parameter 'p' is read-only", id="param_proc"
    ),
    pytest.param(
        "@f(p):\n  > if: `True`:\n    ~p()\n  = x\n",
        3,
        6,
        "parameter 'p' is read-only",
        id="param_type_nested",
    ),
    # A loop's binder binds its name in each iteration's scope, as `[p] = ...` in the loop
    # body would: it was accepted, shadowing the parameter.
    pytest.param(
        "@f(p):\n  > loop [p]: `xs`:\n    `pass`\n  = x\n",
        2,
        11,
        "parameter 'p' is read-only",
        id="param_binder",
    ),
    pytest.param(
        "@f(p):\n  > if: `True`:\n    > loop [ p ]: `xs`:\n      `pass`\n  = x\n",
        3,
        14,
        "parameter 'p' is read-only",
        id="param_binder_nested",
    ),
    # A `> map:` body is a child scope of the procedure as a branch is: every binding form
    # of a parameter there was accepted, shadowing it.
    pytest.param(
        "@f(p):\n  > loop [i]: `xs`:\n    `pass`\n  > map:\n    [p] = x\n  = x\n",
        5,
        6,
        "parameter 'p' is read-only",
        id="param_assign_in_map",
    ),
    pytest.param(
        "@f(p):\n  > loop [i]: `xs`:\n    `pass`\n  > map:\n    >> a [p]\n  = x\n",
        5,
        11,
        "parameter 'p' is read-only",
        id="param_output_in_map",
    ),
    pytest.param(
        "@f(p):\n  > loop [i]: `xs`:\n    `pass`\n  > map:\n    > loop [p]: `ys`:\n"
        "      `pass`\n  = x\n",
        5,
        13,
        "parameter 'p' is read-only",
        id="param_binder_in_map",
    ),
]


@pytest.mark.parametrize(("source", "line", "column", "message"), LOCATED)
def test_errors_are_located_on_the_offending_token(
    source: str, line: int, column: int, message: str
) -> None:
    diag = error_of(source)
    assert diag.message.startswith(message), diag.message
    assert (diag.line, diag.column) == (line, column), diag.message


def test_rendering_matches_the_spec_layout() -> None:
    with pytest.raises(KediParseError) as info:
        parse("# header\n\n@eval: score\n", "suite.kedi")
    assert str(info.value) == (
        "Kedi parse error:\n"
        "\n"
        '  File "suite.kedi", line 3, column 13\n'
        "  @eval: score\n"
        "              ^\n"
        "\n"
        "Kedi error: ParseError\n"
        "  suite header must end with ':'"
    )


def test_crlf_input_parses_and_locates_like_lf() -> None:
    lf = "@f(a: int) -> int:\n  = `a`\n\n[x] = hi <y>\n"
    crlf = lf.replace("\n", "\r\n")
    assert [type(s) for s in parse(crlf).body] == [n.Procedure, n.Assign]
    assign = parse(crlf).body[1]
    assert isinstance(assign, n.Assign)
    assert (assign.span.start_line, assign.span.start_col) == (4, 1)
    with pytest.raises(KediParseError) as info:
        parse("[x] = ok\r\n[y] = a \\q\r\n", "c.kedi")
    diag = info.value.diagnostics[0]
    assert (diag.line, diag.column, diag.source_line) == (2, 9, "[y] = a \\q")
    assert "\r" not in str(info.value)


def test_a_tab_is_indentation_width_four() -> None:
    module = parse("@f():\n    [a] = 1\n\t= <a>\n")
    proc = module.body[0]
    assert isinstance(proc, n.Procedure)
    assert [type(s) for s in proc.body] == [n.Assign, n.Return]
    # Eight columns of indentation: two tabs, or a tab and four spaces, are one level.
    error_of("@f():\n\t\t[a] = 1\n  = x\n")  # dedent to width 2 matches no level
    (proc,) = parse("@f():\n  > if: `True`:\n\t\t[x] = 1\n\t    [y] = 2\n").body
    assert isinstance(proc, n.Procedure) and isinstance(proc.body[0], n.If)
    assert len(proc.body[0].body) == 2


def test_caret_keeps_tabs_so_it_sits_under_the_column() -> None:
    with pytest.raises(KediParseError) as info:
        parse("@f():\n\t[x] = a \\q\n", "t.kedi")
    diag = info.value.diagnostics[0]
    assert (diag.line, diag.column) == (2, 10)
    lines = str(info.value).splitlines()
    assert lines[3] == "  \t[x] = a \\q"
    assert lines[4] == "  \t        ^"
    assert lines[4].index("^") == lines[3].index("\\")


@pytest.mark.parametrize(
    ("line", "pad"),
    [
        ("  = 漢字漢字 <b", "  " + " " * 2 + " " * 8 + " "),  # wide: two cells each
        ("  = e\u0301e\u0301 <b", "  " + " " * 2 + " " * 2 + " "),  # combining: none
    ],
)
def test_caret_sits_under_the_column_past_wide_and_combining_characters(
    line: str, pad: str
) -> None:
    """One space per character put the caret under the third CJK character, or past the
    error after decomposed accents."""
    with pytest.raises(KediParseError) as info:
        parse(f"@f(x):\n{line}\n", "t.kedi")
    lines = str(info.value).splitlines()
    assert lines[3] == f"  {line}"
    assert lines[4] == f"  {pad}^"


def test_utf8_text_keeps_characters_and_columns() -> None:
    module = parse("[x] = héllo 日本 <y>\n>> ünï [ausgabe: str]\n")
    assign, template = module.body
    assert isinstance(assign, n.Assign) and assign.value.text is not None
    literal, subst = assign.value.text.parts
    assert isinstance(literal, n.Literal) and literal.value == "héllo 日本 "
    assert isinstance(subst, n.Subst) and subst.span.start_col == 16
    assert isinstance(template, n.Template)
    diag = error_of("[x] = 日本語 \\q\n")
    assert diag.column == 11


def test_byte_order_mark_is_ignored() -> None:
    module = parse("\ufeff[x] = a\n")
    assert isinstance(module.body[0], n.Assign)
    assert module.body[0].span.start_col == 1


@pytest.mark.parametrize("source", ["", "\n\n  \n", "# one\n  # two\n###\nbody\n###\n"])
def test_empty_and_comment_only_files_parse_to_an_empty_module(source: str) -> None:
    module = parse(source)
    assert module.prelude is None
    assert module.body == ()


@pytest.mark.parametrize(
    "source",
    [
        "[x] = a \\` b\n[y] = `c`\n",  # an escaped backtick opens no code
        "[x] = `[\n  1,\n  2]`\n",  # a backtick expression may span lines
        "@test: class_:\n  > case: match:\n    `pass`\n",  # soft keywords are names
        "> agent: a2a:\n  endpoint: https://x\n",  # a2a sections keep open keys
        "@f(p):\n  @g():\n    [p] = x\n    = <p>\n  = x\n",  # nested scope may bind p
    ],
)
def test_accepted_forms(source: str) -> None:
    parse(source)


def test_multiline_backtick_expression_is_one_assignment() -> None:
    (assign,) = parse("[x] = `[\n  1,\n  2]`\n").body
    assert isinstance(assign, n.Assign) and assign.value.code is not None
    assert assign.value.mode == "expr"
    assert assign.value.code.source == "[\n  1,\n  2]"


def test_a_file_that_is_not_utf8_is_a_located_parse_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.kedi"
    path.write_bytes(b"[x] = ok\r\n[y] = caf\xe9 <z>\r\n")
    with pytest.raises(KediParseError) as info:
        parse_file(path)
    diag = info.value.diagnostics[0]
    assert (diag.line, diag.column) == (2, 10)
    assert diag.message == "the file is not valid UTF-8 text (byte 0xe9)"
    assert diag.source_line == "[y] = caf\ufffd <z>"


def test_parse_file_keeps_crlf_and_drops_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.kedi"
    path.write_bytes("\ufeff@f():\r\n  = héllo\r\n".encode())
    (proc,) = parse_file(path).body
    assert isinstance(proc, n.Procedure)
    assert (proc.span.start_line, proc.span.start_col, proc.span.end_line) == (1, 1, 2)


def test_the_reference_shows_the_diagnostic_the_parser_prints() -> None:
    """docs/language.md §7.1's sample said column 5 (KEDI.md's wording); the parser, at the
    missing ':', says 13."""
    from pathlib import Path

    reference = (Path(__file__).parents[2] / "docs" / "language.md").read_text(encoding="utf-8")
    section = reference[reference.index("### 7.1 Parse diagnostics") :]
    start = section.index("```text\n") + len("```text\n")
    sample = section[start : section.index("\n```", start)]
    with pytest.raises(KediParseError) as info:
        parse("@f(x):\n  = x\n@eval: score\n", "suite.kedi")
    assert str(info.value) == sample


def test_a_header_error_after_a_long_name_is_reported() -> None:
    """The stray-character check searched back with a regex from every start: quadratic in
    the name's length (40,000 characters took 6 s); it walks back once now."""
    with pytest.raises(KediParseError) as info:
        parse("@f(" + "x" * 40_000 + "\n  b: int,\n) -> str:\n  = y\n", "q.kedi")
    assert info.value.diagnostics[0].message == (
        "unexpected 'b' in procedure header; expected ')' or ',' or ':' or '='"
    )
    with pytest.raises(KediParseError) as info:
        parse("@f(" + "x" * 40_000 + "-b):\n  = y\n", "q.kedi")
    assert info.value.diagnostics[0].message.startswith("invalid name 'xxx")
