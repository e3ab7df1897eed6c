"""`--kedi-max-rows` and the data-loading time limit under pytest (issue 10 item 9)."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

ENDLESS = """\
@eval: endless:
  > data: xs:
    = `__import__("itertools").count()`
  > metric: m(xs):
    = `True`
"""

STUCK = """\
@eval: stuck:
  > data: xs:
    = `__import__("threading").Event().wait() or [1]`
  > metric: m(xs):
    = `True`
"""


@pytest.mark.parametrize(
    ("how", "limit"),
    [("option", "50"), ("env", "60"), ("ini", "70"), ("default", "1000000")],
)
def test_an_endless_dataset_fails_at_the_row_limit(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, how: str, limit: str
) -> None:
    kedi.write("endless.kedi", ENDLESS)
    args: tuple[str, ...] = ()
    if how == "option":
        args = ("--kedi-max-rows", limit)
    elif how == "env":
        monkeypatch.setenv("KEDI_MAX_ROWS", limit)
    elif how == "ini":
        kedi.pytester.makeini(f"[pytest]\nkedi_max_rows = {limit}\n")
    result = kedi.run("--kedi-eval", *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [f"*data-loading failed for data 'xs' at endless.kedi:2: the dataset has more than "
         f"{limit} rows, the row limit (--kedi-max-rows / KEDI_MAX_ROWS)*"]
    )  # fmt: skip


def test_an_invalid_row_limit_is_a_usage_error(kedi: Kedi) -> None:
    result = kedi.run("--kedi-max-rows", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--kedi-max-rows (command line): expected a positive integer, got '0'"]
    )


def test_a_loader_that_never_returns_fails_its_item(kedi: Kedi) -> None:
    kedi.write("stuck.kedi", STUCK)
    kedi.write("test_other.py", "def test_other():\n    pass\n")
    result = kedi.subprocess("--kedi-eval", "--kedi-timeout", "0.5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*data-loading failed for data 'xs' at stuck.kedi:2: it took longer than the time "
         "limit of 0.5s*"]
    )  # fmt: skip
