"""Eval items: verdicts, row sub-results, gating, options, hooks (issue 4 §4, §7, §8)."""

from __future__ import annotations

import gc

import pytest
from kedi_marks import recorded_hooks, this_process
from kedi_plugin_helpers import Kedi, junit_properties

#: Score 0.5: rows 0 and 2 pass, row 1 is wrong, row 3 errors (None is not a str).
SCORES = """\
@wc(text: str) -> int:
  = `len(text.split())`

@eval: wc:
  > data: samples:
    = `[("one two", 2), ("one", 3), ("a b c", 3), (None, 1)]`
  > metric: exact(samples):
    = `wc(samples) == expected`
"""

MISSING = """\
@eval: missing:
  > data: xs:
    = `[1]`
  > metric: m(ys):
    = `1.0`
"""

LOADFAIL = """\
@eval: loadfail:
  > data: xs:
    = `1/0`
  > metric: m(xs):
    = `1.0`
"""

SPLITS = """\
@eval: split:
  > data: xs:
    = `[1, 2]`
  > test_data: xs:
    = `[1]`
  > metric: m(xs):
    = `1.0`
"""


def _subtests(reprec: pytest.HookRecorder) -> list[pytest.SubtestReport]:
    return [
        r
        for r in reprec.getreports("pytest_runtest_logreport")
        if isinstance(r, pytest.SubtestReport)
    ]


def _call(reprec: pytest.HookRecorder, nodeid: str) -> pytest.TestReport:
    (report,) = [
        r
        for r in reprec.getreports("pytest_runtest_logreport")
        if r.when == "call" and r.nodeid == nodeid and not isinstance(r, pytest.SubtestReport)
    ]
    return report


def _verdicts(reprec: pytest.HookRecorder) -> dict[str, str]:
    """Outcome per item (its call report; row sub-results excluded)."""
    return {
        r.nodeid: r.outcome
        for r in reprec.getreports("pytest_runtest_logreport")
        if r.when == "call" and not isinstance(r, pytest.SubtestReport)
    }


