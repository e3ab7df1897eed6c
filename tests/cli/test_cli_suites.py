"""``--test`` and ``--eval``: Kedi's report blocks and exit codes (docs/language.md#test-suites,
docs/language.md#aggregation, docs/language.md#exit-status)."""

from __future__ import annotations

import re

import pytest
from kedi_auto_cache import AUTO_CACHE, AUTO_PROGRAM

PROGRAM = """
    @initials(name: str) -> str:
      = `"".join(w[0].upper() for w in name.split())`

    @test: initials:
      > case: two_words:
        `assert initials("ada lovelace") == "AL"`
      > case: wrong:
        `assert initials("ada lovelace") == "XX", "nope"`
      > case: boom:
        `{}["x"]`

    @test: more:
      > case: padded:
        ```
        assert initials(" grace  hopper ") == "GH"
        ```

    @eval: initials:
      > data: people:
        = `[("ada lovelace", "AL"), ("alan turing", "AT"), ("grace hopper", "XX"), ("x", "X")]`
      > metric: exact(people):
        = `initials(people) == expected`

    @eval: graded:
      > data: people:
        = `[("ada lovelace", "AL"), ("grace hopper", "XX")]`
      > test_data: people:
        = `[("alan turing", "AT"), ("bo", "X")]`
      > metric: partial(people):
        = `(1.0, None) if initials(people) == expected else (0.5, f"got {initials(people)}")`
    """

TESTS_BLOCK = (
    "Tests:\n"
    "- initials::two_words: OK\n"
    "- initials::wrong: FAIL | AssertionError: nope\n"
    "- initials::boom: FAIL | KeyError: 'x'\n"
    "- more::padded: OK\n"
)
EVALS_BLOCK = "Evals:\n- initials::exact: 0.7500\n- graded::partial: 0.7500 | got B\n"


def test_tests_block_and_failure_exit(kedi_file, cli) -> None:
    result = cli(kedi_file(PROGRAM), "--test")
    assert (result.out, result.err, result.code) == (TESTS_BLOCK, "", 1)


def test_passing_tests_exit_0(kedi_file, cli) -> None:
    name = kedi_file("""
        @double(x: int) -> int:
          = `x * 2`

        @test: double:
          > case: small:
            `assert double(2) == 4`
        """)
    result = cli(name, "--test")
    assert (result.out, result.err, result.code) == ("Tests:\n- double::small: OK\n", "", 0)


def test_tests_generated_for_auto_procedures_run_after_the_files_own(kedi_file, cli) -> None:
    """The cache's suites named after an `> auto:` procedure it defines (language.md §4.5);
    a suite of the cache named after nothing the file generates is not run."""
    name = kedi_file(AUTO_PROGRAM)
    kedi_file(AUTO_CACHE, "prog.cache.kedi")
    result = cli(name, "--test")
    assert (result.out, result.err, result.code) == (
        "Tests:\n- own::uses: OK\n- double::gen: OK\n- double::genfail: FAIL | AssertionError: \n",
        "",
        1,
    )


def test_a_broken_auto_cache_fails_the_tests(kedi_file, cli) -> None:
    name = kedi_file(AUTO_PROGRAM)
    kedi_file("@double(x: int) -> int:\n  = `x * 2\n", "prog.cache.kedi")
    result = cli(name, "--test")
    assert (result.out, result.code) == ("", 1)
    assert result.err.startswith('Kedi parse error:\n\n  File "prog.cache.kedi", line 2, column 5')


def test_evals_block_exits_0_whatever_the_score(kedi_file, cli) -> None:
    result = cli(kedi_file(PROGRAM), "--eval")
    assert (result.out, result.err, result.code) == (EVALS_BLOCK, "", 0)


