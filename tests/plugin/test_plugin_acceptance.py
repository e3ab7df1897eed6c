"""End-to-end eval semantics through the plugin, as a user sees them (issue 4 §1, §3, §6, §9).

Every row shape and score normalization of the seeds, read back from the JSON report,
single-process and under ``-n 2``; plus the diagnostics found by acceptance testing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kedi_auto_cache import AUTO_CACHE, AUTO_PROGRAM
from kedi_marks import patched_plugin
from kedi_plugin_helpers import DEMO, Kedi, without_durations

from pytest_kedi.lang import KediParseError, parse_file

#: One suite per rule of docs/language.md#datasets. Metrics report which bindings they saw.
SEMANTICS = """\
```
from decimal import Decimal
from fractions import Fraction
from collections import namedtuple

Pair = namedtuple("Pair", "inp exp")


class Score:
    def __float__(self):
        return 0.25

    def __repr__(self):
        return "Score()"


def gen():
    yield ("a", 1)
    yield "raw"
```

@seen(value) -> str:
  = `"?"`

@eval: dict_rows:
  > data: d:
    = `{"k1": {"v": 1}, "k2": [1, 2], "k3": None}`
  > metric: m(d):
    = ```
    try:
      return 1.0, f"{d!r} {expected!r}"
    except NameError:
      return 0.5, f"raw {d!r}"
    ```

@eval: items_view:
  > data: d:
    = `{"k1": {"v": 1}, "k2": 3}.items()`
  > metric: m(d):
    = ```
    try:
      return 1.0, f"{d!r} {expected!r}"
    except NameError:
      return 0.5, f"raw {d!r}"
    ```

@eval: sequences:
  > data: d:
    = `[("x", None), ("y", 0), Pair("p", 2), ("a", 1, 2), ["l", 1], "s"]`
  > metric: m(d):
    = ```
    try:
      return 1.0, f"{d!r} {expected!r}"
    except NameError:
      return 0.5, f"raw {d!r}"
    ```

@eval: generator:
  > data: d:
    = `gen()`
  > metric: m(d):
    = ```
    try:
      return 1.0, f"{d!r} {expected!r}"
    except NameError:
      return 0.5, f"raw {d!r}"
    ```

@eval: scores:
  > data: d:
    = `[True, 3, Decimal("0.5"), Fraction(1, 4), Score(), "s", float("nan"), -float("inf")]`
  > metric: m(d):
    = `d`

@eval: pairs:
  > data: d:
    = `[[2, "fb"], [0.5, None], [1, 2, 3]]`
  > metric: m(d):
    = `tuple(d)`

@eval: raising:
  > data: d:
    = `[1, 2]`
  > metric: m(d):
    = `True if d == 1 else {}["gone"]`

@eval: empty:
  > data: d:
    = `[]`
  > metric: m(d):
    = `True`

@eval: legacy:
  > metric: once():
    = `(0.75, "once")`

@eval: missing:
  > data: d:
    = `[1]`
  > metric: m(other):
    = `True`

@eval: not_iterable:
  > data: d:
    = `"text"`
  > metric: m(d):
    = `True`
