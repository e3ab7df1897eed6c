"""Kedi items inside pytest: failure locations, --pdb, report plugins, fixtures, random order."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from kedi_plugin_helpers import DEMO, Kedi

#: Lines: assert 8, boom 11, @eval: 13, the passing case 18.
FAILING = """\
@double(x: int) -> int:
  = `x * 2`

@test: double:
  > case: compare:
    ```
    value = double(21)
    assert value == 41, "a fairly long assertion message that goes well past fifty characters"
    ```
  > case: boom:
    `{}["missing"]`

@eval: double:
  > data: d:
    = `[(1, 2), (2, 5)]`
  > metric: exact(d):
    = `double(d) == expected`

@test: fine:
  > case: ok:
    `assert double(1) == 2`
"""

GATE = ("-o", "kedi_min_score=0.9")

FAILURE_LINES = [
    "failing.kedi:8: AssertionError: a fairly long assertion message that goes well past "
    "fifty characters",
    "failing.kedi:11: KeyError: 'missing'",
    "failing.kedi:13: @eval: double failed: score 0.5000 is below the min score 0.9000",
]


def _failures_section(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if " FAILURES " in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("=="))
    return [line for line in lines[start + 1 : end] if not line.startswith("[gw")]


def test_tb_line_prints_one_located_line_per_failure(kedi: Kedi) -> None:
    kedi.write("failing.kedi", FAILING)
    args = ("--kedi-eval", *GATE, "--tb=line", "-p", "no:cacheprovider")
    result = kedi.run(*args)
    result.assert_outcomes(passed=1, failed=3)
    assert sorted(_failures_section(result.stdout.str())) == sorted(FAILURE_LINES)


def test_short_summary_shows_the_failure_message(kedi: Kedi) -> None:
    kedi.write("failing.kedi", FAILING)
    result = kedi.run("--kedi-eval", *GATE, "-p", "no:cacheprovider")
    for line in (  # under xdist in completion order: one line at a time
        "FAILED failing.kedi::test:double::compare - AssertionError: a fairly*",
        "FAILED failing.kedi::test:double::boom - KeyError: 'missing'",
        "FAILED failing.kedi::eval:double - @eval: double failed: score 0.5000*",
    ):
        result.stdout.fnmatch_lines([line])


PDB_CLASS = """\
import pdb


class RecordingPdb(pdb.Pdb):
    def interaction(self, frame, tb):
        self.setup(frame, tb)
        frame = self.curframe
        value = frame.f_locals.get("value", frame.f_globals.get("value"))
        print("PDB-AT", frame.f_code.co_filename, "value=%r" % value)
        self.forget()
