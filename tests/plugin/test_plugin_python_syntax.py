"""A Python syntax error inside backticks or a fence is a located collection error,
never row feedback naming an internal file (with and without xdist)."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import DEMO, Kedi

BROKEN = """\
@eval: e:
  > data: rows:
    = `[(1, 1), (2, 2`
  > metric: m(rows):
    = `rows == expected`
"""


def test_python_syntax_error_is_a_located_collection_error(kedi: Kedi) -> None:
    kedi.write("b.kedi", BROKEN)
    kedi.write("demo.kedi", DEMO)
    result = kedi.subprocess("--kedi-eval")
    output = result.stdout.str()
    result.assert_outcomes(passed=3, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting b.kedi*",
            "Kedi parse error:",
            '  File "*b.kedi", line 3, column 17',
            "      = `[(1, 1), (2, 2`",
            "                  ^",
            "Kedi error: ParseError",
            "  Python syntax error: '(' was never closed",
        ]
    )
    assert "<kedi" not in output
    assert "Traceback" not in output
