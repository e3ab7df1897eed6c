"""Collection: gating, ignored files, node ids, selection, markers, parse errors (issue 4 §3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kedi_auto_cache import AUTO_CACHE, AUTO_PROGRAM
from kedi_marks import patched_plugin, recorded_hooks
from kedi_plugin_helpers import DEMO, Kedi

from pytest_kedi.lang import KediParseError, parse_file

BROKEN = "@eval: broken\n  > data x\n"
DEMO_IDS = [
    "demo.kedi::test:initials::two_words",
    "demo.kedi::test:initials::padded",
    "demo.kedi::eval:initials",
]


def _collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith(" ")]


@patched_plugin
def test_plain_pytest_never_parses_kedi_files(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parsing(path: object) -> None:
        raise AssertionError(f"parsed {path}")

    monkeypatch.setattr("pytest_kedi.lang.parse_file", no_parsing)
    kedi.write("demo.kedi", DEMO)
    kedi.write("broken.kedi", BROKEN)
    kedi.write("test_plain.py", "def test_ok():\n    pass\n")
    result = kedi.run()
    result.assert_outcomes(passed=1)
    assert ".kedi" not in result.stdout.str()
    assert "= kedi =" not in result.stdout.str()


def test_flag_collects_suites_and_cases_in_source_order(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "--collect-only", "-q")
    assert _collected(result) == DEMO_IDS


def test_env_kedi_eval_behaves_like_the_flag(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    kedi.write("demo.kedi", DEMO)
    monkeypatch.setenv("KEDI_EVAL", "1")
    result = kedi.run("-rA")
    result.assert_outcomes(passed=3)
    monkeypatch.setenv("KEDI_EVAL", "0")
    kedi.run().assert_outcomes()  # no collection at all


def test_invalid_kedi_eval_value_is_a_usage_error(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEDI_EVAL", "maybe")
    result = kedi.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*KEDI_EVAL (environment): expected a boolean*'maybe'*"])
    assert "Traceback" not in result.stderr.str()


def test_kedi_collect_ini_runs_cases_and_skips_evals(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.pytester.makeini("[pytest]\nkedi_collect = true\n")
    result = kedi.run("-rs")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] demo.kedi*: "
            "Kedi @eval: suites run only with --kedi-eval (or KEDI_EVAL=1)"
        ]
    )
    kedi.run("--kedi-eval").assert_outcomes(passed=3)


def test_package_files_and_caches_of_files_without_auto_are_not_collected(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)  # no `> auto:` procedure: its cache is not even parsed
    kedi.write("demo.cache.kedi", BROKEN)
    kedi.write("lib/package.kedi", BROKEN)
    kedi.write("orphan.cache.kedi", BROKEN)  # no orphan.kedi
    result = kedi.run("--kedi-eval", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    assert _collected(result) == DEMO_IDS


def test_tests_generated_for_auto_procedures_are_collected_from_the_cache(kedi: Kedi) -> None:
    """language.md §4.5: the cache's suites named after an `> auto:` procedure of the
    program that it defines run on the program's runtime, located in the cache file."""
    kedi.write("prog.kedi", AUTO_PROGRAM)
    kedi.write("prog.cache.kedi", AUTO_CACHE)
    ids = _collected(kedi.run("--kedi-eval", "--collect-only", "-q"))
    assert ids == [
        "prog.cache.kedi::test:double::gen",
        "prog.cache.kedi::test:double::genfail",
        "prog.kedi::test:own::uses",
    ]
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "prog.cache.kedi:11: AssertionError: assert 2 == 3",
            "@test: double > case: genfail failed:",
            "Kedi stack trace:",
            '  File "prog.cache.kedi", line 8, in case genfail',
            "    > case: genfail:",
        ]
    )
    result.stdout.fnmatch_lines(["- double::genfail: FAIL | AssertionError: assert 2 == 3"])
    report = kedi.json("r.json")["tests"]
    tests = {t["nodeid"]: (t["path"], t["line"], t["outcome"]) for t in report}
    assert tests["prog.cache.kedi::test:double::genfail"] == ("prog.cache.kedi", 8, "failed")


def test_a_broken_auto_cache_is_its_own_collection_error(kedi: Kedi) -> None:
    kedi.write("prog.kedi", AUTO_PROGRAM)
    kedi.write("prog.cache.kedi", "@double(x: int) -> int:\n  = `x * 2\n")
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(["ERROR prog.cache.kedi - prog.cache.kedi:2:5: unbalanced*"])


def test_repeated_suite_names_get_numbered_and_kinds_never_collide(kedi: Kedi) -> None:
    suite = "@eval: {0}:\n  > data: xs:\n    = `[1]`\n  > metric: m(xs):\n    = `1.0`\n"
    test = "@test: {0}:\n  > case: c:\n    `assert True`\n"
    kedi.write(
        "dup.kedi",
        "\n".join(
            [
                suite.format("answer"),
                test.format("answer"),
                suite.format("answer"),
                suite.format("answer"),
                test.format("answer"),
            ]
        ),
    )
    result = kedi.run("--kedi-eval", "--collect-only", "-q")
    assert _collected(result) == [
        "dup.kedi::eval:answer",
        "dup.kedi::test:answer::c",
        "dup.kedi::eval:answer-2",
        "dup.kedi::eval:answer-3",
        "dup.kedi::test:answer-2::c",
    ]
    kedi.run("--kedi-eval", "dup.kedi::eval:answer-2").assert_outcomes(passed=1)


