"""``--kedi-shard K/N`` (issue 11 §6): disjoint shares of the Kedi items whose merged reports
give the unsharded verdict."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import DEMO, FLIP, Kedi, without_durations

from pytest_kedi import cli

MORE = """\
@eval: first:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `1.0`

@eval: second:
  > data: xs:
    = `[1]`
  > metric: m(xs):
    = `0.5`
"""


def test_shards_split_the_kedi_items_and_merge_back(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    kedi.write("a.kedi", DEMO)
    kedi.write("b.kedi", MORE)
    kedi.write("test_plain.py", "def test_plain():\n    pass\n")
    gate = ("--kedi-eval", "--kedi-min-score", "0.6")
    one = kedi.run(*gate, "--kedi-shard", "1/2", "--kedi-report", "s1.json")
    two = kedi.run(*gate, "--kedi-shard", "2/2", "--kedi-report", "s2.json")
    full = kedi.run(*gate, "--kedi-report", "full.json")
    # suites a::initials, b::first, b::second -> 1/2 gets initials and second; cases
    # padded and two_words -> one each; the Python test runs in both shards
    # (under xdist the workers deselect, and the controller counts no deselected items)
    single = kedi.workers is None
    one.assert_outcomes(passed=3, failed=1, deselected=2 if single else 0)
    two.assert_outcomes(passed=3, deselected=3 if single else 0)
    full.assert_outcomes(passed=5, failed=1)
    shards = [kedi.json("s1.json"), kedi.json("s2.json")]
    ids = [{entry["nodeid"] for entry in s["suites"] + s["tests"]} for s in shards]
    assert not ids[0] & ids[1]
    paths = [str(kedi.pytester.path / name) for name in ("s1.json", "s2.json", "all.json")]
    assert cli.main(["merge", *paths[:2], "-o", paths[2]], prog="pytest-kedi") == 1
    assert "FAILED b.kedi::eval:second: score 0.5000 is below the min score 0.6000" in (
        capsys.readouterr().out.splitlines()
    )
    merged, whole = kedi.json("all.json"), kedi.json("full.json")
    for key in ("suites", "tests"):
        assert without_durations(merged[key]) == without_durations(whole[key])


@pytest.mark.parametrize("value", ["0/2", "3/2", "2", "a/b"])
def test_bad_shard_values(kedi: Kedi, value: str) -> None:
    kedi.write("a.kedi", DEMO)
    result = kedi.run("--kedi-eval", "--kedi-shard", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    expected = f"expected K/N with 1 <= K <= N, e.g. 2/4, got '{value}'"
    result.stderr.fnmatch_lines([f"ERROR: --kedi-shard (command line): {expected}"])


CALLS = """\
@echo(x) -> str:
  >> Say <x>.

@eval: calls:
  > data: xs:
    = `["a", "b"]`
  > metric: m(xs):
    = `1.0 if echo(xs) else 0.0`
"""


def test_merge_prints_the_usage_and_flaky_lines_of_the_unsharded_run(
    kedi: Kedi, capsys: pytest.CaptureFixture[str]
) -> None:
    """``merge`` prints the ``kedi`` section's usage and flaky-row lines as one run would."""
    kedi.write("flip.kedi", FLIP)
    kedi.write("calls.kedi", CALLS)
    args = ("--kedi-eval", "--kedi-repeat", "3", "--kedi-rows", "summary")
    kedi.run(*args, "--kedi-shard", "1/2", "--kedi-report", "s1.json")
    kedi.run(*args, "--kedi-shard", "2/2", "--kedi-report", "s2.json")
    full = kedi.run(*args)
    wanted = [
        line
        for line in full.stdout.lines
        if line.startswith(("usage: ", "    flaky rows", "- flip::", "- calls::"))
    ]
    assert len(wanted) == 4, full.stdout.str()
    paths = [str(kedi.pytester.path / name) for name in ("s1.json", "s2.json")]
    capsys.readouterr()
    assert cli.main(["merge", *paths], prog="pytest-kedi") == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line in wanted] == wanted