def test_completed_suite_passes_whatever_its_score(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    result = kedi.run("--kedi-eval", "--junitxml", "junit.xml")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert junit_properties(kedi.pytester.path / "junit.xml")["scores.kedi::eval:wc"] == {
        "kedi_score": "0.5",  # no threshold set: no kedi_threshold property (issue 7 §13)
        # the suite's feedback too (language.md §5.7: score and feedback in user_properties)
        "kedi_feedback": "error: KediTypeExecutionError: scores.kedi:1: parameter 'text' of wc "
        "expects str, got None (NoneType)",
        "kedi_rows": "4",
        "kedi_errors": "1",
        "kedi_split": "data",
    }


@recorded_hooks
def test_rows_are_passed_subtests_emitted_after_scoring(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    reprec = kedi.inline("--kedi-eval", "--kedi-min-score", "0.9")
    subtests = _subtests(reprec)
    labels = [r.context.msg for r in subtests]
    assert labels[:3] == ["row 0: 1.0000", "row 1: 0.0000", "row 2: 1.0000"]
    assert labels[3].startswith("row 3: 0.0000 | error: KediTypeExecutionError")
    assert all(r.passed and r.context.kwargs == {} for r in subtests)
    reports = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call"]
    assert isinstance(reports[-1], pytest.TestReport) and reports[-1].failed  # the suite, last
    assert reprec.ret == pytest.ExitCode.TESTS_FAILED


def test_subtest_rows_never_fail_the_run(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    result = kedi.run("--kedi-eval", "-v")
    lines = ["scores.kedi::eval:wc SUBPASSED[[]row 1: 0.0000[]]*", "scores.kedi::eval:wc PASSED*"]
    if kedi.workers:  # xdist's verbose lines put the status before the node id
        lines = [
            "*SUBPASSED[[]row 1: 0.0000[]] scores.kedi::eval:wc*",
            "*PASSED scores.kedi::eval:wc*",
        ]
    result.stdout.fnmatch_lines(lines)
    assert result.ret == pytest.ExitCode.OK


@recorded_hooks
@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (("--kedi-min-score", "0.9"), True),  # a failed suite
        ((), False),  # a passed one: pytest shows no section of it
        (("-rP",), True),
        (("-rA",), True),
        (("-rAN",), False),  # N resets
        (("-rfE",), False),
    ],
)
def test_summary_rows_mode_adds_a_report_section_instead(
    kedi: Kedi, args: tuple[str, ...], shown: bool
) -> None:
    kedi.write("scores.kedi", SCORES)
    reprec = kedi.inline("--kedi-eval", "--kedi-rows", "summary", *args)
    assert _subtests(reprec) == []
    sections = dict(_call(reprec, "scores.kedi::eval:wc").sections)
    if shown:
        assert "row 1: score 0.0000 | input 'one' | expected 3" in sections[ROWS_TITLE]
    else:
        assert ROWS_TITLE not in sections


ROWS_TITLE = "Captured kedi rows call"


@pytest.mark.parametrize("args", [(), ("--kedi-min-score", "0.9"), ("-rP",)])
def test_summary_rows_section_shown_where_pytest_shows_sections(
    kedi: Kedi, args: tuple[str, ...]
) -> None:
    """What a user sees, also under xdist: the rows under a failed suite's report, and
    under a passed suite's with -rP, between the setup's and the call's captured output."""
    kedi.write(
        "scores.kedi",
        "```\nprint('from the prelude')\n```\n"
        + SCORES.replace(
            "= `wc(samples) == expected`", "= `print('metric') or wc(samples) == expected`"
        ),
    )
    result = kedi.run("--kedi-eval", "--kedi-rows", "summary", *args)
    titles = [line.strip("- ") for line in result.outlines if line.startswith("---")]
    if not args:
        assert ROWS_TITLE not in titles
        assert not any(line.startswith("row 1: score") for line in result.outlines)
        return
    assert "row 1: score 0.0000 | input 'one' | expected 3 | output 1" in result.outlines
    assert ROWS_TITLE in titles
    stdout_title = "Captured stdout call"
    assert titles.index(ROWS_TITLE) < titles.index(stdout_title)


def test_summary_rows_section_on_a_strict_xpass(kedi: Kedi) -> None:
    """A suite that passes but is marked xfail(strict) fails: its rows are shown."""
    kedi.write("scores.kedi", SCORES)
    kedi.write(
        "conftest.py",
        "import pytest\n\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        item.add_marker(pytest.mark.xfail(reason='not yet', strict=True))\n",
    )
    result = kedi.run("--kedi-eval", "--kedi-rows", "summary")
    assert "row 1: score 0.0000 | input 'one' | expected 3 | output 1" in result.outlines
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@recorded_hooks
@pytest.mark.parametrize(
    ("setup", "args", "subtests"),
    [
        ("vscode", (), False),
        ("vscode", ("--kedi-rows", "subtests"), True),
        ("ini-summary", (), False),
        ("ini-summary-env-subtests", (), True),
        ("none", (), True),
        ("none", ("--kedi-rows", "subtests", "-p", "no:subtests"), False),
    ],
)
def test_rows_mode_resolution(
    kedi: Kedi,
    monkeypatch: pytest.MonkeyPatch,
    setup: str,
    args: tuple[str, ...],
    subtests: bool,
) -> None:
    kedi.write("scores.kedi", SCORES)
    if setup == "vscode":  # VS Code runs pytest with `-p vscode_pytest`
        kedi.pytester.makepyfile(vscode_pytest="")
        kedi.pytester.syspathinsert()
        args = ("-p", "vscode_pytest", *args)
    if setup.startswith("ini-summary"):
        kedi.pytester.makeini("[pytest]\nkedi_rows = summary\n")
    if setup.endswith("env-subtests"):
        monkeypatch.setenv("KEDI_ROWS", "subtests")
    reprec = kedi.inline("--kedi-eval", *args)
    assert bool(_subtests(reprec)) is subtests
    assert _verdicts(reprec) == {"scores.kedi::eval:wc": "passed"}


def test_missing_dataset_fails_the_item_not_collection(kedi: Kedi) -> None:
    kedi.write("missing.kedi", MISSING)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["missing.kedi:1: @eval: missing failed before scoring: missing dataset reference*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_data_loading_failure_shows_the_kedi_stack_trace(kedi: Kedi) -> None:
    kedi.write("loadfail.kedi", LOADFAIL)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "loadfail.kedi:1: @eval: loadfail failed before scoring: data-loading failed*",
            "Kedi stack trace:",
            "*line 3*",
            "ZeroDivisionError: division by zero",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "pytest_kedi/" not in result.stdout.str()


# A dataset written as a standalone fence: its `return` value is ignored (only `=` before
# the fence returns it), so the dataset is None.
FENCE_WITHOUT_RETURN = """\
@eval: fenced:
  > data: xs:
    ```
    return [1, 2]
    ```
  > metric: m(xs):
    = `xs > 0`
"""


def test_a_dataset_fence_without_equals_is_told_to_return_with_equals(kedi: Kedi) -> None:
    """The failure of a dataset that returned nothing says how to return the rows: `=`
    before the fence (the fence's own `return` is ignored), not to add a `return` it has."""
    kedi.write("fenced.kedi", FENCE_WITHOUT_RETURN)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "fenced.kedi:1: @eval: fenced failed before scoring: data-loading failed for data "
            "'xs' at fenced.kedi:2: the dataset is None; its body must return a non-string "
            "iterable, with `=` before its expression or before a fence that ends in "
            "`return rows` (a fence without `=` returns nothing)"
        ]
    )
    assert "does a fenced block" not in result.stdout.str()


