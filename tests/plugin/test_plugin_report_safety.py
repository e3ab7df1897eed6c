"""Reports and printed text never break, never leak secrets (issue 10 §4, issue 7 §5)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from kedi_plugin_helpers import DEMO, ROW_KEYS, SUITE_KEYS, TEST_KEYS, Kedi

SECRET = "sk-test-0123456789abcdef"

#: Row feedback, an input repr, a row error, a suite error and a case message, each
#: carrying a lone surrogate (text that is not valid UTF-8).
SURROGATES = """\
@echo(x: str) -> str:
  = `x`

@eval: echo:
  > data: xs:
    = `[("caf\\udce9", "caf\\udce9"), ("bad", "x")]`
  > metric: same(xs):
    = ```
    if xs == "bad":
        raise ValueError("cut mid-emoji \\ud83d")
    return 0.5, "half \\udcff right"
    ```

@eval: loader:
  > data: xs:
    = ```
    raise RuntimeError("no data \\udc80")
    ```
  > metric: m(xs):
    = `1.0`

@test: echo:
  > case: broken:
    `assert echo("\\ud83d") == "x", "answer \\ud83d cut"`
"""


def test_lone_surrogates_never_break_a_run(kedi: Kedi) -> None:
    kedi.write("odd.kedi", SURROGATES)
    result = kedi.subprocess(
        "--kedi-eval",
        "--kedi-report",
        "r.json",
        "--kedi-rows-jsonl",
        "rows.jsonl",
        "--junitxml",
        "junit.xml",
        "-v",
        "--kedi-min-score",
        "0.9",
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=0, failed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    document = kedi.json("r.json")
    suites = {s["procedure"]: s for s in document["suites"]}
    assert set(suites) == {"echo", "loader"}
    assert all(set(s) == set(SUITE_KEYS) for s in suites.values())
    rows = suites["echo"]["rows"]
    assert all(set(r) == set(ROW_KEYS) for r in rows)
    assert rows[0]["feedback"] == "half \\udcff right"
    assert rows[0]["input"] == "'caf\\udce9'"
    assert rows[1]["error"].startswith("ValueError: cut mid-emoji \\ud83d")
    assert "no data \\udc80" in suites["loader"]["error"]
    (case,) = document["tests"]
    assert set(case) == set(TEST_KEYS)
    assert "answer \\ud83d cut" in case["message"]
    jsonl = (kedi.pytester.path / "rows.jsonl").read_text("utf-8").splitlines()
    assert json.loads(jsonl[0])["feedback"] == "half \\udcff right"
    ET.parse(kedi.pytester.path / "junit.xml")  # well-formed
    result.stdout.fnmatch_lines(["*half \\udcff right*", "*answer \\ud83d cut*"])


LEAKY = """\
@leak(x: str) -> str:
  = `x`

@eval: leak:
  > data: xs:
    = `[("a", "a")]`
  > metric: m(xs):
    = ```
    raise RuntimeError("provider said: bad key " + __import__("os").environ["OPENAI_API_KEY"])
    ```

@test: leak:
  > case: shows_key:
    `assert False, "key=" + __import__("os").environ["MY_SERVICE_API_KEY"]`
"""


def test_credential_values_are_redacted_everywhere(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("MY_SERVICE_API_KEY", "other-secret-value")
    kedi.write("leak.kedi", LEAKY)
    result = kedi.subprocess(
        "--kedi-eval",
        "--kedi-report",
        "r.json",
        "--kedi-rows-jsonl",
        "rows.jsonl",
        "--junitxml",
        "junit.xml",
        "-vv",
        "--kedi-min-score",
        "0.9",
    )
    result.assert_outcomes(failed=2)
    printed = result.stdout.str() + result.stderr.str()
    for path in ("r.json", "rows.jsonl", "junit.xml"):
        text = (kedi.pytester.path / path).read_text("utf-8")
        assert SECRET not in text and "other-secret-value" not in text, path
    assert SECRET not in printed and "other-secret-value" not in printed
    assert "[REDACTED:OPENAI_API_KEY]" in (kedi.pytester.path / "r.json").read_text("utf-8")
    assert "key=[REDACTED:MY_SERVICE_API_KEY]" in printed


HOOK_CONFTEST = """\
import os


def pytest_kedi_suite_result(item, result):
    cut = "\\\\udcff".encode().decode("unicode_escape")
    raise RuntimeError("hook saw " + os.environ["OPENAI_API_KEY"] + " and " + cut)
"""


def test_python_tracebacks_of_kedi_items_are_cleaned_too(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure that is not Kedi's own (a conftest hook raised) keeps pytest's traceback
    representation, with the same cleaning applied to every line of it."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    kedi.write("demo.kedi", DEMO)
    kedi.write("conftest.py", HOOK_CONFTEST)
    result = kedi.subprocess("--kedi-eval", "--kedi-report", "r.json", "--junitxml", "junit.xml")
    printed = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in printed
    result.assert_outcomes(passed=2, failed=1)
    assert SECRET not in printed
    result.stdout.fnmatch_lines(
        ["*RuntimeError: hook saw [[]REDACTED:OPENAI_API_KEY[]] and \\udcff*"]
    )
    for name in ("r.json", "junit.xml"):
        assert SECRET not in (kedi.pytester.path / name).read_text("utf-8"), name
    (suite,) = kedi.json("r.json")["suites"]
    assert suite["error"] == "RuntimeError: hook saw [REDACTED:OPENAI_API_KEY] and \\udcff"


PRINTING = """\
@test: printing:
  > case: prints:
    ```
    import os
    print("key " + os.environ["OPENAI_API_KEY"] + " printed")
    assert False, "see the output"
    ```