"""


@pytest.mark.single_process("xdist workers have no terminal to debug in")
def test_pdb_lands_in_the_users_failing_frame(kedi: Kedi) -> None:
    kedi.write("failing.kedi", FAILING)
    kedi.write("recording_pdb.py", PDB_CLASS)
    kedi.pytester.syspathinsert()
    result = kedi.run(
        "--kedi-eval",
        "--pdb",
        "--pdbcls=recording_pdb:RecordingPdb",
        "-p",
        "no:cacheprovider",
        "failing.kedi::test:double::compare",
    )
    result.assert_outcomes(failed=1)
    (line,) = [line for line in result.stdout.lines if line.startswith("PDB-AT")]
    assert line.endswith("value=42"), line
    assert "failing.kedi" in line
    assert "pytest_kedi" not in line


def _allure_statuses(directory: object) -> dict[str, str]:
    statuses = {}
    for path in directory.glob("*-result.json"):  # type: ignore[attr-defined]
        data = json.loads(path.read_text(encoding="utf-8"))
        statuses[data["name"]] = data["status"]
    return statuses


def test_allure_junit_and_json_report_see_failures_as_failures(kedi: Kedi) -> None:
    pytest.importorskip("allure_pytest")
    pytest.importorskip("pytest_jsonreport")
    kedi.write("failing.kedi", FAILING)
    result = kedi.run(
        "--kedi-eval",
        *GATE,
        "-p",
        "allure_pytest.plugin",
        "-p",
        "pytest_jsonreport.plugin",
        "--alluredir=allure",
        "--junitxml=junit.xml",
        "--json-report",
        "--json-report-file=report.json",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1, failed=3)
    statuses = _allure_statuses(kedi.pytester.path / "allure")
    assert statuses == {
        "compare": "failed",
        "boom": "broken",
        "eval:double": "failed",
        "ok": "passed",
    }
    cases = {
        case.get("name"): case
        for case in ET.parse(kedi.pytester.path / "junit.xml").iter("testcase")
    }
    for name in ("compare", "boom", "eval:double"):
        assert cases[name].find("failure") is not None, name
        assert cases[name].find("error") is None, name
    assert (
        cases["eval:double"]
        .find("failure")
        .get("message", "")
        .startswith(  # type: ignore[union-attr]
            "@eval: double failed: score 0.5000 is below"
        )
    )
    tests = {t["nodeid"]: t for t in kedi.json("report.json")["tests"]}
    crash = tests["failing.kedi::eval:double"]["call"]["crash"]
    assert crash["path"] == "failing.kedi"
    assert crash["lineno"] == 13
    assert crash["message"].startswith("@eval: double failed")
    assert tests["failing.kedi::test:double::compare"]["call"]["crash"]["lineno"] == 8
    assert tests["failing.kedi::test:double::compare"]["outcome"] == "failed"


def test_a_suite_that_cannot_load_is_broken_not_failed(kedi: Kedi) -> None:
    pytest.importorskip("allure_pytest")
    kedi.write("failing.kedi", FAILING)
    kedi.write(
        "unloadable.kedi", "@eval: e:\n  > data: d:\n    = `1/0`\n  > metric: m(d):\n    = `1`\n"
    )
    result = kedi.run(
        "--kedi-eval", "-p", "allure_pytest.plugin", "--alluredir=allure", "unloadable.kedi"
    )
    result.assert_outcomes(failed=1)
    assert _allure_statuses(kedi.pytester.path / "allure") == {"eval:e": "broken"}


FIXTURE_CONFTEST = """\
import pytest


def log(request, text):
    with open(request.config.rootpath / "log.txt", "a", encoding="utf-8") as handle:
        handle.write(text + "\\n")


@pytest.fixture(scope="session", autouse=True)
def session_wide(request):
    log(request, "setup session_wide")
    yield
    log(request, "teardown session_wide")


@pytest.fixture(autouse=True)
def kedi_env(request, monkeypatch):
    if request.node.get_closest_marker("kedi"):
        monkeypatch.setenv("KEDI_FIXTURE_VALUE", "from-fixture")
    log(request, "setup kedi_env " + request.node.name)
    yield
    log(request, "teardown kedi_env " + request.node.name)


@pytest.fixture
def extra(request):
    log(request, "setup extra " + request.node.name)
    yield
    log(request, "teardown extra " + request.node.name)


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("kedi_test"):
            item.add_marker(pytest.mark.usefixtures("extra"))
"""

FIXTURE_KEDI = """\
@test: env:
  > case: sees_env:
    ```
    import os
    assert os.environ["KEDI_FIXTURE_VALUE"] == "from-fixture"
    ```

@eval: env:
  > data: d:
    = `[(__import__("os").environ["KEDI_FIXTURE_VALUE"], "from-fixture")]`
  > metric: same(d):
    = `d == expected`
"""

FIXTURE_AFTER = """\
import os


def test_after():
    assert "KEDI_FIXTURE_VALUE" not in os.environ
