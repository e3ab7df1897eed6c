"""--kedi-rerun: across two runs, only the rows that broke run again; the others are
carried over from pytest's cache, and the report and the summary say which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kedi_plugin_helpers import Kedi

# Each row appends its input to ran.txt; bad.txt says which rows error ("e1") or score
# 0.5 ("f2"); data.txt holds the dataset.
PROGRAM = """\
```
import pathlib


def score(x):
    with open("ran.txt", "a") as log:
        log.write(f"{x}\\n")
    bad = pathlib.Path("bad.txt").read_text().split()
    if f"e{x}" in bad:
        raise ValueError(f"row {x} broke")
    return 0.5 if f"f{x}" in bad else 1.0
```

@eval: score:
  > data: xs:
    = `[int(x) for x in pathlib.Path("data.txt").read_text().split()]`
  > metric: m(xs):
    = `score(xs)`
"""


def setup(kedi: Kedi, bad: str, data: str = "0 1 2 3") -> None:
    kedi.write("rerun.kedi", PROGRAM)
    kedi.write("bad.txt", bad)
    kedi.write("data.txt", data)
    kedi.write("ran.txt", "")


def ran(kedi: Kedi) -> list[int]:
    text = (kedi.pytester.path / "ran.txt").read_text(encoding="utf-8")
    return sorted(int(x) for x in text.split())


def run(kedi: Kedi, *args: str) -> pytest.RunResult:
    kedi.write("ran.txt", "")
    return kedi.run("--kedi-eval", "--kedi-report", "r.json", *args)


def test_rerun_errors_runs_only_errored_rows_and_carries_the_rest(kedi: Kedi) -> None:
    setup(kedi, "e1 f2")
    first = run(kedi)
    first.assert_outcomes(passed=1)
    assert ran(kedi) == [0, 1, 2, 3]
    assert "kedi rerun" not in first.stdout.str()
    assert kedi.json("r.json")["suites"][0]["rerun"] is None

    kedi.write("bad.txt", "")  # the error is fixed
    second = run(kedi, "--kedi-rerun", "errors")
    second.assert_outcomes(passed=1)
    assert ran(kedi) == [1]
    second.stdout.fnmatch_lines(
        [
            "- score::m: 0.8750  [passed]",
            "kedi rerun (errors): 1 row rerun, 3 carried over from the previous run",
        ]
    )
    suite = kedi.json("r.json")["suites"][0]
    assert suite["rerun"] == {
        "mode": "errors", "previous_run": True, "rows_rerun": 1, "rows_carried_over": 3,
    }  # fmt: skip
    rows = suite["rows"]
    assert [row["carried_over"] for row in rows] == [True, False, True, True]
    assert [row["score"] for row in rows] == [1.0, 1.0, 0.5, 1.0]
    assert (suite["rows_errored"], suite["score"]) == (0, 0.875)

    third = run(kedi, "--kedi-rerun", "failures")  # row 2 scored 0.5 < 1.0
    assert ran(kedi) == [2]
    third.stdout.fnmatch_lines(["- score::m: 1.0000  [passed]", "kedi rerun (failures): 1 row*"])


def test_rerun_failures_uses_the_row_min_score(kedi: Kedi) -> None:
    setup(kedi, "e1 f2")
    run(kedi).assert_outcomes(passed=1)
    run(kedi, "--kedi-rerun", "failures", "--kedi-row-min-score", "0.4")
    assert ran(kedi) == [1]  # 0.5 is not a failure at 0.4; the errored row is


def test_rerun_reruns_rows_whose_data_changed(kedi: Kedi) -> None:
    setup(kedi, "")
    run(kedi).assert_outcomes(passed=1)
    kedi.write("data.txt", "0 1 5 3 4")
    result = run(kedi, "--kedi-rerun", "errors")
    assert ran(kedi) == [4, 5]  # index 2 has a new input; index 4 is new
    result.stdout.fnmatch_lines(["kedi rerun (errors): 2 rows rerun, 3 carried over*"])


# Inputs and expected values longer than the reports' 200-character reprs: the tails
# (data.txt) differ only past the part a report keeps.
LONG_PROGRAM = """\
```
import pathlib


def tails():
    with open("ran.txt", "a") as log:
        log.write("0\\n")
    return pathlib.Path("data.txt").read_text().split()
```

