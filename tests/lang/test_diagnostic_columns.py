"""Where a diagnostic's caret points: the column a user is sent to must be where the error
is, wherever Python or the Kedi parser found it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_kedi.lang import KediParseError, check_python, parse


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
