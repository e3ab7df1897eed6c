"""Test-case items: shared runtime, assertion introspection, Kedi stack traces (issue 4 §5)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from kedi_plugin_helpers import Kedi

CASES = """\
```
seen = []
```

@double(x: int) -> int:
  = `x * 2`

@test: double:
  > case: first:
    `seen.append("first")`
  > case: shared_runtime:
    `assert seen == ["first"]`
  > case: compare:
    ```
    value = double(21)
    assert value == 41
    ```
  > case: boom:
    `{}["missing"]`
"""


@pytest.mark.single_process("a file's cases share one runtime only when one process runs them")
def test_cases_run_in_order_on_the_shared_runtime(kedi: Kedi) -> None:
    kedi.write("cases.kedi", CASES)
    result = kedi.run("--kedi-eval", "-k", "first or shared_runtime")
    result.assert_outcomes(passed=2, deselected=2)


def test_cases_run_without_eval_flag_when_collected(kedi: Kedi) -> None:
    kedi.write("cases.kedi", CASES)
    kedi.pytester.makeini("[pytest]\nkedi_collect = true\n")
    kedi.run().assert_outcomes(passed=2, failed=2)


def test_failing_assert_shows_introspection_and_the_kedi_line(kedi: Kedi) -> None:
    kedi.write("cases.kedi", CASES)
    result = kedi.run("--kedi-eval", "cases.kedi::test:double::compare")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "cases.kedi:16: AssertionError: assert 42 == 41",
            "@test: double > case: compare failed:",
            "Kedi stack trace:",
            '*File "*cases.kedi", line 16*',
            "*assert value == 41",
            "AssertionError: assert 42 == 41",
        ]
    )
    out = result.stdout.str()
    assert "Traceback" not in out
    assert "pytest_kedi/" not in out


def test_other_exceptions_show_the_kedi_stack_trace(kedi: Kedi) -> None:
    kedi.write("cases.kedi", CASES)
    result = kedi.run("--kedi-eval", "cases.kedi::test:double::boom")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "cases.kedi:19: KeyError: 'missing'",
            "Kedi stack trace:",
            '*File "*cases.kedi", line 19*',
            "KeyError: 'missing'",
        ]
    )
    assert "Traceback" not in result.stdout.str()


BAD_STR = """\
```
class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("str failed")

def bad():
    raise BadStr()
```

@test: t:
  > case: direct:
    `raise BadStr("q")`

@eval: e:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `bad()`
"""


def test_an_exception_whose_str_raises_is_reported_as_python_would(kedi: Kedi) -> None:
    """It was ``RuntimeError: str failed`` from ``__str__``, at the case header, without a
    Kedi stack trace."""
    kedi.write("bad.kedi", BAD_STR)
    result = kedi.run("--kedi-eval", "--kedi-rows", "summary")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "bad.kedi:12: BadStr: <exception str() failed>",
            "Kedi stack trace:",
            '*File "*bad.kedi", line 12, in case direct (Python)',
            "BadStr: <exception str() failed>",
            "- t::direct: FAIL | BadStr: <exception str() failed>",
            "- e::m: 0.0000 | error: BadStr: <exception str() failed>  [passed]",
        ]
    )
    assert "str failed" not in result.stdout.str().replace("str() failed", "")


FAILS = """\
```
import pytest
```

@helper() -> int:
  ```
  x = 1
  pytest.fail("failed in helper")
  ```
  = `1`

@ask(word: str) -> str:
  [x] << Please <word>
  = <x>

@test: t:
  > case: via_helper:
    `helper()`
  > case: by_the_model:
    `ask("FAIL")`
"""

FAILING_MODEL = """
import pytest
from pydantic_ai.models.function import FunctionModel