def test_with_both_flags_tests_run_and_return_first(kedi_file, cli) -> None:
    # docs/language.md#test-suites: "When given with --eval, --test runs and returns first."
    for flags in (("--eval", "--test"), ("--test", "--eval")):
        result = cli(kedi_file(PROGRAM), *flags)
        assert (result.out, result.err, result.code) == (TESTS_BLOCK, "", 1)


def test_row_errors_score_zero_with_feedback(kedi_file, cli) -> None:
    name = kedi_file("""
        @first(items: list) -> str:
          = `items[0]`

        @eval: first:
          > data: rows:
            = `[(["a"], "a"), ([], "b")]`
          > metric: same(rows):
            = `first(rows) == expected`
        """)
    result = cli(name, "--eval")
    assert result.code == 0
    assert result.err == ""
    assert re.fullmatch(
        r"Evals:\n- first::same: 0\.5000 \| error: IndexError: list index out of range\n",
        result.out,
    ), result.out


def test_feedback_of_several_lines_keeps_one_evals_line_per_suite(kedi_file, cli) -> None:
    """``- s::m: 0.5000 | line1`` then ``line2`` on a line of its own: the feedback's
    newlines broke the one-line-per-suite format (language.md §5.6); it is put on one line
    as a ``FAIL |`` message is (`--test`)."""
    name = kedi_file("""
        @eval: s:
          > data: rows:
            = `[1, 2]`
          > metric: m(rows):
            = `(0.5, "line1\\n  line2\\r\\nline3") if rows == 1 else (0.5, "x\\x1b")`

        @test: t:
          > case: c:
            `assert False, "first\\n  second"`
        """)
    result = cli(name, "--eval")
    assert (result.out, result.err, result.code) == (
        "Evals:\n- s::m: 0.5000 | line1 line2 line3; x\\x1b\n",
        "",
        0,
    )
    result = cli(name, "--test")
    assert result.out == "Tests:\n- t::c: FAIL | AssertionError: first second\n"


def test_a_failed_case_keeps_its_message_as_written_like_a_row_error(kedi_file, cli) -> None:
    # `FAIL | <ExcType>: <msg>` reads the message as a row error's `error: <ExcType>: <msg>`
    # does: its spaces kept, several lines put on one; they were collapsed to single spaces.
    name = kedi_file("""
        @boom(x: int) -> int:
          ```
          raise ValueError("neg  spaced ")
          ```

        @test: t:
          > case: direct:
            ```
            raise ValueError("a  b")
            ```
          > case: via_procedure:
            `boom(1)`
          > case: lines:
            ```
            raise ValueError("multi\\n  line")
            ```

        @eval: e:
          > data: d:
            = `[1]`
          > metric: m(d):
            = `boom(d)`
        """)
    tests = cli(name, "--test")
    assert (tests.out, tests.code) == (
        "Tests:\n"
        "- t::direct: FAIL | ValueError: a  b\n"
        "- t::via_procedure: FAIL | ValueError: neg  spaced \n"
        "- t::lines: FAIL | ValueError: multi line\n",
        1,
    )
    evals = cli(name, "--eval")
    assert evals.out == "Evals:\n- e::m: 0.0000 | error: ValueError: neg  spaced \n"


def test_missing_dataset_and_loading_errors_fail_the_command(kedi_file, cli) -> None:
    name = kedi_file("""
        @eval: missing:
          > data: rows:
            = `[1]`
          > metric: m(other):
            = `1.0`

        @eval: broken:
          > data: rows:
            = `1 / 0`
          > metric: m(rows):
            = `1.0`

        @eval: fine:
          > data: rows:
            = `[1, 2]`
          > metric: m(rows):
            = `rows > 1`
        """)
    result = cli(name, "--eval")
    assert result.code == 1
    assert result.out == "Evals:\n- fine::m: 0.5000\n"
    lines = result.err.splitlines()
    assert lines[0].startswith("Kedi eval error: missing::m: ")
    assert "other" in lines[0]
    assert any(line.startswith("Kedi eval error: broken::m: ") for line in lines)
    assert "ZeroDivisionError" in result.err
    assert "Traceback (most recent call last)" not in result.err


