"""Option validation: every value is checked once, named with its source (issue 10 §13)."""

from __future__ import annotations

import threading

import pytest
from kedi_plugin_helpers import DEMO, Kedi

BOOLEANS = "1/0, true/false, yes/no, on/off"

#: (how the value is given, option, value, message after "ERROR: <option> (<source>): ")
#: kinds: "flag" = command line, "env" = environment, "ini" = pytest.ini, "o" = -o override.
INVALID = [
    # min score
    ("flag", "--kedi-min-score", "high", "expected a number, got 'high'"),
    ("flag", "--kedi-min-score", "nan", "expected a finite number, got 'nan'"),
    ("env", "KEDI_MIN_SCORE", "inf", "expected a finite number, got 'inf'"),
    ("ini", "kedi_min_score", "abc", "expected a number, got 'abc'"),
    ("o", "kedi_min_score", "abc", "expected a number, got 'abc'"),
    # per-suite min scores
    (
        "ini",
        "kedi_min_scores",
        "a.kedi::eval:x",
        "expected 'NODEID-PATTERN = F', got 'a.kedi::eval:x'",
    ),
    ("ini", "kedi_min_scores", "a.kedi::eval:x = abc", "expected a number, got 'abc'"),
    ("ini", "kedi_min_scores", "a.kedi::eval:x = 1e999", "expected a finite number, got '1e999'"),
    # error budget
    ("flag", "--kedi-max-errors", "2.5", "expected a whole row count*"),
    ("flag", "--kedi-max-errors", "-1", "expected a count or a fraction >= 0, got '-1'"),
    ("env", "KEDI_MAX_ERRORS", "lots", "expected a number, got 'lots'"),
    ("ini", "kedi_max_errors", "abc", "expected a number, got 'abc'"),
    # concurrency
    ("flag", "--kedi-concurrency", "0", "expected a positive integer, got '0'"),
    # past what a count can be: every suite failed at its dataset (islice) instead
    ("flag", "--kedi-max-rows", "9" * 23, f"expected a positive integer, got '{'9' * 23}'"),
    ("env", "KEDI_RETRIES", "9" * 23, f"expected a whole number >= 0, got '{'9' * 23}'"),
    ("env", "KEDI_CONCURRENCY", "2.5", "expected a positive integer, got '2.5'"),
    ("ini", "kedi_concurrency", "abc", "expected a positive integer, got 'abc'"),
    ("ini", "kedi_concurrency", "-3", "expected a positive integer, got -3"),
    # timeout: positive, finite, and within what threads and event loops can wait for
    ("flag", "--kedi-timeout", "-1", "expected a positive number of seconds*"),
    ("flag", "--kedi-timeout", "0", "expected a positive number of seconds*"),
    ("flag", "--kedi-timeout", "1e10", "expected a positive number of seconds up to *, got '1e10'"),
    ("env", "KEDI_TIMEOUT", "1e12", "expected a positive number of seconds up to *, got '1e12'"),
    ("env", "KEDI_TIMEOUT", "soon", "expected a number, got 'soon'"),
    (
        "ini",
        "kedi_timeout",
        "1e12",
        "expected a positive number of seconds up to *, got 1e+12",
    ),
    ("ini", "kedi_timeout", "abc", "expected a number, got 'abc'"),
    # choices
    ("flag", "--kedi-rows", "rows", "expected one of auto, subtests, summary, got 'rows'"),
    ("env", "KEDI_ROWS", "all", "expected one of auto, subtests, summary, got 'all'"),
    ("ini", "kedi_rows", "all", "expected one of auto, subtests, summary, got 'all'"),
    ("flag", "--kedi-split", "train", "expected one of auto, data, test_data, got 'train'"),
    ("env", "KEDI_SPLIT", "train", "expected one of auto, data, test_data, got 'train'"),
    ("ini", "kedi_split", "train", "expected one of auto, data, test_data, got 'train'"),
    # booleans
    ("env", "KEDI_EVAL", "maybe", f"expected a boolean ({BOOLEANS}), got 'maybe'"),
    ("ini", "kedi_collect", "maybe", f"expected a boolean ({BOOLEANS}), got 'maybe'"),
    # strings and paths that cannot be empty on the command line
    ("flag", "--kedi-model", " ", "expected a model name, got ' '"),
    ("flag", "--kedi-report", "", "expected a file path, got ''"),
    ("flag", "--kedi-rows-jsonl", "", "expected a file path, got ''"),
]


