"""Control characters (an ESC starting a colour sequence) in what the CLI quotes: its
``Tests:``/``Evals:`` lines and diagnostics show them as escapes, as pytest's ``kedi``
summary, ``merge`` and ``compare`` do; the program's own result is printed as it is."""

from __future__ import annotations

SUITES = r"""
    @eval: e:
      > data: d:
        = `["a\x1b[31mb"]`
      > metric: m(d):
        = `(0.5, d)`

    @eval: bad:
      > data: d:
        ```
        raise ValueError("\x1b[2J")
        ```
      > metric: m(d):
        = `1`

    @test: t:
      > case: c:
        `raise ValueError("esc \x1b[31m here")`
    """


def test_eval_and_test_lines_escape_control_characters(kedi_file, cli) -> None:
    """The feedback and failure messages reached the terminal raw (``\\x1b[31m`` recoloured
    the rest of the log), where ``pytest --kedi-eval`` showed ``\\x1b[31m``."""
    name = kedi_file(SUITES)
    result = cli(name, "--eval")
    assert result.out.splitlines()[:2] == ["Evals:", r"- e::m: 0.5000 | a\x1b[31mb"]
    assert "\x1b" not in result.out + result.err
    assert r"ValueError: \x1b[2J" in result.err  # the data-loading failure's message
    result = cli(name, "--test")
    assert result.out == "Tests:\n" + r"- t::c: FAIL | ValueError: esc \x1b[31m here" + "\n"
    assert result.code == 1


def test_a_stack_trace_escapes_the_message(kedi_file, cli) -> None:
    """The last line of a Kedi stack trace, the exception's message, was written raw."""
    result = cli(kedi_file(r'`raise ValueError("esc \x1b[31m here")`' + "\n"))
    assert result.err.splitlines()[-1] == r"ValueError: esc \x1b[31m here"
    assert result.code == 1


def test_the_programs_result_and_exit_text_are_its_own(kedi_file, cli) -> None:
    """What the program returns (or passes to ``sys.exit``) is printed as Python would."""
    result = cli(kedi_file(r'= `"\x1b[1mbold\x1b[0m"`' + "\n"))
    assert (result.out, result.code) == ("\x1b[1mbold\x1b[0m\n", 0)
    result = cli(kedi_file(r'`import sys; sys.exit("\x1b[1mbye")`' + "\n", "exit.kedi"))
    assert (result.err, result.code) == ("\x1b[1mbye\n", 1)


def test_eval_and_test_lines_escape_unicode_line_separators(kedi_file, cli) -> None:
    """U+2028/U+2029 in feedback or a failure message reached the output raw, so a reader
    splitting the output into lines (Python's ``str.splitlines``, many log viewers) saw a
    suite's line broken in two."""
    name = kedi_file(
        "@eval: e:\n"
        "  > data: d:\n"
        '    = `["a\\u2028b"]`\n'
        "  > metric: m(d):\n"
        "    = `(0.5, d)`\n"
        "\n"
        "@test: t:\n"
        "  > case: c:\n"
        '    `raise ValueError("one\\u2029two")`\n'
    )
    result = cli(name, "--eval")
    assert result.out.splitlines()[:2] == ["Evals:", r"- e::m: 0.5000 | a\u2028b"]
    result = cli(name, "--test")
    assert result.out.splitlines() == ["Tests:", r"- t::c: FAIL | ValueError: one\u2029two"]