def answer(messages, info):
    pytest.fail("unexpected prompt in fake model")


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(answer, model_name="odd")
"""


def test_pytest_fail_shows_the_users_frames_only(kedi: Kedi) -> None:
    """`pytest.fail()` in Kedi code or in the model showed pytest's own traceback: frames
    named ``__kedi_block__`` and pydantic-ai's and anyio's internals. Its Kedi stack trace
    starts at the case's line and labels each `.kedi` line as every other case failure's
    does (it had neither)."""
    kedi.pytester.makeconftest(FAILING_MODEL)
    kedi.write("fails.kedi", FAILS)
    result = kedi.run("--kedi-eval", "--tb=short")
    result.assert_outcomes(failed=2)
    for lines in (  # xdist may order the failures differently
        [
            "fails.kedi:8: Failed: failed in helper",
            "*",
            "Kedi stack trace:",
            '  File "fails.kedi", line 17, in case via_helper',
            "    > case: via_helper:",
            '  File "fails.kedi", line 18, in case via_helper',
            "    `helper()`",
            '  File "fails.kedi", line 8, in helper (Python)',
            '    pytest.fail("failed in helper")',
            "Failed: failed in helper",
        ],
        [
            "fails.kedi:20: Failed: unexpected prompt in fake model",
            "*",
            "Kedi stack trace:",
            '  File "fails.kedi", line 19, in case by_the_model',
            "    > case: by_the_model:",
            '  File "fails.kedi", line 20, in case by_the_model',
            '    `ask("FAIL")`',
            '  File "conftest.py", line 6, in answer',
            '    pytest.fail("unexpected prompt in fake model")',
            "Failed: unexpected prompt in fake model",
        ],
        ["- t::via_helper: FAIL | Failed: failed in helper"],
    ):
        result.stdout.fnmatch_lines(lines)
    out = result.stdout.str()
    for internal in ("__kedi_block__", "pydantic_ai", "anyio", "pytest_kedi/"):
        assert internal not in out, internal


def test_a_message_over_several_lines_is_kept_where_there_is_room(kedi: Kedi) -> None:
    """The stack trace and the JSON report keep its lines; one-line places its first."""
    kedi.write(
        "nl.kedi", '@test: t:\n  > case: nl:\n    `raise ValueError("line one\\nline two")`\n'
    )
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "nl.kedi:3: ValueError: line one",
            "ValueError: line one",
            "line two",
            "- t::nl: FAIL | ValueError: line one",
        ]
    )
    assert kedi.json("r.json")["tests"][0]["message"] == "ValueError: line one\nline two"


def test_assertion_comparisons_follow_pytest_verbosity(kedi: Kedi) -> None:
    kedi.write(
        "lists.kedi",
        "@test: lists:\n  > case: diff:\n    `assert [1, 2, 3] == [1, 2, 4]`\n",
    )
    result = kedi.run("--kedi-eval")
    result.stdout.fnmatch_lines(["*At index 2 diff: 3 != 4*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_an_assertion_diff_is_shown_once(kedi: Kedi) -> None:
    """Keeping a message's lines showed pytest's assertion diff twice (its last line
    replaced, the rest kept)."""
    kedi.write("lists.kedi", '@test: t:\n  > case: c:\n    `assert "GH" == "GX"`\n')
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=1)
    # On CI (``CI`` set) pytest's short summary repeats the whole message; the
    # failure section is where the diff must appear once.
    failures = result.stdout.str().split("short test summary info")[0]
    assert failures.count("  - GX") == 1


def test_a_pytest_fail_message_over_several_lines_keeps_its_first(kedi: Kedi) -> None:
    """A multi-line `pytest.fail()` message (``pytest.warns``' "Regex pattern did not
    match", ...) was reported by its last line, without ``Failed:``."""
    kedi.write(
        "pf.kedi",
        "```\nimport pytest, warnings\n```\n\n@test: p:\n  > case: multi:\n"
        '    `pytest.fail("first line\\nsecond line")`\n'
        "  > case: warns:\n    ```\n"
        '    with pytest.warns(UserWarning, match="nope"):\n'
        '        warnings.warn("something else", UserWarning)\n    ```\n',
    )
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "-W", "ignore::UserWarning")
    result.assert_outcomes(failed=2)
    for lines in (  # xdist may order the failures differently
        ["pf.kedi:7: Failed: first line", "*", "Failed: first line", "second line"],
        ["pf.kedi:10: Failed: Regex pattern did not match any of the 1 warnings emitted."],
        [
            "- p::multi: FAIL | Failed: first line",
            "- p::warns: FAIL | Failed: Regex pattern did not match any of the 1 warnings emitted.",
        ],
    ):
        result.stdout.fnmatch_lines(lines)
    messages = [test["message"] for test in kedi.json("r.json")["tests"]]
    assert messages[0] == "Failed: first line\nsecond line"
    assert messages[1].startswith("Failed: Regex pattern did not match")
    assert messages[1].endswith("Emitted warnings: [UserWarning('something else')].")