def test_min_score_failure_text(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    result = kedi.run("--kedi-eval", "--kedi-min-score", "0.6")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "scores.kedi:4: @eval: wc failed: score 0.5000 is below the min score 0.6000",
            "metric exact, dataset samples (data): score 0.5000 vs min score 0.6000",
            "errored rows: 1 of 4 (type: 1)",
            "worst rows (2 of 4):",
            "  row 1: score 0.0000 | input 'one' | expected 3 | output 1",
            "  row 3: score 0.0000 | input None | expected 1 | error: KediTypeExecutionError*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    kedi.run("--kedi-eval", "--kedi-min-score", "0.5").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("ini", "env", "args", "passed"),
    [
        ("kedi_min_score = 0.9", None, (), False),
        ("kedi_min_score = 0.9\nkedi_min_scores =\n    *::eval:wc = 0.4", None, (), True),
        (
            "kedi_min_scores =\n    other.kedi::* = 0.9\n    *::eval:w? = 0.4",
            None,
            ("--kedi-min-score", "0.9"),
            True,
        ),
        ("kedi_min_score = 0.1", "0.6", (), False),
        ("kedi_min_score = 0.9", "0.1", ("--kedi-min-score", "0.6"), False),
        ("kedi_min_score = 0.9", "0.9", ("--kedi-min-score", "0.1"), True),
    ],
)
def test_min_score_sources(
    kedi: Kedi,
    monkeypatch: pytest.MonkeyPatch,
    ini: str,
    env: str | None,
    args: tuple[str, ...],
    passed: bool,
) -> None:
    kedi.write("scores.kedi", SCORES)
    kedi.pytester.makeini(f"[pytest]\n{ini}\n")
    if env is not None:
        monkeypatch.setenv("KEDI_MIN_SCORE", env)
    result = kedi.run("--kedi-eval", *args)
    result.assert_outcomes(passed=int(passed), failed=int(not passed))


@pytest.mark.parametrize(
    ("budget", "passed"), [("0", False), ("1", True), ("0.2", False), ("0.25", True)]
)
def test_max_errors_count_or_fraction(kedi: Kedi, budget: str, passed: bool) -> None:
    kedi.write("scores.kedi", SCORES)
    result = kedi.run("--kedi-eval", "--kedi-max-errors", budget)
    result.assert_outcomes(passed=int(passed), failed=int(not passed))
    if not passed:
        result.stdout.fnmatch_lines(
            ["scores.kedi:4: @eval: wc failed: 1 of 4 rows errored; at most*"]
        )
    # the summary's verdict names the budget the suite missed, not a bare [FAILED]
    verdict = f"[FAILED, max errors {budget}: 1 of 4 rows errored]" if not passed else "[passed]"
    (line,) = [line for line in result.outlines if line.startswith("- wc::")]
    assert line.endswith(f"  {verdict}")


@pytest.mark.parametrize(("args", "split"), [((), "test_data"), (("--kedi-split", "data"), "data")])
def test_split_option(kedi: Kedi, args: tuple[str, ...], split: str) -> None:
    kedi.write("split.kedi", SPLITS)
    kedi.run("--kedi-eval", "--junitxml", "junit.xml", *args).assert_outcomes(passed=1)
    props = junit_properties(kedi.pytester.path / "junit.xml")["split.kedi::eval:split"]
    assert (props["kedi_split"], props["kedi_rows"]) == (
        split,
        "1" if split == "test_data" else "2",
    )


def test_concurrency_gives_the_same_scores(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES)
    kedi.run("--kedi-eval", "--kedi-concurrency", "4", "--kedi-report", "r.json")
    (suite,) = kedi.json("r.json")["suites"]
    assert [(row["index"], row["score"]) for row in suite["rows"]] == [
        (0, 1.0),
        (1, 0.0),
        (2, 1.0),
        (3, 0.0),
    ]