def test_parse_error_is_one_collection_error_with_the_kedi_diagnostic(kedi: Kedi) -> None:
    kedi.write("broken.kedi", BROKEN)
    kedi.write("demo.kedi", DEMO)
    with pytest.raises(KediParseError) as excinfo:  # what the CLI shows, from the same directory
        parse_file(Path("broken.kedi"))
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(passed=3, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert excinfo.value.render() in result.stdout.str()
    result.stdout.fnmatch_lines(["*ERROR collecting broken.kedi*", "Kedi parse error:"])
    assert "Traceback" not in result.stdout.str()
    assert "pytest_kedi" not in result.stdout.str()


@pytest.mark.single_process("pytest-xdist runs the other tests despite collection errors")
def test_a_python_collection_error_beside_a_kedi_one_interrupts_counting_both(
    kedi: Kedi,
) -> None:
    """The run was interrupted for "1 error during collection" above a final "2 errors"."""
    kedi.write("broken.kedi", BROKEN)
    kedi.write("demo.kedi", DEMO)
    kedi.write("test_broken.py", "import no_such_module_here\n")
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(errors=2)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*Interrupted: 2 errors during collection*"])
    assert "1 error during collection" not in result.stdout.str()


FAILING_CASES = """\
@test: t:
  > case: a:
    `assert False`
  > case: b:
    `assert False`
  > case: c:
    `assert True`
"""


@pytest.mark.single_process("pytest-xdist stops a --maxfail run after the items in flight")
@pytest.mark.parametrize("given", [(), ("--continue-on-collection-errors",)])
def test_a_parse_error_counts_towards_maxfail(kedi: Kedi, given: tuple[str, ...]) -> None:
    """``--maxfail=2`` with an unparsable file ran on to two failed items (three failures),
    where pytest counts a collection error it continues after towards the limit."""
    kedi.write("broken.kedi", BROKEN)
    kedi.write("cases.kedi", FAILING_CASES)
    result = kedi.run("--kedi-eval", "--maxfail=2", *given)
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(["*stopping after 2 failures*"])
    kedi.run("--kedi-eval", "-x").assert_outcomes(errors=1)
    kedi.run("--kedi-eval").assert_outcomes(failed=2, passed=1, errors=1)


@recorded_hooks
def test_reportinfo_points_at_the_header_lines(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    items = kedi.genitems("--kedi-eval")
    assert [(item.location[0], item.location[1], item.location[2]) for item in items] == [
        ("demo.kedi", 4, "two_words"),
        ("demo.kedi", 6, "padded"),
        ("demo.kedi", 11, "eval:initials"),
    ]
    assert all(item.path.name == "demo.kedi" for item in items)


@pytest.mark.parametrize(
    ("args", "passed"),
    [
        (("-k", "eval"), 1),
        (("-k", "padded or two_words"), 2),
        (("-m", "kedi_test"), 2),
        (("-m", "kedi_eval"), 1),
        (("-m", "kedi"), 3),
        (("--deselect", "demo.kedi::eval:initials"), 2),
        (("demo.kedi::test:initials",), 2),
        (("demo.kedi::test:initials::padded",), 1),
    ],
)
def test_selection(kedi: Kedi, args: tuple[str, ...], passed: int) -> None:
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "--strict-markers", *args)
    assert result.parseoutcomes()["passed"] == passed
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("tail", ["eval:initials", "test:initials::padded"])
def test_absolute_node_id_as_ides_send_it(kedi: Kedi, tail: str) -> None:
    path = kedi.write("demo.kedi", DEMO)
    kedi.run("--kedi-eval", f"{path}::{tail}").assert_outcomes(passed=1)


@pytest.mark.single_process("--stepwise does not support xdist")
def test_last_failed_and_stepwise(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO.replace('== "GH"', '== "XX"'))
    kedi.run("--kedi-eval").assert_outcomes(passed=2, failed=1)
    result = kedi.run("--kedi-eval", "--lf", "-q")
    result.assert_outcomes(failed=1, deselected=2)
    kedi.write("demo.kedi", DEMO)
    kedi.run("--kedi-eval", "--lf").assert_outcomes(passed=1, deselected=2)
    kedi.write("demo.kedi", DEMO.replace('== "AL"', '== "XX"'))
    kedi.run("--kedi-eval", "--sw").assert_outcomes(failed=1)
    kedi.write("demo.kedi", DEMO)
    kedi.run("--kedi-eval", "--sw").assert_outcomes(passed=3)


def test_markers_are_registered(kedi: Kedi) -> None:
    result = kedi.run("--markers")
    result.stdout.fnmatch_lines(
        ["@pytest.mark.kedi:*", "@pytest.mark.kedi_eval:*", "@pytest.mark.kedi_test:*"]
    )


@pytest.mark.xdist_only("compares the collections of the xdist workers")
def test_collection_is_deterministic_across_xdist_workers(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("sub/other.kedi", DEMO)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(passed=6)
    assert "Different tests were collected" not in result.stdout.str()
