"""pytest outcomes and SystemExit raised from Kedi code, and unreadable `.kedi` files."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from kedi_marks import patched_plugin
from kedi_plugin_helpers import Kedi

NEEDS_MISSING = """\
```
import pytest
missing = pytest.importorskip("no_such_module_for_kedi")
```

@test: t:
  > case: c:
    `assert True`

@eval: e:
  > data: d:
    = `[1]`
  > metric: m(d):
    = `1.0`
"""

OUTCOMES = """\
@test: t:
  > case: expected_to_fail:
    `import pytest; pytest.xfail("known bug")`
  > case: skipped:
    `import pytest; pytest.skip("not here")`
  > case: exits:
    `import sys; sys.exit(0)`
  > case: closes:
    `raise GeneratorExit()`

@eval: no_data:
  > data: d:
    = `__import__("pytest").skip("no data today")`
  > metric: m(d):
    = `1.0`

@eval: rows:
  > data: d:
    = `[1, 2, 3, 4]`
  > metric: m(d):
    = `score(d)`

@score(d: int) -> float:
  ```
  import pytest, sys
  if d == 2:
      pytest.skip("row")
  if d == 3:
      sys.exit(3)
  if d == 4:
      pytest.xfail("x")
  ```
  = `1.0`
"""


def test_pytest_outcomes_and_exits_from_kedi_code(kedi: Kedi) -> None:
    kedi.write("needs.kedi", NEEDS_MISSING)
    kedi.write("outcomes.kedi", OUTCOMES)
    args = ("--kedi-eval", "-rsx", "--kedi-report", "r.json", "-p", "no:cacheprovider")
    result = kedi.subprocess(*args)
    result.assert_outcomes(passed=1, failed=2, skipped=4, xfailed=1)
    out = result.stdout.str()
    assert "<kedi" not in out
    for skipped in (  # located at the .kedi line (xdist may order them differently)
        "SKIPPED [[]2[]] needs.kedi:3: could not import 'no_such_module_for_kedi'*",
        "SKIPPED [[]1[]] outcomes.kedi:5: not here",
        "SKIPPED [[]1[]] outcomes.kedi:13: no data today",
    ):
        result.stdout.fnmatch_lines([skipped])
    result.stdout.fnmatch_lines(
        [
            "- t::c: SKIPPED | could not import 'no_such_module_for_kedi'*",
            "- t::expected_to_fail: XFAIL | known bug",
            "- t::skipped: SKIPPED | not here",
            "- t::exits: FAIL | SystemExit: 0",
            "- t::closes: FAIL | GeneratorExit:*",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(
        ["- e::m: not run [[]skipped: could not import 'no_such_module_for_kedi'*[]]"],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(
        ["- no_data::m: not run [[]skipped: no data today[]]"], consecutive=False
    )
    result.stdout.fnmatch_lines(
        ["- rows::m: 0.2500 | error: Skipped: row; error: SystemExit: 3; error: XFailed: x*"],
        consecutive=False,
    )
    report = kedi.json("r.json")
    module = "'no_such_module_for_kedi'"
    missing = f"could not import {module}: No module named {module}"
    suites = {
        s["procedure"]: (s["outcome"], s["error"], s["skip_reason"]) for s in report["suites"]
    }
    assert suites == {
        "e": ("skipped", None, missing),
        "no_data": ("skipped", None, "no data today"),
        "rows": ("passed", None, None),
    }
    tests = {
        (t["path"], t["case"]): (t["outcome"], t["message"], t["skip_reason"])
        for t in report["tests"]
    }
    assert tests == {
        ("needs.kedi", "c"): ("skipped", None, missing),
        ("outcomes.kedi", "expected_to_fail"): ("xfailed", None, None),
        ("outcomes.kedi", "skipped"): ("skipped", None, "not here"),
        ("outcomes.kedi", "exits"): ("failed", "SystemExit: 0", None),
        ("outcomes.kedi", "closes"): ("failed", "GeneratorExit: ", None),
    }
    rows = next(s for s in report["suites"] if s["procedure"] == "rows")["rows"]
    assert [(r["score"], r["error"]) for r in rows] == [
        (1.0, None),
        (0.0, "Skipped: row (at outcomes.kedi:27)"),
        (0.0, "SystemExit: 3 (at outcomes.kedi:29)"),
        (0.0, "XFailed: x (at outcomes.kedi:31)"),
    ]


def test_a_case_that_exits_shows_a_kedi_stack_trace(kedi: Kedi) -> None:
    kedi.write("exits.kedi", OUTCOMES)
    result = kedi.run("--kedi-eval", "exits.kedi::test:t::exits")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "exits.kedi:7: SystemExit: 0",
            "@test: t > case: exits failed:",
            "Kedi stack trace:",
            '  File "exits.kedi", line 6, in case exits',
            "*",
            '  File "exits.kedi", line 7, in case exits (Python)',
            "*",
            "SystemExit: 0",
        ]
    )


@patched_plugin
def test_an_unreadable_file_says_cannot_read(kedi: Kedi, monkeypatch) -> None:
    from pytest_kedi.lang import files as parser  # where program files are read

    kedi.write("secret.kedi", NEEDS_MISSING)
    real_read = parser.read_bytes

    def fake_read(file):  # root can read a chmod 000 file: deny by name
        if Path(file).name == "secret.kedi":
            raise PermissionError(13, "Permission denied", str(file))
        return real_read(file)

    monkeypatch.setattr(parser, "read_bytes", fake_read)
    result = kedi.run("--kedi-eval")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*cannot read secret.kedi: Permission denied*"])
    assert "internal error" not in result.stdout.str()
    assert "Errno" not in result.stdout.str()


HALTS = """\
```
class Halt(BaseException):
    pass
```