def test_a_data_loading_failure_prints_its_stack_trace(kedi_file, cli) -> None:
    """`--eval` printed a data-loading failure as one line (pytest shows its stack trace),
    and a fence in `> data:` was labelled ``in <program>``."""
    name = kedi_file("""
        @eval: q:
          > data: d:
            = ```
            xs = [1]
            return xs[3]
            ```
          > metric: m(d):
            = `1.0`
        """)
    result = cli(name, "--eval")
    assert result.code == 1
    assert result.err.splitlines()[1:] == [
        "Kedi stack trace:",
        '  File "prog.kedi", line 2, in data d',
        "    > data: d:",
        '  File "prog.kedi", line 3, in data d',
        "    = ```",
        '  File "prog.kedi", line 5, in data d (Python)',
        "    return xs[3]",
        "IndexError: list index out of range",
    ]


def test_empty_dataset_scores_zero_with_no_examples(kedi_file, cli) -> None:
    name = kedi_file("""
        @eval: empty:
          > data: rows:
            = `[]`
          > metric: m(rows):
            = `1.0`
        """)
    result = cli(name, "--eval")
    assert (result.out, result.err, result.code) == (
        "Evals:\n- empty::m: 0.0000 | no examples\n",
        "",
        0,
    )


def test_parse_error_fails_test_and_eval(kedi_file, cli) -> None:
    name = kedi_file("@eval: score\n")
    for flag in ("--test", "--eval"):
        result = cli(name, flag)
        assert result.out == ""
        assert result.err.startswith("Kedi parse error:")
        assert result.code == 1


def test_a_python_syntax_error_fails_every_command_as_under_pytest(kedi_file, cli) -> None:
    """It was a parse error for pytest and `parse` only: a run, `--test` and `--eval` exited 0
    while the broken procedure was never called (docs/language.md: embedded Python "is checked
    when the file is parsed")."""
    name = kedi_file("""
        @unused(x):
          = `x +`

        @double(n: int) -> int:
          = `n * 2`

        @test: double:
          > case: two:
            `assert double(2) == 4`

        @eval: e:
          > data: d:
            = `[(1, 1)]`
          > metric: m(d):
            = `d == expected`

        = <double(`3`)>
    """)
    for flags in ((), ("--test",), ("--eval",), ("parse",)):
        args = ("parse", name) if flags == ("parse",) else (name, *flags)
        result = cli(*args)
        assert result.code == 1, flags
        assert result.out == ""
        assert result.err.startswith('Kedi parse error:\n\n  File "prog.kedi", line 2, column 9')
        assert result.err.rstrip().endswith("Python syntax error: invalid syntax")


def test_suites_do_not_run_in_a_program_run(kedi_file, cli) -> None:
    result = cli(kedi_file(PROGRAM))
    assert (result.out, result.err, result.code) == ("", "", 0)


def test_invalid_optimized_prompts_fail_the_command(kedi_file, cli, tmp_path) -> None:
    name = kedi_file(PROGRAM)
    (tmp_path / "prog.kedi.optimized.json").write_text("{not json", encoding="utf-8")
    result = cli(name, "--test")
    assert result.out == ""
    assert result.code == 1
    assert "invalid optimized prompts in prog.kedi.optimized.json: " in result.err
    assert "Traceback (most recent call last)" not in result.err


def test_invalid_optimized_prompts_are_located_in_the_artifact(kedi_file, cli, tmp_path) -> None:
    """The Kedi stack trace names the artifact's failing line (§7: a header, then frames)."""
    name = kedi_file(PROGRAM)
    artifact = tmp_path / "prog.kedi.optimized.json"
    artifact.write_text('{\n  "f": {\n    "main": 3\n  }\n}\n', encoding="utf-8")
    result = cli(name, "--test")
    assert result.err.splitlines()[:3] == [
        "Kedi stack trace:",
        '  File "prog.kedi.optimized.json", line 3, in <optimized prompts>',
        '    "main": 3',
    ]
    artifact.write_text('{"f":\n {"main": "x",}}', encoding="utf-8")
    result = cli(name, "--test")
    assert result.err.splitlines()[1:3] == [
        '  File "prog.kedi.optimized.json", line 2, in <optimized prompts>',
        '    {"main": "x",}}',
    ]