@eval: long:
  > data: xs:
    = `[("x" * 300 + tails()[0], "y" * 300 + tails()[1])]`
  > metric: m(xs):
    = `xs.endswith("a") and expected.endswith("a")`
"""


def test_rerun_reruns_a_long_row_whose_data_changed_past_its_report_repr(kedi: Kedi) -> None:
    """A row is carried over only when its data is unchanged: a change past the 200
    characters of the reprs the report keeps is a change too (the row runs again), not a
    stale score carried over."""
    kedi.write("rerun.kedi", LONG_PROGRAM)
    kedi.write("data.txt", "a a")
    kedi.write("ran.txt", "")
    run(kedi).assert_outcomes(passed=1)
    assert kedi.json("r.json")["suites"][0]["score"] == 1.0
    for data in ("b a", "a b"):  # the input changed, then the expected value
        kedi.write("data.txt", data)
        result = run(kedi, "--kedi-rerun", "errors")
        result.stdout.fnmatch_lines(
            ["- long::m: 0.0000  [passed]", "kedi rerun (errors): 1 row rerun, 0 carried over*"]
        )
        suite = kedi.json("r.json")["suites"][0]
        assert [row["carried_over"] for row in suite["rows"]] == [False]
        assert suite["score"] == 0.0


BROKEN_DATA = """\
@eval: broken:
  > data: xs:
    = `1/0`
  > metric: m(xs):
    = `xs > 0`
"""


def test_rerun_without_a_previous_run_runs_every_row(kedi: Kedi) -> None:
    setup(kedi, "e1")
    result = run(kedi, "--kedi-rerun", "errors")
    assert ran(kedi) == [0, 1, 2, 3]
    result.stdout.fnmatch_lines(
        [
            "kedi rerun (errors): 4 rows rerun, 0 carried over from the previous run",
            "kedi rerun: no previous run of 1 suite: all their rows ran",
        ]
    )
    rerun = kedi.json("r.json")["suites"][0]["rerun"]
    assert (rerun["previous_run"], rerun["rows_rerun"]) == (False, 4)


def test_rerun_with_repeats_reruns_every_repeat(kedi: Kedi) -> None:
    setup(kedi, "e3")
    run(kedi, "--kedi-repeat", "2").assert_outcomes(passed=1)
    assert ran(kedi) == [0, 0, 1, 1, 2, 2, 3, 3]
    kedi.write("bad.txt", "")
    run(kedi, "--kedi-repeat", "2", "--kedi-rerun", "errors")
    assert ran(kedi) == [3, 3]
    rows = kedi.json("r.json")["suites"][0]["rows"]
    assert [row["scores"] for row in rows] == [[1.0, 1.0]] * 4


@pytest.mark.single_process("the cache plugin is switched off in this process only")
def test_rerun_without_the_cache_plugin_runs_every_row(kedi: Kedi) -> None:
    setup(kedi, "")
    run(kedi, "-p", "no:cacheprovider").assert_outcomes(passed=1)
    result = run(kedi, "-p", "no:cacheprovider", "--kedi-rerun", "errors")
    assert ran(kedi) == [0, 1, 2, 3]
    result.stdout.fnmatch_lines(["kedi rerun: no previous run of 1 suite: all their rows ran"])
    assert not Path(kedi.pytester.path, ".pytest_cache").exists()


def _rows_file(kedi: Kedi) -> Path:
    """The one file that holds every suite's rows (pytest's own entries hold none)."""
    assert not Path(kedi.pytester.path, ".pytest_cache", "v", "kedi").exists()
    return Path(kedi.pytester.path, ".pytest_cache", "d", "kedi-rerun", "rows")


def _read(entry: Path) -> dict[str, str]:
    """The file's suites: node id to rows (JSON text), a line each."""
    lines = entry.read_text(encoding="utf-8").split("\n")
    assert lines.pop() == ""
    pairs = [line.split("\t") for line in lines]
    return {json.loads(nodeid): rows for nodeid, rows in pairs}