"""


def _run(kedi: Kedi) -> dict[str, dict[str, object]]:
    kedi.write("semantics.kedi", SEMANTICS)
    args = ("--kedi-eval", "--kedi-report", "report.json", "-p", "no:cacheprovider")
    result = kedi.run(*args)
    result.assert_outcomes(passed=9, failed=2)
    report = kedi.json("report.json")
    return {suite["procedure"]: suite for suite in report["suites"]}


def _rows(suite: dict[str, object]) -> list[tuple[object, ...]]:
    return [
        (row["input"], row["expected"], row["score"], row["feedback"], row["error_class"])
        for row in suite["rows"]  # type: ignore[attr-defined]
    ]


def test_row_shapes_and_scores_reach_the_report(kedi: Kedi) -> None:
    suites = _run(kedi)
    assert _rows(suites["dict_rows"]) == [
        ("'k1'", "{'v': 1}", 1.0, "'k1' {'v': 1}", None),
        ("('k2', [1, 2])", None, 0.5, "raw ('k2', [1, 2])", None),
        ("('k3', None)", None, 0.5, "raw ('k3', None)", None),
    ]
    assert _rows(suites["items_view"])[1] == ("('k2', 3)", None, 0.5, "raw ('k2', 3)", None)
    assert [row[:3] for row in _rows(suites["sequences"])] == [
        ("'x'", None, 0.5),  # (input, None): no expected binding
        ("'y'", "0", 1.0),  # a falsy expected is still bound
        ("'p'", "2", 1.0),  # tuple subclass
        ("('a', 1, 2)", None, 0.5),
        ("['l', 1]", None, 0.5),
        ("'s'", None, 0.5),
    ]
    assert [row[:3] for row in _rows(suites["generator"])] == [
        ("'a'", "1", 1.0),
        ("'raw'", None, 0.5),
    ]
    scores = suites["scores"]
    assert [row["score"] for row in scores["rows"]] == [1.0, 3.0, 0.5, 0.25, 0.25, 0.0, 0.0, 0.0]
    assert [row["feedback"] for row in scores["rows"]][-3:] == [
        "error: TypeError: metric must return a bool, a number or a (score, feedback) tuple, "
        "not str",
        "error: invalid score: nan",
        "error: invalid score: -inf",
    ]
    assert scores["errors_by_class"] == {"invalid_score": 2, "metric": 1}
    assert scores["score"] == pytest.approx(5.0 / 8)
    pairs = suites["pairs"]
    assert [(r["score"], r["feedback"]) for r in pairs["rows"][:2]] == [(2.0, "fb"), (0.5, None)]
    assert pairs["rows"][2]["error_class"] == "metric"
    assert pairs["feedback"] == (
        "fb; error: TypeError: a (score, feedback) metric result must have exactly 2 elements, "
        "got 3"
    )
    assert suites["raising"]["feedback"] == "error: KeyError: 'gone'"
    assert suites["raising"]["score"] == 0.5
    assert (suites["empty"]["score"], suites["empty"]["feedback"]) == (0.0, "no examples")
    legacy = suites["legacy"]
    assert (legacy["split"], legacy["score"], legacy["rows_total"]) == (None, 0.75, 1)
    for name in ("missing", "not_iterable"):
        failed = suites[name]
        assert (failed["outcome"], failed["rows"], failed["score"]) == ("failed", [], 0.0)
        assert failed["error"]


@pytest.mark.single_process("compares a single-process run with an -n 2 run itself")
def test_semantics_report_is_the_same_under_xdist(kedi: Kedi) -> None:
    single = without_durations(_run(kedi))
    assert without_durations(_run(replace(kedi, workers=2))) == single


def test_explicit_kedi_path_without_collection_says_how_to_enable_it(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("demo.kedi::eval:initials")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*demo.kedi::eval:initials: .kedi files are collected only with --kedi-eval*"]
    )
    kedi.run("--kedi-eval", "demo.kedi::eval:initials").assert_outcomes(passed=1)


def test_a_kedi_node_id_without_eval_or_test_says_what_they_are(kedi: Kedi) -> None:
    """``demo.kedi::initials`` (the suite's name, without ``eval:``) got pytest's bare
    ``not found: ... (no match in any of [<KediFile demo.kedi>])``; the error names the
    node id forms, with the one the user likely meant."""
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "demo.kedi::initials")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*demo.kedi::initials: a .kedi file's node ids are demo.kedi::eval:<suite> (an "
            "@eval: suite) and demo.kedi::test:<suite>[[]::<case>] (an @test: suite or case), "
            "e.g. demo.kedi::eval:initials"
        ]
    )
    kedi.run("--kedi-eval", "demo.kedi::eval:initials").assert_outcomes(passed=1)


def test_explicit_auto_cache_node_id_without_collection_says_how_to_enable_it(
    kedi: Kedi,
) -> None:
    """A node id of a test an ``> auto:`` cache holds, as ``--collect-only`` prints it, got
    pytest's bare ``ERROR: not found: ... (no match in any of [<Dir ...>])`` when run with
    collection off, where a program's node id says how to switch collection on."""
    kedi.write("prog.kedi", AUTO_PROGRAM)
    kedi.write("prog.cache.kedi", AUTO_CACHE)
    result = kedi.run("prog.cache.kedi::test:double::gen")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*prog.cache.kedi::test:double::gen: .kedi files are collected only with --kedi-eval*"]
    )
    kedi.run("--kedi-eval", "prog.cache.kedi::test:double::gen").assert_outcomes(passed=1)