def test_timeout_turns_a_slow_row_into_a_timeout_error(kedi: Kedi) -> None:
    kedi.write(
        "slow.kedi",
        "```\nimport time\n```\n\n@eval: slow:\n  > data: xs:\n    = `[0, 4]`\n"
        "  > metric: m(xs):\n    = `time.sleep(xs) is None`\n",
    )  # row 1 sleeps at least twice the time limit (a sequential row is stopped when the
    # sleep returns: a blocking call is not interrupted); row 0 is instant
    result = kedi.run("--kedi-eval", "--kedi-timeout", "2", "--kedi-max-errors", "0")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["errored rows: 1 of 2 (timeout: 1)"])


@recorded_hooks
def test_program_loads_once_per_file_and_hooks_fire(kedi: Kedi) -> None:
    kedi.write("scores.kedi", SCORES + "\n" + SCORES.split("\n\n", 1)[1])
    kedi.write("split.kedi", SPLITS)
    kedi.pytester.makeconftest(
        "import pytest\n\n"
        "@pytest.hookimpl(optionalhook=True)\n"
        "def pytest_kedi_model(config):\n    return None\n\n"
        "@pytest.hookimpl(optionalhook=True)\n"
        "def pytest_kedi_row_result(item, row):\n    pass\n"
    )
    reprec = kedi.inline("--kedi-eval")
    assert set(_verdicts(reprec).values()) == {"passed"}
    assert len(reprec.getcalls("pytest_kedi_model")) == 2  # once per file, not per suite
    rows = reprec.getcalls("pytest_kedi_row_result")
    assert [(c.item.nodeid, c.row.index) for c in rows[:4]] == [
        ("scores.kedi::eval:wc", i) for i in range(4)
    ]
    suites = reprec.getcalls("pytest_kedi_suite_result")
    assert [(c.item.name, c.result.score) for c in suites] == [
        ("eval:wc", 0.5),
        ("eval:wc-2", 0.5),
        ("eval:split", 1.0),
    ]