LIB = """\
```
def positive(x):
    if x <= 0:
        raise ValueError(f"not positive: {x}")
    return x
```

@checked(x: int) -> int:
  = `positive(x)`

@strict(x: int) -> int:
  ```
  import pytest
  pytest.fail(f"strict rejected {x}")
  ```
  = `x`

> export: checked, strict
"""


@pytest.mark.parametrize("tb", ["line", "short"])
def test_a_failure_in_an_imported_module_names_that_modules_line(kedi: Kedi, tb: str) -> None:
    """The failure's location (header, ``--tb=line``, short summary, JUnit) named the
    case's file with the module's line: ``main.kedi:13`` for a 7-line ``main.kedi``."""
    kedi.write("sub/lib.kedi", LIB)
    kedi.write(
        "sub/main.kedi",
        "> import: lib\n\n@test: t:\n  > case: negative:\n    `checked(-1)`\n"
        "  > case: strict:\n    `strict(-1)`\n  > case: here:\n    `assert checked(1) == 2`\n",
    )
    result = kedi.run("--kedi-eval", f"--tb={tb}", "--junitxml", "j.xml")
    result.assert_outcomes(failed=3)
    for line in (  # xdist may order them differently
        "*sub/lib.kedi:4: ValueError: not positive: -1",
        "*sub/lib.kedi:14: Failed: strict rejected -1",
        "*sub/main.kedi:9: AssertionError: assert 1 == 2",
    ):
        result.stdout.fnmatch_lines([line])
    if tb == "short":  # the failure's text in the JUnit XML starts with the location
        junit = (kedi.pytester.path / "j.xml").read_text()
        assert ">sub/lib.kedi:4: ValueError: not positive: -1" in junit


def test_a_case_catches_a_procedures_exception_by_its_class(kedi: Kedi) -> None:
    """``pytest.raises(ZeroDivisionError)`` around a procedure call missed the error (a
    `KediExecutionError`), and the failure then said ``ZeroDivisionError``."""
    kedi.write(
        "catch.kedi",
        "```\nimport pytest\nclass Boom(Exception):\n    pass\n```\n\n"
        "@div(x: int) -> int:\n  = `1 // x`\n\n"
        "@boom() -> int:\n  = `(_ for _ in ()).throw(Boom('b'))`\n\n"
        "@test: t:\n  > case: zero:\n    ```\n    with pytest.raises(ZeroDivisionError):\n"
        "        div(0)\n    ```\n  > case: own:\n    ```\n    try:\n        boom()\n"
        "    except Boom as error:\n        assert str(error.original) == 'b'\n    ```\n",
    )
    kedi.run("--kedi-eval").assert_outcomes(passed=2)