def test_a_run_that_collected_nothing_but_kedi_files_says_how_to_collect_them(
    kedi: Kedi,
) -> None:
    """A folder of `.kedi` files run without ``--kedi-eval`` said ``collected 0 items`` and
    ``no tests ran`` (exit 5), with no hint why."""
    kedi.write("demo.kedi", DEMO)
    kedi.write("more/other.kedi", DEMO)
    kedi.write("more/package.kedi", "")  # a manifest, not a program
    result = kedi.run()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        [
            "kedi: 2 .kedi files not collected: run with --kedi-eval (or KEDI_EVAL=1), or set "
            "ini kedi_collect = true"
        ]
    )
    kedi.pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    ran = kedi.run()  # the run collected something: Python tests next to Kedi files
    ran.assert_outcomes(passed=1)
    assert "not collected" not in ran.stdout.str()


def test_kedi_files_next_to_a_python_file_given_are_not_counted_as_passed_over(
    kedi: Kedi,
) -> None:
    """``pytest test_empty.py`` (no test in it) said ``kedi: 1 .kedi file not collected``
    about a ``.kedi`` file in the same folder, which the command line did not select:
    pytest offers a folder's other files to the plugins on its way to a file given."""
    kedi.write("demo.kedi", DEMO)
    kedi.write("evals/other.kedi", DEMO)
    kedi.pytester.makepyfile(test_empty="# no test yet\n")
    for args in (("test_empty.py",), ("test_empty.py", "-k", "nothing")):
        result = kedi.run(*args)
        assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
        assert "not collected" not in result.stdout.str()
    result = kedi.run("test_empty.py", "evals")  # a folder given: its files count
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["kedi: 1 .kedi file not collected: run with --kedi-eval*"])


def test_program_load_failure_is_one_located_line_in_reports(kedi: Kedi) -> None:
    kedi.write("broken.kedi", "```\nimport no_such_module_xyz\n```\n\n" + DEMO)
    if kedi.workers is None:  # hook calls are recorded in this process only
        reprec = kedi.inline("--kedi-eval", "--kedi-report", "report.json")
        (call,) = reprec.getcalls("pytest_kedi_suite_result")  # telemetry sees the failure too
        assert (call.result.error, call.result.rows) == (
            "the program failed to load at broken.kedi:2: "
            "ModuleNotFoundError: No module named 'no_such_module_xyz'",
            [],
        )
    result = kedi.run("--kedi-eval", "--kedi-report", "report.json")
    result.assert_outcomes(failed=3)
    (suite,) = kedi.json("report.json")["suites"]
    assert suite["error"] == (
        "the program failed to load at broken.kedi:2: "
        "ModuleNotFoundError: No module named 'no_such_module_xyz'"
    )
    result.stdout.fnmatch_lines(
        [
            "broken.kedi:16: @eval: initials failed before scoring: the program failed to load*",
            "Kedi stack trace:",
            '  File "broken.kedi", line 2, in <prelude> (Python)',
        ]
    )


