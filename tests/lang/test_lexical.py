"""Lexical details (docs/language.md#lexical-structure): comments, strings in types, indentation."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang import parse

from .conftest import error_of


def test_hash_in_a_quoted_string_of_a_parameter_type_is_not_a_comment() -> None:
    module = parse('@f(x: Literal["#a", "b"]) -> Literal["#a", "b"]:  # note\n  = <x>\n')
    (proc,) = module.body
    assert isinstance(proc, n.Procedure)
    assert proc.params[0].type is not None
    assert proc.params[0].type.source == 'Literal["#a", "b"]'
    assert proc.return_type is not None and proc.return_type.source == 'Literal["#a", "b"]'


def test_hash_in_an_annotated_description_of_a_field_is_not_a_comment() -> None:
    module = parse('~Issue(\n  ref: Annotated[str, "issue # here"],  # note\n  n: int\n)\n')
    (decl,) = module.body
    assert isinstance(decl, n.TypeDecl)
    assert [f.name for f in decl.fields] == ["ref", "n"]
    ref = decl.fields[0].type
    assert ref is not None and ref.source == 'Annotated[str, "issue # here"]'


def test_hash_in_a_quoted_string_of_a_target_or_output_type_is_not_a_comment() -> None:
    module = parse(
        "[x: Literal['#1']] = `'#1'`  # note\n"
        '>> Pick one [c: Literal["#1", "#2"]] of "them # all"  # note\n'
    )
    assign, template = module.body
    assert isinstance(assign, n.Assign) and assign.type is not None
    assert assign.type.source == "Literal['#1']"
    assert isinstance(template, n.Template)
    parts = template.rows[0].parts
    assert isinstance(parts[1], n.OutputField) and parts[1].type is not None
    assert parts[1].type.source == 'Literal["#1", "#2"]'
    # Outside brackets a quote is plain text, so '#' still starts a comment there.
    assert isinstance(parts[2], n.Literal) and parts[2].value == ' of "them'


@pytest.mark.parametrize(
    ("source", "line", "column", "char"),
    [
        pytest.param("\xa0= done\n", 1, 1, "U+00A0 (NO-BREAK SPACE)", id="nbsp"),
        pytest.param(
            "@f():\n\u3000\u3000= a\n", 2, 1, "U+3000 (IDEOGRAPHIC SPACE)", id="ideographic"
        ),
        pytest.param("@f():\n  \xa0= a\n", 2, 3, "U+00A0 (NO-BREAK SPACE)", id="after_spaces"),
    ],
)
def test_indentation_with_other_whitespace_is_named(
    source: str, line: int, column: int, char: str
) -> None:
    # A non-breaking space pasted from a web page is not indentation: the error names it,
    # instead of calling the line template text.
    d = error_of(source)
    assert (d.line, d.column) == (line, column)
    assert d.message == f"indent with spaces or tabs: this line starts with {char}"


@pytest.mark.parametrize(
    ("source", "line", "column", "message"),
    [
        pytest.param(
            "\ufeff\ufeff@f() -> int:\n  = `1`\n",
            1,
            1,
            "template text must start with '>>' (the character at the caret is U+FEFF, "
            "ZERO WIDTH NO-BREAK SPACE)",
            id="second_bom",
        ),
        pytest.param(
            "@f() -> int:\u200b\n  = `1`\n",
            1,
            13,
            "unexpected text after the procedure header (the character at the caret is "
            "U+200B, ZERO WIDTH SPACE)",
            id="zero_width_space",
        ),
    ],
)
def test_an_invisible_character_at_the_caret_is_named(
    source: str, line: int, column: int, message: str
) -> None:
    # The quoted line looks right where the caret points: the message said the line was
    # template text, or had text after its header, and did not say which character.
    d = error_of(source)
    assert (d.line, d.column, d.message) == (line, column, message)


def test_a_visible_character_at_the_caret_is_not_named() -> None:
    assert error_of("@f() -> int: x\n  = `1`\n").message == (
        "unexpected text after the procedure header"
    )


@pytest.mark.parametrize(
    ("source", "line", "column", "message"),
    [
        pytest.param(
            "`pass`\u200b\n",
            1,
            1,
            "template text must start with '>>' (the line holds U+200B, ZERO WIDTH SPACE, "
            "at column 7)",
            id="after_a_statement",
        ),
        pytest.param(
            "@test: t:\n  > case: c:\n    `assert 1`\u2060\n",
            3,
            5,
            "a '> case:' body holds only Python: backtick lines and ``` fences (the line "
            "holds U+2060, WORD JOINER, at column 15)",
            id="after_a_case_line",
        ),
    ],
)
def test_an_invisible_character_elsewhere_in_the_line_is_named(
    source: str, line: int, column: int, message: str
) -> None:
    # A backtick line followed by a character that does not show was "template text" or
    # "not Python", though the line the error quoted looked exactly like one.
    d = error_of(source)
    assert (d.line, d.column, d.message) == (line, column, message)


def test_a_joiner_text_holds_on_purpose_is_not_named() -> None:
    # the zero-width joiner of an emoji sequence, in a line that is wrong for another reason
    assert error_of(">> hi \U0001f469\u200d\U0001f4bb <a.b>\n").message.endswith("'<'")


def test_other_whitespace_starting_a_template_row_is_text() -> None:
    (template,) = parse(">> first\n\u3000second\n").body
    assert isinstance(template, n.Template) and len(template.rows) == 2


def test_hash_in_a_quoted_string_of_a_settings_list_is_kept() -> None:
    (settings, _) = parse('> settings:\n  stop_sequences: ["#", "END"]  # note\n= a\n').body
    assert isinstance(settings, n.Directive)
    assert settings.settings[0].value == '["#", "END"]'


def test_rows_of_a_settings_list_read_like_one_line_values() -> None:
    """A list row was kept as written: a quoted row was cut at its '#' (`"a #b"` became
    `"a`), escapes stayed (`\\#` was sent with its backslash) and a backtick row was text."""
    source = '> settings:\n  stop_sequences:\n    "a #b"  # note\n    c\\#d\n    `"x"`\n= a\n'
    (settings, _) = parse(source).body
    assert isinstance(settings, n.Directive)
    (kv,) = settings.settings
    assert kv.items == ('"a #b"', "c#d", '`"x"`')
    assert [code and code.source for code in kv.item_codes] == [None, None, '"x"']


def test_an_unsupported_escape_in_a_settings_list_row_is_located() -> None:
    diag = error_of("> settings:\n  stop_sequences:\n    ok\n    x\\qy\n")
    assert diag.message.startswith("unsupported escape '\\q'")
    assert (diag.line, diag.column) == (4, 6)


@pytest.mark.parametrize(
    ("row", "value"),
    [
        ('tag: "team #3"  # note', '"team #3"'),
        ("tag: 'a#b'", "'a#b'"),
        ('tag: "open # never closed', '"open'),
        ("tag: plain # comment", "plain"),
    ],
)
def test_hash_in_a_quoted_plain_setting_value_is_kept(row: str, value: str) -> None:
    """A plain value was cut at the first '#': `"team #3"` became `"team`, silently."""
    (settings, _) = parse(f"> settings:\n  {row}\n= a\n").body
    assert isinstance(settings, n.Directive)
    assert settings.settings[0].value == value


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param(
            "``` python\nx = 1\n```\n",
            "a fence is ``` alone on its line (no language tag)",
            id="spaced_tag",
        ),
        pytest.param(
            "````\nx = 1\n````\n",
            "a fence is exactly three backticks (```) alone on its line",
            id="four_backticks",
        ),
    ],
)
def test_a_malformed_fence_opener_is_reported_where_it_is(source: str, message: str) -> None:
    # Before, the first was "unterminated fence" at line 3 and the second "template text".
    d = error_of(source)
    assert (d.line, d.column, d.message) == (1, 1, message)


def test_an_unterminated_fence_names_the_line_that_almost_closes_it() -> None:
    d = error_of("= ```\nreturn 'a'\n```  # done\n")
    assert (d.line, d.column) == (1, 3)
    assert d.message == (
        "unterminated fence: no closing ``` line was found"
        " (line 3 starts with ``` but is not ``` alone)"
    )


@pytest.mark.parametrize(
    ("source", "hint"),
    [
        # The closing line looked right, and the message said there was none.
        (
            "= ```\nreturn 1\n\u200b```\n",
            "line 3 would close it but holds U+200B, ZERO WIDTH SPACE",
        ),
        (
            "= ```\nreturn 1\n```\ufeff\n",
            "line 3 would close it but holds U+FEFF, ZERO WIDTH NO-BREAK SPACE",
        ),
        (
            "###\nnote\n  \u200b###\n= a\n",
            "line 3 would close it but holds U+200B, ZERO WIDTH SPACE",
        ),
        ("###\nnote\n\n### end\n", "line 4 starts with ### but is not ### alone"),
    ],
)
def test_an_unterminated_block_names_the_line_that_looks_like_its_end(
    source: str, hint: str
) -> None:
    d = error_of(source)
    assert d.line == 1
    assert d.message.endswith(f" ({hint})"), d.message
    assert d.message.count("U+") <= 1


def test_a_block_comment_inside_a_parameter_list_is_a_comment() -> None:
    # Before, the comment's lines were read as parameters ('b' of type 'the').
    source = "@f(\n  a,\n  ###\n  b: the old second parameter\n  ###\n  c\n):\n  = <c>\n"
    (proc,) = parse(source).body
    assert isinstance(proc, n.Procedure)
    assert [p.name for p in proc.params] == ["a", "c"]
    (decl,) = parse("~T(\n  ###\n  note (draft)\n  ###\n  x: int\n)\n").body
    assert isinstance(decl, n.TypeDecl) and [f.name for f in decl.fields] == ["x"]


def test_an_unterminated_block_comment_in_a_header_is_reported_where_it_opens() -> None:
    d = error_of("@f(\n  a,\n  ###\n  b\n):\n  = <a>\n")
    assert (d.line, d.column) == (3, 3)
    assert d.message == "unterminated `###` block comment: no closing `###` line"


@pytest.mark.parametrize("space", ["\xa0", "\u3000", "\x0c"])
def test_a_suite_header_with_other_whitespace_after_the_at_sign_is_a_located_error(
    space: str,
) -> None:
    # Before, this was "internal error in the Kedi parser (AssertionError)".
    d = error_of(f"@{space}eval: judge:\n  > data: cases:\n    = `[]`\n")
    assert d.line == 1
    assert "internal error" not in d.message


@pytest.mark.parametrize(
    ("row", "message"),
    [
        pytest.param(
            "@support will answer",
            "a line starting with '@' is a procedure header '@name(params):'; "
            "write '\\@' for a literal '@' at the start of text",
            id="at",
        ),
        pytest.param(
            "~5 minutes at most",
            "a line starting with '~' is a custom type '~Name(fields)'; "
            "write '\\~' or '~~' for a literal '~' at the start of text",
            id="tilde",
        ),
    ],
)
def test_a_template_row_starting_with_a_header_sigil_says_how_to_escape_it(
    row: str, message: str
) -> None:
    # Before: "unexpected 'w' in procedure header; expected '('" at the second word.
    d = error_of(f">> Ask the team.\n{row}\n")
    assert (d.line, d.column, d.message) == (2, 1, message)


@pytest.mark.parametrize(
    ("source", "line", "width"),
    [
        # An editor showing a tab as 2 columns lines these up; Kedi counts a tab as 4, and
        # the error did not say why the lines that looked aligned were not.
        ("@f():\n  [a] = 1\n\t[b] = 2\n", 3, 4),
        ("@f():\n\t[a] = 1\n  [b] = 2\n", 3, 2),
        ("@f():\n    > if: `x`:\n\t  [a] = 1\n\t [b] = 2\n", 4, 5),
    ],
)
def test_an_indentation_error_in_a_file_mixing_tabs_and_spaces_says_what_a_tab_counts(
    source: str, line: int, width: int
) -> None:
    d = error_of(source)
    assert d.line == line
    assert d.message.startswith("unexpected "), d.message
    note = f" (this line is indented {width} columns: a tab counts as 4, a space as 1)"
    assert d.message.endswith(note), d.message


def test_an_indentation_error_with_spaces_only_has_no_tab_note() -> None:
    d = error_of("@f():\n  [a] = 1\n   [b] = 2\n")
    assert d.message == "unexpected indentation: an assignment takes no indented body"
