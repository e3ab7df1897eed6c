"""Where a diagnostic's caret points: the column a user is sent to must be where the error
is, wherever Python or the Kedi parser found it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_kedi.lang import KediParseError, check_python, parse
from pytest_kedi.lang.syntax import IDENT


def _python_error(source: str) -> tuple[int, int]:
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "c.kedi"))
    d = info.value.diagnostics[0]
    assert d.message.startswith("Python syntax error"), d.message
    return d.line, d.column


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        # Python's "eval" mode gives an error at the end of the expression the column 0:
        # the caret stood under the expression's first character, far from the error.
        ("[c] = `foo(a, b) +`\n", 1, 19),
        ("@f(x) -> bool:\n  = `x and`\n", 2, 11),
        ("= value <`v.`>\n", 1, 13),
        ("[c: int] = `(1 +\n 2) +`\n", 2, 6),
        ("[x: `list[int] |`] = `[]`\n", 1, 17),
        ("@test: t:\n  > case: c:\n    `assert 1 ==`\n", 3, 17),  # exec mode, as before
    ],
)
def test_an_error_at_the_end_of_an_expression_is_shown_at_its_end(
    source: str, line: int, column: int
) -> None:
    assert _python_error(source) == (line, column)


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        # Python counts this error's column from the start of the first line the
        # backslashes joined: the column was past the end of the line shown.
        ("= ```\nx = 1 \\\n  + 2 \\.\nreturn x\n```\n", 3, 8),
        ("@f():\n  ```\n  a = 1 \\\n   + 2 \\\n   + 3 \\x\n  ```\n", 5, 9),
        ("[x: int] = `1 + \\\n  2 \\.`\n", 2, 6),
        ("[x: int] = `1 + \\.`\n", 1, 18),  # one line: as before
    ],
)
def test_a_character_after_a_continuation_backslash_is_located_in_its_line(
    source: str, line: int, column: int
) -> None:
    assert _python_error(source) == (line, column)


_OPERAND = st.sampled_from(["a", "f(x)", "xs[0]", "(1, 2)", "'s'", "d.k", "[n for n in m]"])
_DANGLING = st.sampled_from(
    [" +", " and", " or", " not", " if", ".", " is", " in", " *", " -", " =="]
)


@given(
    operands=st.lists(_OPERAND, min_size=1, max_size=3),
    dangling=_DANGLING,
    lead=st.sampled_from(["", "  ", "\t"]),
    target=st.sampled_from(["[y] = ", "= ", "[y: int] = ", "= text <"]),
)
@settings(max_examples=150, deadline=None)
def test_a_dangling_operator_is_located_after_it(
    operands: list[str], dangling: str, lead: str, target: str
) -> None:
    expr = " + ".join(operands) + dangling
    head = "@f(x, xs, d, m):\n" if lead else ""
    statement = f"{lead}{target}`{expr}`{'>' if target.endswith('<') else ''}"
    line, column = _python_error(f"{head}{statement}\n")
    assert line == 1 + bool(head)
    # the caret sits right after the expression (on its closing backtick)
    assert statement[column - 1] == "`", (statement, column)
    assert column == statement.index("`") + 1 + len(expr) + 1


#: Every place the source names something (docs/language.md#names), ``{n}`` the name.
_NAMED = [
    "@{n}():\n  = a\n",
    "~{n}(a)\n",
    "@f({n}):\n  = a\n",
    "~T({n}: int)\n",
    "[{n}] = a\n",
    "[{n}: int] = `1`\n",
    ">> x [{n}]\n",
    "@test: {n}:\n  > case: c:\n    `x`\n",
    "@test: t:\n  > case: {n}:\n    `x`\n",
    "@eval: {n}:\n  > data: d:\n    = `[]`\n  > metric: m(d):\n    = `1`\n",
    "@eval: e:\n  > data: {n}:\n    = `[]`\n  > metric: m(d):\n    = `1`\n",
    "@eval: e:\n  > data: d:\n    = `[]`\n  > metric: {n}(d):\n    = `1`\n",
    "> profile: {n}:\n  > model: m\n",
    "@f():\n  > optimize: {n}:\n    >> a\n",
    "> package: {n}:\n  version: 1\n",
    "@f():\n  > task [h]: {n}:\n    >> a\n",
    "@f():\n  > task [{n}]: c:\n    >> a\n",
    "@f():\n  > send: {n}:\n    >> a\n",
    "> loop [{n}]: `x`:\n  [a] = 1\n",
    "> import: {n}\n",
    "> export: {n}\n",
    "> import: m:\n  {n}\n",
]


@given(
    template=st.sampled_from(_NAMED),
    name=st.text(alphabet="ab_1 -.é日)!", min_size=1, max_size=6).filter(
        lambda s: s == s.strip() and re.fullmatch(IDENT, s) is None
    ),
)
@settings(max_examples=300, deadline=None)
def test_a_name_that_is_no_identifier_is_an_error_at_its_line(template: str, name: str) -> None:
    """`> package: my-reports:` parsed: every other named thing was checked."""
    source = template.format(n=name)
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "n.kedi"))
    d = info.value.diagnostics[0]
    assert d.line == 1 + template.split("{n}")[0].count("\n"), (source, d.message)