def test_messages_and_traces_show_paths_relative_to_the_invocation(kedi: Kedi) -> None:
    kedi.write(
        "typed.kedi",
        DEMO + "\n@test: typed:\n  > case: none:\n    `initials(None)`\n"
        "\n@eval: typed:\n  > data: d:\n    = `[None]`\n  > metric: m(d):\n"
        "    = `initials(d) == 'X'`\n",
    )
    result = kedi.run("--kedi-eval", "--kedi-report", "report.json")
    root = str(kedi.pytester.path)
    document = kedi.json("report.json")
    assert root not in json.dumps(document)
    failures = result.stdout.str().split("= FAILURES =", 1)[1]
    assert '  File "typed.kedi", line 20, in case none' in failures
    assert root not in failures.replace(f"{root}/report.json", "")
    typed = next(s for s in document["suites"] if s["procedure"] == "typed")
    assert typed["feedback"] == (
        "error: KediTypeExecutionError: typed.kedi:1: parameter 'name' of initials "
        "expects str, got None (NoneType)"
    )


def test_zero_error_budget_is_a_count(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO.replace('("x y", "XX")', '(None, "XX")'))
    result = kedi.run("--kedi-eval", "--kedi-max-errors", "0")
    result.stdout.fnmatch_lines(["*1 of 3 rows errored; at most 0 errored rows allowed"])


def test_parse_error_is_exactly_the_diagnostic_and_its_summary_names_the_location(
    kedi: Kedi,
) -> None:
    kedi.write("broken.kedi", "@eval: broken\n")
    kedi.write("demo.kedi", DEMO)
    with pytest.raises(KediParseError) as excinfo:  # what the CLI shows, from the same directory
        parse_file(Path("broken.kedi"))
    if kedi.workers is None:  # reports are recorded in this process only
        reprec = kedi.inline("--kedi-eval", "-p", "no:cacheprovider")
        (failed,) = [r for r in reprec.getreports("pytest_collectreport") if r.failed]
        assert str(failed.longrepr) == excinfo.value.render()
    result = kedi.run("--kedi-eval", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["ERROR broken.kedi - broken.kedi:1:*: suite header must end with ':'"]
    )


def test_a_raising_model_hook_shows_the_users_frames_only(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.pytester.makeconftest(
        "import pytest\n\n"
        "@pytest.hookimpl(optionalhook=True)\n"
        "def pytest_kedi_model(config):\n"
        "    raise RuntimeError('no model configured')\n"
    )
    result = kedi.run("--kedi-eval", "--kedi-report", "report.json")
    result.assert_outcomes(failed=3)
    output = result.stdout.str().split("= FAILURES =", 1)[1]
    assert "conftest.py:5: RuntimeError" in output
    for internal in ("pluggy/", "_pytest/", "pytest_kedi/", "site-packages"):
        assert internal not in output
    report = kedi.json("report.json")
    assert report["suites"][0]["error"] == "RuntimeError: no model configured"
    assert {test["message"] for test in report["tests"]} == {"RuntimeError: no model configured"}


@patched_plugin
def test_an_unreadable_kedi_file_does_not_stop_the_others(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_kedi.lang import files  # where program files are read

    real_read = files.read_bytes

    def fake_read(file: Any) -> Any:
        if str(file).endswith("locked.kedi"):
            raise PermissionError(13, "Permission denied")
        return real_read(file)

    monkeypatch.setattr(files, "read_bytes", fake_read)
    kedi.write("locked.kedi", DEMO)
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*cannot read locked.kedi: Permission denied*"])
    assert "Traceback" not in result.stdout.str()


def test_model_labels_are_short_and_readable() -> None:
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.test import TestModel

    from pytest_kedi.runtime.model import describe_model

    assert describe_model(TestModel()) == "test"
    assert describe_model(FunctionModel(lambda m, i: None, model_name="rules")) == "function:rules"
    assert describe_model("openai:gpt-4o") == "openai:gpt-4o"