def test_an_assertion_diff_under_colour_is_kept_plain(kedi: Kedi, monkeypatch) -> None:
    """With colour on, pytest highlights the diff; the case's message showed (and the
    JSON report stored) the escapes as ``\\x1b[0m\\x1b[91m- GX...``."""
    monkeypatch.setenv("PY_COLORS", "1")
    kedi.write("lists.kedi", '@test: t:\n  > case: c:\n    `assert "GH" == "GX"`\n')
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(failed=1)
    assert "\\x1b" not in result.stdout.str()
    message = kedi.json("r.json")["tests"][0]["message"]
    assert message == "AssertionError: assert 'GH' == 'GX'\n  \n  - GX\n  + GH"


def test_failure_locations_are_relative_to_where_pytest_runs(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from a subdirectory, the failure's ``file.kedi:LINE`` was relative to the rootdir
    (``evals/sub/x.kedi``, no such file from there), the stack trace below it to the
    working directory (``sub/x.kedi``)."""
    kedi.write("pytest.ini", "[pytest]\n")
    kedi.write(
        "evals/sub/x.kedi",
        "@test: t:\n  > case: c:\n    `assert 1 == 2`\n\n"
        "@eval: e:\n  > data: d:\n    = `[1]`\n  > metric: m(d):\n    = `0.0`\n",
    )
    monkeypatch.chdir(kedi.pytester.path / "evals")
    result = kedi.run("--kedi-eval", "--kedi-min-score", "0.5", "--tb=line", "sub/x.kedi")
    result.assert_outcomes(failed=2)
    for line in (  # xdist may order them differently
        "sub/x.kedi:3: AssertionError: assert 1 == 2",
        "sub/x.kedi:5: @eval: e failed: score 0.0000 is below the min score 0.5000",
    ):
        result.stdout.fnmatch_lines([line])
    assert "evals/sub/x.kedi:" not in result.stdout.str()


CHAINS = """\
```
class Boom(Exception):
    pass
def lower():
    raise KeyError("inner")
```

@test: e:
  > case: chained:
    ```
    try:
        lower()
    except KeyError as e:
        raise Boom("outer") from e
    ```
  > case: notes:
    ```
    e = ValueError("with note")
    e.add_note("note one")
    raise e
    ```
  > case: group:
    `raise ExceptionGroup("grp", [ValueError("a"), TypeError("b")])`
  > case: assert_note:
    ```
    try:
        assert 1 == 2
    except AssertionError as e:
        e.add_note("assert note")
        raise
    ```
"""


def test_causes_notes_and_group_members_are_shown(kedi: Kedi) -> None:
    """``raise ... from e``, ``add_note()`` and an exception group's members were dropped
    from every output (pytest shows all three for the same code in a ``.py`` test)."""
    kedi.write("chains.kedi", CHAINS)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(failed=4)
    for lines in (  # xdist may order the failures differently
        [
            "Kedi stack trace:",
            '  File "chains.kedi", line 12',
            "    lower()",
            '  File "chains.kedi", line 5, in lower',
            '    raise KeyError("inner")',
            "KeyError: 'inner'",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            '  File "chains.kedi", line 9, in case chained',
            "*",
            "Boom: outer",
        ],
        ["ValueError: with note", "note one"],
        [
            "ExceptionGroup: grp (2 sub-exceptions)",
            "  +-+---------------- 1 ----------------",
            "    | ValueError: a",
            "    +---------------- 2 ----------------",
            "    | TypeError: b",
        ],
    ):
        result.stdout.fnmatch_lines(lines)
    messages = {t["case"]: t["message"] for t in kedi.json("r.json")["tests"]}
    assert messages["chained"] == "Boom: outer"
    assert messages["notes"] == "ValueError: with note\nnote one"
    assert messages["group"].startswith("ExceptionGroup: grp (2 sub-exceptions)\n  +-+")
    assert messages["assert_note"] == "AssertionError: assert 1 == 2\nassert note"
    assert "__kedi" not in result.stdout.str()


ODD_NOTES = """\
```
class Unprintable:
    def __str__(self):
        raise ValueError("no str")
    def __repr__(self):
        raise ValueError("no repr")
```

@test: e:
  > case: unprintable_note:
    ```
    e = KeyError("k")
    e.__notes__ = [Unprintable(), "note two"]
    raise e
    ```
  > case: notes_not_a_list:
    ```
    e = ValueError("v")
    e.__notes__ = 5
    raise e
    ```
"""


def test_notes_that_do_not_print_show_as_python_shows_them(kedi: Kedi) -> None:
    """A note whose ``str()`` raised replaced the case's failure with that error and
    pytest-kedi's own traceback; Python prints ``<note str() failed>`` (and a ``__notes__``
    that is not a list as its ``repr()``) under the exception's line."""
    kedi.write("notes.kedi", ODD_NOTES)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["KeyError: 'k'", "<note str() failed>", "note two"])
    result.stdout.fnmatch_lines(["ValueError: v", "5"])
    assert "pytest_kedi/" not in result.stdout.str()
    messages = {t["case"]: t["message"] for t in kedi.json("r.json")["tests"]}
    assert messages["unprintable_note"] == "KeyError: 'k'\n<note str() failed>\nnote two"
    assert messages["notes_not_a_list"] == "ValueError: v\n5"