@this_process
@pytest.mark.parametrize("collect_only", [False, True], ids=["run", "collect-only"])
def test_a_finished_session_leaves_no_program_behind(kedi: Kedi, collect_only: bool) -> None:
    # The session takes its programs apart at its end and forgets the modules it parsed
    # and the code it compiled (issue 9): they are freed then, and pytest's closing
    # garbage collections and the interpreter's exit do not walk them.
    from pytest_kedi.lang.nodes import Module
    from pytest_kedi.runtime.context import ModuleUnit
    from pytest_kedi.runtime.pyerrors import UnitInfo

    # (no row raises: the hook recorder keeps each suite's result, and a row's exception
    # keeps the frames it was raised in)
    kedi.write("scores.kedi", SCORES.replace("(None, 1)", '("one", 1)'))
    kedi.write("split.kedi", SPLITS)
    kinds = (Module, ModuleUnit, UnitInfo)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds is kept in gc.garbage
    try:
        # (the recorder holds the session's config and items)
        reprec = kedi.inline("--kedi-eval", *(["--collect-only"] if collect_only else []))
        gc.collect()
        left = [o for o in (*gc.get_objects(), *gc.garbage) if isinstance(o, kinds)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    if collect_only:
        assert len(reprec.getcalls("pytest_itemcollected")) == 2
    else:
        assert set(_verdicts(reprec).values()) == {"passed"}
    here = str(kedi.pytester.path)
    found = [
        (type(o).__name__, o.path if isinstance(o, Module | ModuleUnit) else o.source_file.path)
        for o in left
    ]
    assert [(kind, path) for kind, path in found if path.startswith(here)] == []


def test_load_failure_fails_every_item_of_the_file(kedi: Kedi) -> None:
    kedi.write(
        "prelude.kedi",
        "```\nraise RuntimeError('no config')\n```\n\n"
        "@test: t:\n  > case: c:\n    `assert True`\n\n" + MISSING.replace("ys", "xs"),
    )
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*RuntimeError: no config*"])
    assert "Traceback" not in result.stdout.str()


def test_no_row_result_outlives_the_session(kedi: Kedi) -> None:
    # The session drops its records first thing when pytest unconfigures (issue 9): the
    # garbage collection pytest's own `unraisableexception` plugin runs there, the other
    # plugins' and the interpreter's exit then walk none of a suite's rows. Before, they
    # were dropped after the built-in plugins' `pytest_unconfigure`, which a conftest's
    # runs before, as here.
    kedi.write("scores.kedi", SCORES)
    kedi.write("split.kedi", SPLITS)
    kedi.pytester.makeconftest(
        "import gc\n"
        "import pytest\n\n"
        "def pytest_unconfigure(config):\n"
        "    from pytest_kedi.evals import RowResult, SuiteResult\n"
        "    if hasattr(config, 'workerinput'):\n"
        "        return\n"
        "    kinds = (RowResult, SuiteResult)\n"
        "    alive = sum(isinstance(o, kinds) for o in gc.get_objects())\n"
        "    config.rootpath.joinpath('alive.txt').write_text(str(alive))\n"
    )
    result = kedi.subprocess("--kedi-eval", "--kedi-rows", "summary")
    result.assert_outcomes(passed=2)
    assert (kedi.pytester.path / "alive.txt").read_text() == "0"


ROW_ERRORS = """\
@eval: sk:
  > data: xs:
    = `[1, 2, 3]`
  > metric: m(xs):
    = ```
    import pytest
    if xs == 2:
        raise ValueError("bad two")
    if xs == 3:
        pytest.fail("three fails")
    return 1.0
    ```
"""


def test_row_errors_name_their_kedi_line_in_the_terminal(kedi: Kedi) -> None:
    """A row that raised shows the `.kedi` line that raised in the failed suite's worst
    rows and the ``-v`` row lines (it was only in the JSON report's ``error``), a row's
    ``pytest.fail()`` too; a strict type check's message, which names its line, does not
    get it twice. The feedback stays ``error: <ExceptionType>: <message>``."""
    kedi.write("scores.kedi", SCORES)
    kedi.write("errs.kedi", ROW_ERRORS)
    result = kedi.run("--kedi-eval", "--kedi-min-score", "0.9", "-v", "--kedi-report", "r.json")
    result.assert_outcomes(failed=2)
    for lines in (  # xdist may order the failures differently
        [
            "worst rows (2 of 3):",
            "  row 1: score 0.0000 | input 2 | error: ValueError: bad two (at errs.kedi:8)",
            "  row 2: score 0.0000 | input 3 | error: Failed: three fails (at errs.kedi:10)",
        ],
        [
            "  row 3: score 0.0000 | input None | expected 1 | error: KediTypeExecutionError: "
            "scores.kedi:1: parameter 'text' of wc expects str, got None (NoneType)",
        ],
        ["    row 1: score 0.0000 | input 2 | error: ValueError: bad two (at errs.kedi:8)"],
        ["- sk::m: 0.3333 | error: ValueError: bad two; error: Failed: three fails  [[]FAILED*"],
    ):
        result.stdout.fnmatch_lines(lines)
    rows = {s["procedure"]: s["rows"] for s in kedi.json("r.json")["suites"]}
    assert [row["error"] for row in rows["sk"]] == [
        None,
        "ValueError: bad two (at errs.kedi:8)",
        "Failed: three fails (at errs.kedi:10)",
    ]
    assert rows["wc"][3]["error"].endswith("got None (NoneType)")
    assert [row["feedback"] for row in rows["sk"]][1:] == [
        "error: ValueError: bad two",
        "error: Failed: three fails",
    ]


LAZY_FAILS = """\
```
def rows():
    yield (1, 1)
    raise ValueError("rows broke")
```

@ident(x: int) -> int:
  = `x`

@eval: ident:
  > data: xs:
    = `rows()`
  > metric: m(xs):
    = `ident(xs) == expected`

@eval: inline:
  > data: ys:
    = `((i, 1 // (2 - i)) for i in range(3))`
  > metric: m(ys):
    = `ident(ys) == expected`
"""


def test_a_lazy_dataset_failing_as_it_is_read_keeps_its_data_frame(kedi: Kedi) -> None:
    """A generator dataset raising while its rows were read had a Kedi stack trace of the
    raising line alone: the ``> data:`` frame an eager dataset's trace starts with was lost."""
    kedi.write("lazy.kedi", LAZY_FAILS)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=2)
    for lines in (  # xdist may order the failures differently
        [
            "lazy.kedi:10: @eval: ident failed before scoring: data-loading failed for data "
            "'xs' at lazy.kedi:4: ValueError: rows broke",
            "",
            "Kedi stack trace:",
            '  File "lazy.kedi", line 11, in data xs',
            "    > data: xs:",
            '  File "lazy.kedi", line 4, in <prelude> (Python)',
            '    raise ValueError("rows broke")',
            "ValueError: rows broke",
        ],
        [
            "Kedi stack trace:",
            '  File "lazy.kedi", line 17, in data ys',
            "    > data: ys:",
            '  File "lazy.kedi", line 18, in data ys (Python)',
            "    = `((i, 1 // (2 - i)) for i in range(3))`",
            "ZeroDivisionError: integer division or modulo by zero",
        ],
    ):
        result.stdout.fnmatch_lines(lines)