def test_seed_command_line_scores_with_the_adapter_model(kedi_file, cli, openai_stub) -> None:
    """`kedi FILE --eval --adapter pydantic --adapter-model M`, M behind a keyless server."""
    pytest.importorskip("openai")
    openai_stub.arguments = lambda body: {"label": "positive"}
    name = kedi_file("""
        @classify(text: str) -> str:
          >> Classify the sentiment of <text> as [label: str]
          = <label>

        @eval: classify:
          > data: reviews:
            = `[("great", "positive"), ("awful", "negative")]`
          > metric: exact(reviews):
            = `classify(reviews) == expected`
        """)
    argv = (name, "--eval", "--adapter", "pydantic", "--adapter-model", "openai-chat:luna")
    result = cli(*argv, env={"OPENAI_BASE_URL": openai_stub.base_url})
    assert (result.out, result.err, result.code) == ("Evals:\n- classify::exact: 0.5000\n", "", 0)
    assert [body["model"] for _headers, body in openai_stub.requests] == ["luna", "luna"]


def test_unsupported_adapter_exits_2(kedi_file, cli) -> None:
    name = kedi_file("= `1`\n")
    for argv, env in (
        ((name, "--eval", "--adapter", "dspy"), {}),
        ((name, "--eval"), {"KEDI_ADAPTER": "langchain"}),
    ):
        result = cli(*argv, env=env)
        assert result.code == 2
        assert "pytest-kedi supports only the 'pydantic' adapter" in result.err
        assert result.out == ""


def test_cli_output_redacts_keys_and_escapes_surrogates(kedi_file, cli) -> None:
    """Issue 7 §5 / issue 10 §4: the CLI's own lines never show a key or crash on a surrogate."""
    name = kedi_file("""
        @echo(x: str) -> str:
          = `x`

        @test: echo:
          > case: leaks:
            `assert False, "key " + __import__("os").environ["GROQ_API_KEY"]`
          > case: cut:
            `assert False, "cut \\ud83d"`

        @eval: echo:
          > data: xs:
            = `[("a", "a")]`
          > metric: m(xs):
            = `(0.5, "bad key " + __import__("os").environ["GROQ_API_KEY"] + " \\udcff")`
        """)
    env = {"GROQ_API_KEY": "gsk-abcdefgh12345"}
    tests, evals = cli(name, "--test", env=env), cli(name, "--eval", env=env)
    assert "gsk-abcdefgh12345" not in tests.out + tests.err + evals.out + evals.err
    assert (tests.out, tests.code) == (
        "Tests:\n"
        "- echo::leaks: FAIL | AssertionError: key [REDACTED:GROQ_API_KEY]\n"
        "- echo::cut: FAIL | AssertionError: cut \\ud83d\n",
        1,
    )
    assert (evals.out, evals.code) == (
        "Evals:\n- echo::m: 0.5000 | bad key [REDACTED:GROQ_API_KEY] \\udcff\n",
        0,
    )


def test_a_program_path_that_cannot_be_read_is_one_line(cli, tmp_path) -> None:
    """A name too long or a link loop was a traceback from the directory check."""
    long_name = "a" * 300 + ".kedi"
    result = cli(long_name)
    assert (result.out, result.code) == ("", 1)
    assert result.err == f"cannot read {long_name}: File name too long\n"
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    result = cli("loop1", "--test")
    assert result.err == "cannot read loop1: Too many levels of symbolic links\n"
    assert result.code == 1