def _write(entry: Path, suites: dict[str, str]) -> None:
    entry.write_text("".join(f"{json.dumps(k)}\t{v}\n" for k, v in suites.items()), "utf-8")


@pytest.mark.parametrize(
    "damage",
    ["not json {", '"%s"\t[{\n', '"%s"[]\n', '["%s"]\t[]\n', '"%s"\t[]', "\udcff"],
)
def test_rerun_ignores_a_damaged_entry_and_runs_every_row(kedi: Kedi, damage: str) -> None:
    setup(kedi, "")
    run(kedi).assert_outcomes(passed=1)
    entry = _rows_file(kedi)
    (nodeid,) = _read(entry)
    entry.write_text(damage.replace("%s", nodeid), "utf-8", "surrogateescape")
    result = run(kedi, "--kedi-rerun", "errors")
    result.assert_outcomes(passed=1)
    assert ran(kedi) == [0, 1, 2, 3]
    result.stdout.fnmatch_lines(["kedi rerun: no previous run of 1 suite: all their rows ran"])
    assert run(kedi, "--kedi-rerun", "errors").ret == 0  # the entry was written afresh
    assert ran(kedi) == []


@pytest.mark.parametrize(
    "damage",
    [
        {"feedback": 7},
        {"output": {"a": 1}},
        {"usage": "x"},
        {"score": "NaN"},
        {"scores": [1e999]},
        {"index": 1e999},
    ],
)
def test_rerun_ignores_a_stored_row_no_run_could_make(
    kedi: Kedi, damage: dict[str, object]
) -> None:
    """A stored row with a field of the wrong type errored the suite (AttributeError), and
    one with a NaN or infinite score was carried over into the suite's score."""
    setup(kedi, "")
    run(kedi).assert_outcomes(passed=1)
    entry = _rows_file(kedi)
    stored = _read(entry)
    for nodeid, text in stored.items():
        rows = json.loads(text)
        rows[0].update(damage)
        stored[nodeid] = json.dumps(rows)
    _write(entry, stored)
    result = run(kedi, "--kedi-rerun", "errors")
    result.assert_outcomes(passed=1)
    assert ran(kedi) == [0, 1, 2, 3]
    result.stdout.fnmatch_lines(["kedi rerun: no previous run of 1 suite: all their rows ran"])
    assert kedi.json("r.json")["suites"][0]["score"] == 1.0


def test_a_suite_of_many_batches_is_stored_as_the_report_has_it(kedi: Kedi) -> None:
    """The rows are written a batch at a time: together, the report's rows."""
    kedi.write("rerun.kedi", PROGRAM.replace("return 0.5", "return float('nan')"))
    kedi.write("bad.txt", "f2 e1100")
    kedi.write("data.txt", " ".join(str(i) for i in range(1200)))
    run(kedi).assert_outcomes(passed=1)
    (rows,) = _read(_rows_file(kedi)).values()
    reported = kedi.json("r.json")["suites"][0]["rows"]
    for row in reported:  # (the baseline's keys: the stored rows have none)
        assert (row.pop("delta"), row.pop("regressed")) == (None, None)
    assert json.loads(rows) == reported
    kedi.write("bad.txt", "")
    run(kedi, "--kedi-rerun", "errors").assert_outcomes(passed=1)
    assert ran(kedi) == [2, 1100]  # the invalid score's row and the errored one


@pytest.mark.parametrize("form", ["rows", "rows_json"])
def test_rerun_reads_an_entry_written_by_an_earlier_version(kedi: Kedi, form: str) -> None:
    """Earlier versions stored an entry per suite, its rows as a JSON list (``rows``) or
    as one string (``rows_json``)."""
    from pytest_kedi.plugin.rerun import cache_key

    setup(kedi, "e1")
    run(kedi).assert_outcomes(passed=1)
    entry = _rows_file(kedi)
    ((nodeid, rows),) = _read(entry).items()
    entry.unlink()
    old = Path(kedi.pytester.path, ".pytest_cache", "v", cache_key(nodeid))
    old.parent.mkdir(parents=True)
    value = json.loads(rows) if form == "rows" else rows
    old.write_text(json.dumps({"nodeid": nodeid, form: value}, indent=2), encoding="utf-8")
    kedi.write("bad.txt", "")
    run(kedi, "--kedi-rerun", "errors").assert_outcomes(passed=1)
    assert ran(kedi) == [1]