@check(d: int) -> bool:
  = ```
  if d == 2:
      raise Halt("row two")
  return True
  ```

@test: t:
  > case: halts:
    `check(2)`
  > case: after:
    `assert check(1)`

@eval: rows:
  > data: d:
    = `[1, 2, 3]`
  > metric: m(d):
    = `check(d)`
"""


def test_a_user_base_exception_is_its_rows_or_cases_error(kedi: Kedi) -> None:
    """A class deriving from `BaseException` directly (not `Exception`) failed the whole
    suite before scoring, and a case showed pytest's traceback naming ``__kedi_prelude__``."""
    kedi.write("halts.kedi", HALTS)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "__kedi" not in out
    result.stdout.fnmatch_lines(
        [
            "Kedi stack trace:",
            "*",
            '  File "halts.kedi", line 9, in check (Python)',
            '    raise Halt("row two")',
            "Halt: row two",
        ]
    )
    result.stdout.fnmatch_lines(
        ["- t::halts: FAIL | Halt: row two", "- t::after: OK"], consecutive=False
    )
    result.stdout.fnmatch_lines(
        ["- rows::m: 0.6667 | error: Halt: row two  [[]passed[]]"],
        consecutive=False,
    )
    rows = next(s for s in kedi.json("r.json")["suites"] if s["procedure"] == "rows")["rows"]
    assert [r["score"] for r in rows] == [1.0, 0.0, 1.0]


XFAIL_MARKER = """
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.endswith("::broken"):
            item.add_marker(pytest.mark.xfail(reason="known bug"))
"""


def test_a_case_under_an_xfail_marker_reads_as_expected(kedi: Kedi) -> None:
    """pytest reported ``1 xfailed`` (exit 0), while the kedi section, the Markdown and the
    HTML page said ``FAIL`` and ``1 failed``; a suite under the marker said ``(xfail)``."""
    kedi.pytester.makeconftest(XFAIL_MARKER)
    kedi.write("x.kedi", "@test: t:\n  > case: broken:\n    `assert 4 == 5`\n")
    result = kedi.run("--kedi-eval", "--kedi-markdown", "m.md", "--kedi-report", "r.json")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(
        ["- t::broken: FAIL | AssertionError: assert 4 == 5 (xfail: known bug)"]
    )
    assert "1 test case (0 failed)" in (kedi.pytester.path / "m.md").read_text("utf-8")
    assert kedi.json("r.json")["xfailed"] == ["x.kedi::test:t::broken"]