HELPERS = """\
def parse(text):
    return int(text)


def outer(text):
    return parse(text)


def twice(proc, text):
    return proc(text) * 2
"""

USES_HELPERS = """\
```
import helpers
```

@conv(x: str) -> int:
  = `helpers.outer(x)`

@doubled(x: str) -> int:
  = `helpers.twice(conv, x)`

@test: conv:
  > case: bad:
    `assert conv("zz") == 1`
  > case: through:
    `assert doubled("zz") == 2`
"""


def test_a_stack_trace_shows_the_users_python_helper_frames(kedi: Kedi) -> None:
    """An exception raised in the user's own `.py` module, called from Kedi, ended the
    Kedi stack trace at the `.kedi` line that called it: the helper's own lines, where it
    failed, were not shown (Python's traceback shows them). They follow, as Python shows
    them; a helper that calls back into Kedi keeps its frame between the two `.kedi` ones.
    The error is still located at its innermost `.kedi` line."""
    kedi.pytester.makeini("[pytest]\npythonpath = .\n")
    kedi.write("helpers.py", HELPERS)
    kedi.write("uses.kedi", USES_HELPERS)
    result = kedi.run("--kedi-eval", "--tb=short")
    result.assert_outcomes(failed=2)
    for lines in (
        [
            "uses.kedi:6: ValueError: invalid literal for int() with base 10: 'zz'",
            "*",
            "Kedi stack trace:",
            '  File "uses.kedi", line 12, in case bad',
            "    > case: bad:",
            '  File "uses.kedi", line 13, in case bad',
            '    `assert conv("zz") == 1`',
            '  File "uses.kedi", line 5, in conv',
            "    @conv(x: str) -> int:",
            '  File "uses.kedi", line 6, in conv',
            "    = `helpers.outer(x)`",
            '  File "helpers.py", line 6, in outer',
            "    return parse(text)",
            '  File "helpers.py", line 2, in parse',
            "    return int(text)",
            "ValueError: invalid literal for int() with base 10: 'zz'",
        ],
        [
            "uses.kedi:6: ValueError: invalid literal for int() with base 10: 'zz'",
            "*",
            "Kedi stack trace:",
            '  File "uses.kedi", line 14, in case through',
            "*",
            '  File "uses.kedi", line 9, in doubled',
            "    = `helpers.twice(conv, x)`",
            '  File "helpers.py", line 10, in twice',
            "    return proc(text) * 2",
            '  File "uses.kedi", line 5, in conv',
            "*",
            '  File "helpers.py", line 2, in parse',
            "    return int(text)",
            "ValueError: invalid literal for int() with base 10: 'zz'",
        ],
    ):
        result.stdout.fnmatch_lines(lines)
    assert "site-packages" not in result.stdout.str()


BROKEN_MODEL = """\
import pytest
from pydantic_ai.models.function import FunctionModel


def answer(messages, info):
    raise ValueError("model helper broke")


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(answer, model_name="broken")
"""


