"""``python -m pytest_kedi parse`` finds syntax errors in embedded Python."""

from __future__ import annotations

BROKEN = """
    @eval: e:
      > data: rows:
        = `[(1, 1), (2, 2`
      > metric: m(rows):
        = `rows == expected`
"""


def test_parse_reports_python_syntax_errors_located(kedi_file, cli) -> None:
    name = kedi_file(BROKEN, "b.kedi")
    result = cli("parse", name)
    assert result.code == 1
    assert result.out == ""
    assert result.err == (
        "Kedi parse error:\n\n"
        '  File "b.kedi", line 3, column 17\n'
        "      = `[(1, 1), (2, 2`\n"
        "                  ^\n\n"
        "Kedi error: ParseError\n"
        "  Python syntax error: '(' was never closed\n"
    )


def test_a_nul_character_in_python_is_located_where_it_is(kedi_file, cli) -> None:
    """Python refuses it without a position: it was reported at the block's first line."""
    name = kedi_file('@f(x):\n  = ```\n  a = 1\n  b = 2\n  return "x\0y"\n  ```\n', "n.kedi")
    result = cli("parse", name)
    assert result.code == 1
    lines = result.err.splitlines()
    assert lines[2] == '  File "n.kedi", line 5, column 12'
    # the quoted line shows the NUL as its escape, the caret under it
    assert lines[4].index("^") == lines[3].index("\\x00")
    assert (
        lines[-1] == "  Python syntax error: a NUL character (U+0000) is not allowed in Python code"
    )
    name = kedi_file("[x] = `1 + \0 2`\n", "e.kedi")
    assert cli("parse", name).err.splitlines()[2] == '  File "e.kedi", line 1, column 12'