"""


def test_the_usefixtures_ini_option_reaches_kedi_items(kedi: Kedi) -> None:
    """The README's way to give every test a side-effect fixture (`pytestmark` in a
    conftest, which the README used to suggest, applies to no test)."""
    kedi.pytester.makeconftest(
        "import os, pytest\n\n"
        "@pytest.fixture\n"
        "def seeded(monkeypatch):\n"
        "    monkeypatch.setenv('KEDI_SEEDED', '1')\n"
    )
    kedi.pytester.makeini("[pytest]\nusefixtures = seeded\n")
    kedi.write(
        "s.kedi",
        "@test: env:\n  > case: seeded:\n"
        "    `assert __import__('os').environ.get('KEDI_SEEDED') == '1'`\n",
    )
    kedi.run("--kedi-eval", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_autouse_and_usefixtures_fixtures_run_around_kedi_items(kedi: Kedi) -> None:
    kedi.pytester.makeconftest(FIXTURE_CONFTEST)
    kedi.write("env.kedi", FIXTURE_KEDI)
    kedi.write("test_zz_after.py", FIXTURE_AFTER)
    args = ("--kedi-eval", "-o", "kedi_min_score=1", "-p", "no:cacheprovider")
    if kedi.workers:
        result = kedi.run(*args, "--dist", "loadfile")
    else:
        result = kedi.run(*args, "--setup-show")
        result.stdout.fnmatch_lines(
            [
                "*SETUP    S session_wide",
                "*SETUP    F kedi_env (fixtures used: monkeypatch)",
                "*SETUP    F extra",
                "*env.kedi::test:env::sees_env (fixtures used: extra, kedi_env, *) .",
                "*TEARDOWN F extra",
                "*TEARDOWN F kedi_env",
                "*TEARDOWN F monkeypatch",
            ]
        )
    result.assert_outcomes(passed=3)
    if kedi.workers:  # each worker has its own session fixtures; the run passing is the point
        return
    log = (kedi.pytester.path / "log.txt").read_text(encoding="utf-8").splitlines()
    assert log == [
        "setup session_wide",
        "setup kedi_env sees_env",
        "setup extra sees_env",
        "teardown extra sees_env",
        "teardown kedi_env sees_env",
        "setup kedi_env eval:env",
        "teardown kedi_env eval:env",
        "setup kedi_env test_after",
        "teardown kedi_env test_after",
        "teardown session_wide",
    ]


def test_fixtures_per_test_lists_python_tests_and_ignores_kedi_items(kedi: Kedi) -> None:
    kedi.pytester.makeconftest(FIXTURE_CONFTEST)
    kedi.write("env.kedi", FIXTURE_KEDI)
    kedi.write("test_zz_after.py", FIXTURE_AFTER)
    result = kedi.run("--kedi-eval", "--fixtures-per-test", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*fixtures used by test_after*"])
    result.stdout.no_fnmatch_line("*INTERNALERROR*")


def _cases(count: int) -> str:
    cases = "".join(f"  > case: c{i}:\n    `assert True`\n" for i in range(count))
    return f"@test: t:\n{cases}"


@pytest.mark.single_process("--collect-only runs in one process, even with -n")
def test_pytest_randomly_keeps_a_files_items_together(kedi: Kedi) -> None:
    pytest.importorskip("pytest_randomly")
    for name in ("a", "b", "c"):
        kedi.write(f"{name}.kedi", _cases(4))
    kedi.write("test_py.py", "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    kedi.pytester.makeini("[pytest]\nkedi_collect = true\n")
    orders = set()
    for seed in range(1, 9):
        result = kedi.run(
            "-p", "randomly", f"--randomly-seed={seed}", "--collect-only", "-q",
            "-p", "no:cacheprovider",
        )  # fmt: skip
        ids = [line for line in result.stdout.lines if "::" in line]
        assert len(ids) == 14, result.stdout.str()
        files = [nodeid.split("::", 1)[0] for nodeid in ids]
        runs = [name for i, name in enumerate(files) if i == 0 or files[i - 1] != name]
        assert len(runs) == len(set(runs)), (seed, ids)
        for name in ("a", "b", "c"):  # a file's items in source order (language.md §5.1)
            cases = [nodeid.rsplit("::", 1)[1] for nodeid in ids if nodeid.startswith(name)]
            assert cases == ["c0", "c1", "c2", "c3"], (seed, ids)
        orders.add(tuple(ids))
    assert len(orders) > 1  # pytest-randomly did shuffle (the files among the modules)


SHARED_STATE = """\
[log: list] = `[]`