def test_rerun_reads_and_folds_in_the_shared_entry_of_an_earlier_version(kedi: Kedi) -> None:
    """The version before kept every suite's rows in one pytest entry
    (``kedi/rerun-rows``): a rerun reads it, and the first run to store rows moves the
    suites it did not run into the file."""
    setup(kedi, "e1")
    kedi.write("other.kedi", PROGRAM.replace("@eval: score:", "@eval: other:"))
    run(kedi).assert_outcomes(passed=2)
    entry = _rows_file(kedi)
    stored = _read(entry)
    entry.unlink()
    shared = Path(kedi.pytester.path, ".pytest_cache", "v", "kedi", "rerun-rows")
    shared.parent.mkdir()
    shared.write_text(json.dumps({"suites": stored}, indent=2), encoding="utf-8")
    kedi.write("bad.txt", "")
    run(kedi, "-k", "other", "--kedi-rerun", "errors").assert_outcomes(passed=1)
    assert ran(kedi) == [1]  # other.kedi's errored row
    assert json.loads(shared.read_text(encoding="utf-8")) is None
    assert sorted(_read(entry)) == sorted(stored)
    run(kedi, "-k", "rerun", "--kedi-rerun", "errors").assert_outcomes(passed=1)
    assert ran(kedi) == [1]  # rerun.kedi's, stored by the first run, moved to the file


def test_a_run_keeps_the_stored_rows_of_suites_it_did_not_run(kedi: Kedi) -> None:
    setup(kedi, "e1")
    kedi.write("other.kedi", PROGRAM.replace("@eval: score:", "@eval: other:"))
    run(kedi).assert_outcomes(passed=2)
    kedi.write("bad.txt", "")
    run(kedi, "-k", "other", "--kedi-rerun", "errors").assert_outcomes(passed=1)
    assert ran(kedi) == [1]  # other.kedi's errored row
    run(kedi, "-k", "rerun", "--kedi-rerun", "errors").assert_outcomes(passed=1)
    assert ran(kedi) == [1]  # rerun.kedi's, stored by the first run


# Another session on the same project (another terminal, an IDE) stores the rows of the
# suite it ran while this run is scoring its own suite.
MEANWHILE = """\
import json
import pathlib


def pytest_kedi_suite_result(item, result):
    entry = pathlib.Path(".pytest_cache", "d", "kedi-rerun", "rows")
    lines = entry.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if "other" not in line.split("\\t")[0]]
    other = [line.split("\\t")[0] + "\\t[]" for line in lines if line not in kept]
    entry.write_text("".join(line + "\\n" for line in kept + other), encoding="utf-8")
"""


def test_a_run_keeps_what_another_session_stored_meanwhile(kedi: Kedi) -> None:
    """The rows are stored with the file as it is when the run ends, not as it was when
    the run read it: a suite another session ran meanwhile keeps that session's rows."""
    setup(kedi, "e1")
    kedi.write("other.kedi", PROGRAM.replace("@eval: score:", "@eval: other:"))
    run(kedi).assert_outcomes(passed=2)
    kedi.write("conftest.py", MEANWHILE)
    run(kedi, "-k", "rerun", "--kedi-rerun", "errors").assert_outcomes(passed=1)
    suites = _read(_rows_file(kedi))
    (other,) = [nodeid for nodeid in suites if "other" in nodeid]
    assert suites[other] == "[]"


def test_a_suite_that_failed_before_scoring_is_not_said_to_have_run_its_rows(kedi: Kedi) -> None:
    """A suite whose data failed to load (or whose metric names no dataset) ran no row:
    the rerun summary said ``no previous run of 1 suite: all their rows ran``."""
    kedi.write("broken.kedi", BROKEN_DATA)
    result = kedi.run("--kedi-eval", "--kedi-rerun", "errors")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["kedi rerun (errors): 0 rows rerun, 0 carried over*"])
    assert "no previous run" not in result.stdout.str()