def test_a_model_error_shows_where_the_users_model_function_raised(kedi: Kedi) -> None:
    """A model function of the user's own (a `FunctionModel` in conftest.py) that raised
    was reported at the template line alone: its own line, where it raised, now follows."""
    kedi.pytester.makeconftest(BROKEN_MODEL)
    kedi.write(
        "m.kedi",
        '@ask(q: str) -> str:\n  >> Answer <q>.\n\n@test: ask:\n  > case: one:\n    `ask("x")`\n',
    )
    result = kedi.run("--kedi-eval", "--tb=short")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "m.kedi:2: KediModelError: m.kedi:2: model call failed (function:broken): "
            "ValueError: model helper broke",
            "*",
            '  File "m.kedi", line 2, in ask',
            "    >> Answer <q>.",
            '  File "conftest.py", line 6, in answer',
            '    raise ValueError("model helper broke")',
            "KediModelError: m.kedi:2: model call failed (function:broken): "
            "ValueError: model helper broke",
        ]
    )
    assert "pydantic_ai" not in result.stdout.str()


LOAD_FAILS = """\
@test: t:
  > case: c:
    `assert one() == 1`

@eval: e:
  > data: xs:
    = `[(1, 1)]`
  > metric: m(xs):
    = `one() == expected`
"""


@pytest.mark.parametrize(
    ("files", "where", "error"),
    [
        ({"main.kedi": '```\nx = {}["x"]\n```\n\n'}, "main.kedi:2", "KeyError: 'x'"),
        (
            {"main.kedi": "> import: lib\n\n", "lib.kedi": "```\ny = 1 // 0\n```\n"},
            "lib.kedi:2",
            "ZeroDivisionError: integer division or modulo by zero",
        ),
        (
            {"main.kedi": "> import: lib\n\n", "lib.kedi": "@one() -> int:\n  = `1 +`\n"},
            "lib.kedi:2",
            "KediParseError: Python syntax error: invalid syntax",
        ),
    ],
    ids=["prelude", "import", "import-syntax"],
)
def test_a_case_of_a_program_that_fails_to_load_names_where_it_failed(
    kedi: Kedi, files: dict[str, str], where: str, error: str
) -> None:
    """A case's failure pointed at the case's header (``main.kedi:2: KeyError: 'x'`` for
    an error on the prelude's line 2), and its JSON, JUnit and summary messages had no
    location, while the eval suite of the same file said ``failed to load at main.kedi:2``."""
    for name, text in files.items():
        kedi.write(name, text + (LOAD_FAILS if name == "main.kedi" else ""))
    result = kedi.run(
        "--kedi-eval", "--tb=line", "--junitxml", "j.xml", "--kedi-report", "r.json", "main.kedi"
    )
    result.assert_outcomes(failed=2)
    message = f"the program failed to load at {where}: {error}"
    result.stdout.fnmatch_lines([f"{where}: {message}"])
    result.stdout.fnmatch_lines([f"- t::c: FAIL | {message}"])
    (case,) = kedi.json("r.json")["tests"]
    assert case["message"] == message
    junit = ET.parse(kedi.pytester.path / "j.xml").getroot()
    assert {f.get("message") for f in junit.iter("failure")} == {
        message,
        f"@eval: e failed before scoring: {message}",
    }


def test_a_case_message_keeps_its_spaces_as_a_row_error_does(kedi: Kedi) -> None:
    """`raise ValueError("  x ")` failed the case as `ValueError: x` (report message, stack
    trace) where Python, `kedi --test` and a row's `error: ValueError:   x ` keep them."""
    kedi.write("sp.kedi", '@test: t:\n  > case: a:\n    `raise ValueError("  x ")`\n')
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(failed=1)
    assert "ValueError:   x " in result.outlines
    assert kedi.json("r.json")["tests"][0]["message"] == "ValueError:   x "