@test: first:
  > case: one:
    `log.append(1)`
  > case: two:
    `log.append(2)`

@eval: seen:
  > data: d:
    = `[(tuple(log), (1, 2))]`
  > metric: same(d):
    = `d == expected`

@test: then:
  > case: three:
    ```
    log.append(3)
    assert log == [1, 2, 3]
    ```
"""


@pytest.mark.single_process("a file's items share one runtime: under -n 2 they may not")
def test_a_files_cases_and_suites_run_in_source_order_under_pytest_randomly(kedi: Kedi) -> None:
    """They share one runtime, and each sees what the ones before it left (§5.1)."""
    pytest.importorskip("pytest_randomly")
    kedi.write("shared.kedi", SHARED_STATE)
    kedi.pytester.makeini("[pytest]\nkedi_collect = true\n")
    for seed in range(1, 7):
        result = kedi.run("-p", "randomly", f"--randomly-seed={seed}", "--kedi-eval", "-v")
        result.assert_outcomes(passed=4)
        ran = [line.split(" ", 1)[0] for line in result.stdout.lines if " PASSED" in line]
        assert [nodeid.rsplit("::", 1)[1] for nodeid in ran] == [
            "one", "two", "eval:seen", "three",
        ], (seed, ran)  # fmt: skip


STORE = """\
```
store = []
```

@add(x: int) -> int:
  = ```
  store.append(x)
  return len(store)
  ```

@test: add:
  > case: first:
    `assert add(1) == 1`
  > case: second:
    `assert add(2) == 2`
  > case: third:
    `assert add(3) == 99`
"""


@pytest.mark.single_process("a file's items share one runtime: under -n 2 they may not")
@pytest.mark.parametrize("flag", ["--ff", "--nf"])
def test_failed_first_and_new_first_keep_a_files_items_in_source_order(
    kedi: Kedi, flag: str
) -> None:
    """cacheprovider's reordering wraps every other hook: it ran after pytest-kedi restored
    the file's order, so `third` ran first and every case failed."""
    kedi.write("s.kedi", STORE)
    kedi.run("--kedi-eval", "-p", "no:randomly").assert_outcomes(passed=2, failed=1)
    kedi.write("s.kedi", STORE + "  > case: fourth:\n    `assert add(4) == 4`\n")
    result = kedi.run("--kedi-eval", "-p", "no:randomly", "-v", flag)
    result.assert_outcomes(passed=3, failed=1)
    ran = [line.split(" ", 1)[0].rsplit("::", 1)[1] for line in result.stdout.lines
           if line.startswith("s.kedi::")]  # fmt: skip
    assert ran == ["first", "second", "third", "fourth"]


@pytest.mark.single_process("-v's order of results is the run order only in one process")
def test_failed_first_runs_a_file_holding_a_failure_first_as_a_unit(kedi: Kedi) -> None:
    """`--ff` put `b.kedi`'s failed case first; the file's first case then filled that place
    and its failed case stayed behind the other files' tests."""
    kedi.write(
        "a.kedi", "@f() -> int:\n  = `1`\n\n@test: f:\n  > case: ok:\n    `assert f() == 1`\n"
    )
    kedi.write(
        "b.kedi",
        "@g() -> int:\n  = `1`\n\n@test: g:\n  > case: one:\n    `assert g() == 1`\n"
        "  > case: bad:\n    `assert g() == 2`\n",
    )
    kedi.write("test_c.py", "def test_x():\n    pass\n")
    kedi.run("--kedi-eval", "-p", "no:randomly").assert_outcomes(passed=3, failed=1)
    result = kedi.run("--kedi-eval", "-p", "no:randomly", "-v", "--ff")
    result.assert_outcomes(passed=3, failed=1)
    ran = [line.split(" ", 1)[0] for line in result.stdout.lines if line.endswith("%]")]
    assert ran == ["b.kedi::test:g::one", "b.kedi::test:g::bad", "a.kedi::test:f::ok",
                   "test_c.py::test_x"]  # fmt: skip


