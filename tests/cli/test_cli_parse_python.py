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