DATA_FAILS = """\
```
import pytest

def rows():
    yield (1, 1)
    pytest.fail("rows broke")
```

@eval: eager:
  > data: d:
    = `pytest.fail("bad data")`
  > metric: m(d):
    = `1.0`

@eval: lazy:
  > data: d:
    = `rows()`
  > metric: m(d):
    = `1.0`

@eval: later:
  > data: d:
    = `pytest.xfail("no data yet")`
  > metric: m(d):
    = `1.0`
"""


def test_pytest_fail_in_a_dataset_is_its_data_loading_failure(kedi: Kedi) -> None:
    """``pytest.fail()`` while a suite's dataset loaded escaped the suite: pytest printed its
    own traceback from the file's first line, and the report said ``error: "Failed: bad
    data"`` with ``split: null`` instead of the located data-loading failure."""
    kedi.write("data.kedi", DATA_FAILS)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2, xfailed=1)
    for lines in (  # xdist may order the failures differently
        [
            "data.kedi:9: @eval: eager failed before scoring: data-loading failed for data 'd'"
            " at data.kedi:11: Failed: bad data",
            "",
            "Kedi stack trace:",
            '  File "data.kedi", line 10, in data d',
            "    > data: d:",
            '  File "data.kedi", line 11, in data d (Python)',
            '    = `pytest.fail("bad data")`',
            "Failed: bad data",
        ],
        [
            "data.kedi:15: @eval: lazy failed before scoring: data-loading failed for data 'd'"
            " at data.kedi:6: Failed: rows broke",
            "",
            "Kedi stack trace:",
            '  File "data.kedi", line 16, in data d',
            "    > data: d:",
            '  File "data.kedi", line 6, in <prelude> (Python)',
            '    pytest.fail("rows broke")',
            "Failed: rows broke",
        ],
    ):
        result.stdout.fnmatch_lines(lines)
    assert "E   Failed" not in result.stdout.str()  # no pytest traceback of the file
    suites = {
        s["procedure"]: (s["outcome"], s["split"], s["error"])
        for s in kedi.json("r.json")["suites"]
    }
    assert suites == {
        "eager": (
            "failed",
            "data",
            "data-loading failed for data 'd' at data.kedi:11: Failed: bad data",
        ),
        "lazy": (
            "failed",
            "data",
            "data-loading failed for data 'd' at data.kedi:6: Failed: rows broke",
        ),
        "later": ("skipped", None, None),  # pytest.xfail() keeps its meaning
    }


PRELUDE_FAILS = """\
```
import pytest
pytest.fail("prelude fail")
```

@test: t:
  > case: c:
    `assert True`

@eval: e:
  > data: d:
    = `[1]`
  > metric: m(d):
    = `1.0`
"""


def test_pytest_fail_in_the_prelude_is_a_program_load_failure(kedi: Kedi) -> None:
    """``pytest.fail()`` in the prelude escaped the file's loading: each item ran the
    prelude again and showed pytest's traceback of the file, and the report's error was
    ``Failed: prelude fail``, not the located load failure any other error gives."""
    kedi.write("pre.kedi", PRELUDE_FAILS)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    failure = "the program failed to load at pre.kedi:3: Failed: prelude fail"
    result.stdout.fnmatch_lines(
        [
            f"pre.kedi:10: @eval: e failed before scoring: {failure}",
            "",
            "Kedi stack trace:",
            '  File "pre.kedi", line 3, in <prelude> (Python)',
            '    pytest.fail("prelude fail")',
            "Failed: prelude fail",
        ]
    )
    result.stdout.fnmatch_lines([f"- t::c: FAIL | {failure}", f"- e::m: ERROR | {failure}*"])
    assert "E   Failed" not in result.stdout.str()
    report = kedi.json("r.json")
    assert [(s["outcome"], s["error"]) for s in report["suites"]] == [("failed", failure)]
    assert [(t["outcome"], t["message"]) for t in report["tests"]] == [("failed", failure)]