"""


def test_captured_output_sections_are_cleaned(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a Kedi item printed travels in its report's sections: cleaned like every other
    text (the credential redacted), in the terminal and JUnit."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    kedi.write("printing.kedi", PRINTING)
    result = kedi.subprocess("--kedi-eval", "--junitxml", "junit.xml", "-o", "junit_logging=all")
    result.assert_outcomes(failed=1)
    printed = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in printed
    assert SECRET not in printed
    result.stdout.fnmatch_lines(
        ["*Captured stdout call*", "key [[]REDACTED:OPENAI_API_KEY[]] printed"]
    )
    junit = (kedi.pytester.path / "junit.xml").read_text("utf-8")
    assert SECRET not in junit and "[REDACTED:OPENAI_API_KEY]" in junit


CONTROLS = """\
@eval: loud:
  > data: d:
    = `[1, 2]`
  > metric: m(d):
    = `(0.5, "x\\x1b[31mRED\\x00")`
"""


def test_control_characters_never_reach_the_terminal(kedi: Kedi) -> None:
    """An ESC sequence or a NUL in feedback restyled or garbled the CI log; the JSON keeps
    the text as it was."""
    kedi.write("loud.kedi", CONTROLS)
    result = kedi.run("--kedi-eval", "--kedi-min-score", "0.9", "--kedi-report", "r.json")
    out = result.stdout.str()
    assert "\x1b" not in out and "\x00" not in out
    result.stdout.fnmatch_lines(["- loud::m: 0.5000 | x\\x1b[[]31mRED\\x00; *[[]FAILED*"])
    result.stdout.fnmatch_lines(["*row 0: score 0.5000 | input 1 | x\\x1b[[]31mRED\\x00"])
    assert kedi.json("r.json")["suites"][0]["rows"][0]["feedback"] == "x\x1b[31mRED\x00"


SKIPS = """\
```
import os
import pytest
```

@test: reasons:
  > case: skipped:
    `pytest.skip("skip " + os.environ["OPENAI_API_KEY"] + " cut \\udcff")`
  > case: xfailed:
    `pytest.xfail("xfail " + os.environ["OPENAI_API_KEY"] + " cut \\udcff")`

@eval: reasons:
  > data: xs:
    = `pytest.skip("no data " + os.environ["OPENAI_API_KEY"] + " cut \\udcff")`
  > metric: m(xs):
    = `True`
"""


def test_skip_and_xfail_reasons_are_cleaned(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    """A skip or xfail reason (pytest.skip/xfail in a case, a dataset's pytest.skip) kept
    the credential and the lone surrogate: shown as is in the short summary and JUnit, and
    under xdist the worker could not send the report (INTERNALERROR, no test ran)."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    kedi.write("reasons.kedi", SKIPS)
    result = kedi.subprocess("--kedi-eval", "-rsx", "--junitxml", "junit.xml")
    printed = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in printed
    result.assert_outcomes(skipped=2, xfailed=1)
    assert SECRET not in printed
    result.stdout.fnmatch_lines_random(
        [
            "SKIPPED [[]1[]] reasons.kedi:8: skip [[]REDACTED:OPENAI_API_KEY[]] cut \\udcff",
            "SKIPPED [[]1[]] reasons.kedi:14: no data [[]REDACTED:OPENAI_API_KEY[]] cut \\udcff",
            "XFAIL reasons.kedi::test:reasons::xfailed - xfail [[]REDACTED:OPENAI_API_KEY[]] "
            "cut \\udcff",
        ]
    )
    junit = (kedi.pytester.path / "junit.xml").read_text("utf-8")
    assert SECRET not in junit
    # each skip's message and text, the xfail's message
    assert junit.count("[REDACTED:OPENAI_API_KEY] cut \\udcff") == 5


WARNS = """\
```
import os
import warnings
```

@test: warns:
  > case: warns:
    `warnings.warn("case " + os.environ["OPENAI_API_KEY"] + " cut \\udcff")`

@eval: warns:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `warnings.warn("row " + os.environ["OPENAI_API_KEY"] + " cut \\udcff") or True`
"""


def test_warnings_of_kedi_code_are_cleaned(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warning Kedi code gave kept the credential and the lone surrogate in the warnings
    summary, and under xdist the worker could not send it (INTERNALERROR, no test ran)."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    kedi.write("warns.kedi", WARNS)
    result = kedi.subprocess("--kedi-eval", "--kedi-report", "r.json")
    printed = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in printed
    result.assert_outcomes(passed=2, warnings=2)
    assert SECRET not in printed
    result.stdout.fnmatch_lines_random(
        [
            "*warns.kedi:8: UserWarning: case [[]REDACTED:OPENAI_API_KEY[]] cut \\udcff",
            "*warns.kedi:14: UserWarning: row [[]REDACTED:OPENAI_API_KEY[]] cut \\udcff",
        ]
    )


def test_a_parse_error_message_quoting_control_characters_is_escaped(kedi: Kedi) -> None:
    """A message quoting the rest of a line (`'> profile: …' must end with ':'`) printed its
    lone CR and ESC as they were in the collection error and the short test summary: the
    CR sent the cursor back over the line, the ESC restyled the log."""
    kedi.write("cr.kedi", "> profile: reviewer:\r  > adapter: x\x1b[31mRED\n= ok\n")
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    out = result.stdout.str()
    assert "\x1b" not in out and "\r" not in out
    message = "'> profile: reviewer:\\x0d  > adapter: x\\x1b[[]31mRED' must end with ':'*"
    result.stdout.fnmatch_lines([f"  {message}", "ERROR cr.kedi - cr.kedi:1:44: *"])
    (error,) = kedi.json("r.json")["errors"]
    assert "\x1b" not in error["message"] and "\r" not in error["text"], error