def _given(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, kind: str, name: str, value: str
) -> list[str]:
    """Apply one option value; return the extra command-line arguments."""
    if kind == "flag":
        return [f"{name}={value}"]
    if kind == "env":
        monkeypatch.setenv(name, value)
        return []
    if kind == "ini":
        text = value if name != "kedi_min_scores" else f"\n    {value}"
        kedi.pytester.makeini(f"[pytest]\n{name} = {text}\n")
        return []
    assert kind == "o"
    return ["-o", f"{name}={value}"]


# The table is checked single-process; the usage error under -n 2 is checked by
# test_invalid_values_are_reported_without_kedi_collection (both ways).
@pytest.mark.single_process("options are validated before any xdist worker starts")
@pytest.mark.parametrize(("kind", "name", "value", "message"), INVALID)
def test_invalid_option_values_are_one_line_usage_errors(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, kind: str, name: str, value: str, message: str
) -> None:
    kedi.write("demo.kedi", DEMO)
    switch = [] if name == "KEDI_EVAL" else ["--kedi-eval"]
    result = kedi.run(*switch, *_given(kedi, monkeypatch, kind, name, value))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    source = {"flag": "command line", "env": "environment", "ini": "ini file", "o": "-o override"}
    result.stderr.fnmatch_lines([f"ERROR: {name} ({source[kind]}): {message}"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize("kind", ["flag", "env", "ini"])
def test_the_largest_valid_timeout_runs(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """The upper bound is what the row pool can wait for: no OverflowError at run time."""
    kedi.write("demo.kedi", DEMO)
    names = {"flag": "--kedi-timeout", "env": "KEDI_TIMEOUT", "ini": "kedi_timeout"}
    args = _given(kedi, monkeypatch, kind, names[kind], repr(threading.TIMEOUT_MAX))
    result = kedi.run("--kedi-eval", "--kedi-concurrency", "2", *args)
    result.assert_outcomes(passed=3)


def test_invalid_values_are_reported_without_kedi_collection(kedi: Kedi) -> None:
    """Validation happens once at startup, whether or not .kedi files are collected."""
    result = kedi.run("--kedi-timeout", "1e10")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --kedi-timeout (command line): *"])


def test_command_line_wins_over_an_invalid_environment_value(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the value in effect is validated (command line > environment > ini)."""
    kedi.write("demo.kedi", DEMO)
    monkeypatch.setenv("KEDI_CONCURRENCY", "zero")
    kedi.run("--kedi-eval", "--kedi-concurrency", "2").assert_outcomes(passed=3)


def test_toml_native_values_are_accepted(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.pytester.makefile(
        ".toml",
        pyproject="[tool.pytest]\nkedi_min_score = 0.5\nkedi_concurrency = 2\n"
        "kedi_timeout = 30\nkedi_collect = true\nkedi_rows = 'summary'\n",
    )
    result = kedi.run("--kedi-eval", "-rA")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["kedi: evals on, rows summary*"])


def test_toml_value_of_the_wrong_type_names_the_option(kedi: Kedi) -> None:
    kedi.pytester.makefile(".toml", pyproject="[tool.pytest]\nkedi_concurrency = 'four'\n")
    result = kedi.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: kedi_concurrency (ini file): expected a positive integer, got 'four'"]
    )


@pytest.mark.parametrize(
    ("returned", "shown"),
    [
        ("42", "42 (int)"),
        ("''", "'' (str)"),
        ("object()", "<object object at *> (object)"),
        # its repr raising failed each suite with that error (exit 1), not a usage error
        (
            "type('Odd', (), {'__repr__': lambda self: 1 / 0})()",
            "<unrepresentable Odd: ZeroDivisionError> (Odd)",
        ),
    ],
)
def test_a_model_hook_returning_no_model_is_a_usage_error(
    kedi: Kedi, returned: str, shown: str
) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.pytester.makeconftest(
        "import pytest\n\n"
        "@pytest.hookimpl(optionalhook=True)\n"
        f"def pytest_kedi_model(config):\n    return {returned}\n"
    )
    result = kedi.subprocess("--kedi-eval")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(
        [
            f"*pytest_kedi_model hook returned {shown}; expected a pydantic-ai Model, "
            "a model name such as 'openai:gpt-4o', or None*"
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "program failed to load" not in result.stdout.str()