def test_parse_errors_show_paths_relative_to_the_invocation_directory(kedi: Kedi) -> None:
    kedi.write("sub/bad.kedi", "@eval: broken\n")
    kedi.write("sub/binary.kedi", "")
    (kedi.pytester.path / "sub" / "binary.kedi").write_bytes(b"\xff\xfe\x00bad")
    result = kedi.run("--kedi-eval", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(['  File "sub/bad.kedi", line 1, column *'])
    result.stdout.fnmatch_lines(['  File "sub/binary.kedi", line 1, column 1'])
    assert f"{kedi.pytester.path / 'sub'}" not in result.stdout.str()

    sub = kedi.pytester.path / "sub"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(sub)
        inner = kedi.run("--kedi-eval", f"--rootdir={kedi.pytester.path}", "-p", "no:cacheprovider")
    inner.stdout.fnmatch_lines(['  File "bad.kedi", line 1, column *'])
    inner.stdout.fnmatch_lines(["ERROR bad.kedi - bad.kedi:1:*"])
    assert f"{sub}" not in inner.stdout.str()


def test_the_run_output_says_why_eval_suites_were_skipped(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("other.kedi", DEMO)
    kedi.pytester.makeini("[pytest]\nkedi_collect = true\n")
    result = kedi.run()
    result.assert_outcomes(passed=4, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "kedi: 2 @eval: suites skipped: "
            "Kedi @eval: suites run only with --kedi-eval (or KEDI_EVAL=1)"
        ]
    )


TRACE_CLASS = """\
import pdb


class TracingPdb(pdb.Pdb):
    def interaction(self, frame, tb):
        self.setup(frame, tb)
        print("TRACE-AT", self.curframe.f_code.co_filename, self.curframe.f_lineno)
        self.forget()
        self.set_continue()
"""


@pytest.mark.single_process("xdist workers have no terminal to debug in")
def test_trace_stops_at_the_first_line_of_the_cases_python(kedi: Kedi) -> None:
    kedi.write("failing.kedi", FAILING)
    kedi.write("tracing_pdb.py", TRACE_CLASS)
    kedi.pytester.syspathinsert()
    result = kedi.run(
        "--kedi-eval",
        "--trace",
        "--pdbcls=tracing_pdb:TracingPdb",
        "-p",
        "no:cacheprovider",
        "failing.kedi::test:double::compare",
        "failing.kedi::test:fine::ok",
    )
    result.assert_outcomes(passed=1, failed=1)
    stops = [line for line in result.stdout.lines if line.startswith("TRACE-AT")]
    assert len(stops) == 2, result.stdout.str()
    for stop in stops:
        assert "failing.kedi" in stop and "pytest_kedi" not in stop, stop
    # the first line of the case's Python (`value = double(21)`, .kedi line 7), not the assert
    assert stops[0].endswith("failing.kedi 7"), stops
    assert stops[1].endswith("failing.kedi 21"), stops  # `fine::ok`'s one statement line


MISSING_FIXTURE_CONFTEST = """
import pytest


@pytest.fixture
def db(seeded_database):
    return 1


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("kedi_eval"):
            item.add_marker(pytest.mark.usefixtures("seeded_database"))
        elif item.get_closest_marker("kedi_test"):
            item.add_marker(pytest.mark.usefixtures("db"))
"""


def test_a_missing_fixture_is_a_setup_error_located_at_the_kedi_item(kedi: Kedi) -> None:
    """As for a Python test, not an INTERNALERROR: pytest's text for it reads the Python
    function a ``.kedi`` item does not have."""
    kedi.pytester.makeconftest(MISSING_FIXTURE_CONFTEST)
    kedi.write("env.kedi", FIXTURE_KEDI)
    result = kedi.run("--kedi-eval", "-p", "no:cacheprovider")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "env.kedi:2: fixture 'seeded_database' not found",
            "  > case: sees_env:",
            "file *conftest.py, line 4",
            "  @pytest.fixture",
            "  def db(seeded_database):",
            "  available fixtures: *",
            "  use 'pytest --fixtures [[]testpath[]]' for help on them.",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "env.kedi:8: fixture 'seeded_database' not found",
            "  @eval: env:",
            "  available fixtures: *",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "ERROR env.kedi::eval:env - Failed: env.kedi:8: fixture*",
        ]
    )