# pytest-timeout's default ``signal`` method, as it works: a SIGALRM handler armed around each
# item that fails it with ``pytest.fail()`` when the item overruns.
ALARM_CONFTEST = """\
import signal

import pytest


@pytest.fixture(autouse=True)
def item_timeout():
    def handler(signum, frame):
        pytest.fail("Timeout (>0.5s) from the item's alarm")

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)
"""

SLOW_ROW = """\
@wait(seconds: float) -> float:
  = `__import__("time").sleep(seconds) or seconds`

@eval: wait:
  > data: xs:
    = `[(0, 0), (30, 30), (0, 0)]`
  > metric: m(xs):
    = `wait(xs) == expected`
"""


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_an_item_timeout_raised_by_a_signal_handler_fails_the_suite(
    kedi: Kedi, concurrency: str
) -> None:
    """pytest-timeout's ``signal`` method fails an overrunning item with ``pytest.fail()``
    from its SIGALRM handler. It interrupted a row, which scored it as that row's error
    (``error: Failed: Timeout ...``), and the suite passed, running its other rows with no
    time limit left: ``--timeout`` did not fail the item."""
    kedi.write("slow.kedi", SLOW_ROW)
    kedi.pytester.makeconftest(ALARM_CONFTEST)
    result = kedi.run("--kedi-eval", "--kedi-concurrency", concurrency, "--kedi-report=r.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED slow.kedi::eval:wait - Failed: Timeout (>0.5s)*"])
    (suite,) = kedi.json("r.json")["suites"]
    assert (suite["outcome"], suite["error"]) == (
        "failed",
        "Failed: Timeout (>0.5s) from the item's alarm",
    )


GROUPED_INTERRUPT = """\
@eval: grouped:
  > data: d:
    = `[1, 2]`
  > metric: m(d):
    = ```
    if d == 2:
        raise BaseExceptionGroup("g", [ValueError("v"), KeyboardInterrupt()])
    return 1
    ```

@test: t:
  > case: grouped:
    `raise BaseExceptionGroup("g", [KeyboardInterrupt()])`
"""


@pytest.mark.parametrize("item", ["eval:grouped", "test:t::grouped"])
def test_an_exception_group_carrying_a_keyboard_interrupt_interrupts_the_run(
    kedi: Kedi, item: str
) -> None:
    """It failed the item with pytest's exception-group traceback (naming the internal
    ``__kedi_block__``) and the run went on, unlike the interrupt it carries."""
    kedi.write("grouped.kedi", GROUPED_INTERRUPT)
    result = kedi.subprocess("--kedi-eval", f"grouped.kedi::{item}")  # pytester re-raises it
    out = result.stdout.str() + result.stderr.str()
    assert "__kedi" not in out and "Exception Group Traceback" not in out
    if kedi.workers is None:
        assert result.ret == pytest.ExitCode.INTERRUPTED
        line = 7 if item.startswith("eval") else 13
        result.stdout.fnmatch_lines([f"*grouped.kedi:{line}: KeyboardInterrupt"])
    else:  # as a plain KeyboardInterrupt does under xdist
        assert "received keyboard-interrupt" in out


RAISING_READS = """\
```
class Weird(Exception):
    def __getattr__(self, name):
        raise RuntimeError(f"no attr {name}")
```

@test: t:
  > case: cause:
    ```
    try:
        raise Weird("inner")
    except Weird as e:
        raise ValueError("outer") from e
    ```
  > case: after:
    `assert True`
"""


def test_an_exception_class_whose_attribute_reads_raise_fails_only_its_case(kedi: Kedi) -> None:
    """pytest stopped with INTERNALERROR (RuntimeError: no attr render) while the failed
    case's Kedi stack trace was built."""
    kedi.write("weird.kedi", RAISING_READS)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "INTERNALERROR" not in out and "no attr" not in out
    result.stdout.fnmatch_lines(
        [
            "Kedi stack trace:",
            "Weird: inner",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            '  File "weird.kedi", line 8, in case cause',
        ]
    )