LATE_MARK_CONFTEST = """
import pytest


@pytest.fixture
def late(request):
    with open(request.config.rootpath / "late.txt", "a", encoding="utf-8") as log:
        log.write(request.node.name + "\\n")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("kedi"):
        item.add_marker(pytest.mark.usefixtures("late"))
"""


def test_a_usefixtures_mark_added_as_the_item_sets_up_is_used(kedi: Kedi) -> None:
    # pytest reads an item's request as its run starts; a mark added after that (by a
    # setup hook that runs before the item's own setup) still brings its fixture.
    kedi.pytester.makeconftest(LATE_MARK_CONFTEST)
    kedi.write("demo.kedi", DEMO)
    kedi.run("--kedi-eval", "-p", "no:cacheprovider").assert_outcomes(passed=3)
    ran = (kedi.pytester.path / "late.txt").read_text(encoding="utf-8").split()
    assert sorted(ran) == ["eval:initials", "padded", "two_words"]


@pytest.mark.parametrize("mode", ["off", "strict"])
def test_a_file_whose_sibling_names_would_be_too_long_runs(kedi: Kedi, mode: str) -> None:
    """``prog.kedi.optimized.json`` (or its cassette) of a 245-character ``prog.kedi`` is a
    name the system refuses: `Path.is_file` raised, and every item failed with OSError."""
    name = "p" * 245 + ".kedi"
    kedi.write(name, "@test: t:\n  > case: a:\n    `assert 1`\n")
    result = kedi.run("--kedi-eval", "--kedi-record-mode", mode)
    result.assert_outcomes(passed=1)


def test_an_invalid_optimized_prompts_file_is_shown_relative(kedi: Kedi) -> None:
    """Every item of a file whose `prog.kedi.optimized.json` is invalid fails; the message
    and stack trace named the file by its absolute path, as no `.kedi` location is."""
    kedi.write("pkg/prog.kedi", "@test: t:\n  > case: a:\n    `assert 1`\n")
    kedi.write("pkg/prog.kedi.optimized.json", "{bad")
    result = kedi.run("--kedi-eval", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "invalid optimized prompts in pkg/prog.kedi.optimized.json: Expecting" in out
    assert 'File "pkg/prog.kedi.optimized.json", line 1, in <optimized prompts>' in out
    assert f"{kedi.pytester.path}/pkg" not in out


def test_invalid_optimized_prompts_name_the_artifact_relative_to_the_run(kedi: Kedi) -> None:
    """The message named the artifact by its absolute path (the reports' text depended on
    where the project was checked out), while its location was already relative."""
    kedi.write("sub/p.kedi", "@test: t:\n  > case: c:\n    `pass`\n")
    kedi.write("sub/p.kedi.optimized.json", '{"bad": ')
    result = kedi.run("--kedi-eval", "--kedi-report", "r.json", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    (test,) = kedi.json("r.json")["tests"]
    assert test["message"] == (
        "the program failed to load at sub/p.kedi.optimized.json:1: KediModelError: invalid "
        "optimized prompts in sub/p.kedi.optimized.json: Expecting value: line 1 column 9 "
        "(char 8)"
    )
    assert 'File "sub/p.kedi.optimized.json", line 1, in <optimized prompts>' in result.stdout.str()
    root = str(kedi.pytester.path)
    assert [line for line in result.outlines if ".optimized.json" in line and root in line] == []
