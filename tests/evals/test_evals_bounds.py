"""Datasets are bounded (issue 10 item 9): a row limit and a data-loading time limit."""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path

import pytest

from pytest_kedi.evals import EvalOptions, SuiteResult, run_suite
from pytest_kedi.runtime import load


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def score(tmp_path: Path, source: str, options: EvalOptions) -> SuiteResult:
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    return run_suite(program, suite, options)


ENDLESS = """
    @eval: endless:
      > data: xs:
        = `__import__("itertools").count()`
      > metric: m(xs):
        = `True`
"""


def test_an_endless_dataset_stops_at_the_row_limit(tmp_path: Path) -> None:
    result = score(tmp_path, ENDLESS, EvalOptions(max_rows=1000))
    assert result.rows == []
    assert result.error == (
        "data-loading failed for data 'xs' at suite.kedi:2: the dataset has more than 1000 "
        "rows, the row limit (--kedi-max-rows / KEDI_MAX_ROWS)"
    )


def test_a_dataset_at_the_limit_is_scored(tmp_path: Path) -> None:
    source = ENDLESS.replace('`__import__("itertools").count()`', "`range(1000)`")
    result = score(tmp_path, source, EvalOptions(max_rows=1000))
    assert (result.error, result.rows_total, result.score) == (None, 1000, 1.0)


def test_the_default_row_limit_is_one_million() -> None:
    assert EvalOptions().max_rows == 1_000_000
    with pytest.raises(ValueError, match="max_rows must be a positive integer"):
        EvalOptions(max_rows=0)


def test_a_loader_that_never_returns_fails_at_the_timeout(tmp_path: Path) -> None:
    source = """
        @eval: stuck:
          > data: xs:
            = ```
            import threading
            threading.Event().wait()
            return [1]
            ```
          > metric: m(xs):
            = `True`
    """
    result = score(tmp_path, source, EvalOptions(timeout=0.2))
    assert result.rows == []
    assert result.error == (
        "data-loading failed for data 'xs' at suite.kedi:2: it took longer than the time "
        "limit of 0.2s (--kedi-timeout also bounds loading a dataset)"
    )


def test_a_slow_endless_generator_stops_once_its_load_timed_out(tmp_path: Path) -> None:
    source = """
        ```
        import itertools, threading
        def slow():
            pause = threading.Event()
            for i in itertools.count():
                pause.wait(0.001)
                yield i
        ```
        @eval: slow:
          > data: xs:
            = `slow()`
          > metric: m(xs):
            = `True`
    """
    before = set(threading.enumerate())
    result = score(tmp_path, source, EvalOptions(timeout=0.2))
    assert result.error is not None and "time limit of 0.2s" in result.error
    for thread in set(threading.enumerate()) - before:
        if thread.name == "kedi-data-loader":
            thread.join(30)
            assert not thread.is_alive(), "the timed-out load kept materializing rows"


def test_a_list_dataset_over_the_limit_fails_and_its_rows_keep_their_shapes(
    tmp_path: Path,
) -> None:
    # A list's rows are taken in one step (nothing can run between them): the limit
    # still holds, and every row shape reads as before: a 2-tuple is (input, expected),
    # None as expected means none, a tuple subclass is a row too, anything else an input.
    over = score(
        tmp_path,
        """
        @eval: listed:
          > data: xs:
            = `list(range(4))`
          > metric: m(xs):
            = `True`
        """,
        EvalOptions(max_rows=3),
    )
    assert over.rows == []
    assert over.error is not None and "more than 3 rows" in over.error
    shapes = score(
        tmp_path,
        """
        @eval: shapes:
          > data: xs:
            = `[("a", "A"), ("b", None), __import__("collections").namedtuple("P", "x y")("c", "C"),
               "d"]`
          > metric: m(xs):
            = `True`
        """,
        EvalOptions(max_rows=4),
    )
    assert [(row.input, row.expected) for row in shapes.rows] == [
        ("'a'", "'A'"), ("'b'", None), ("'c'", "'C'"), ("'d'", None),
    ]  # fmt: skip


def test_a_lazy_dataset_raising_while_read_is_located_at_its_line(tmp_path: Path) -> None:
    """A generator raising mid-stream was located at the `> data:` header, with no Kedi
    stack trace, where the same code returning a list is located at its line."""
    source = """
        @eval: gen_raises:
          > data: xs:
            = ```
            def g():
                yield 1
                raise RuntimeError("mid-stream")
            return g()
            ```
          > metric: m(xs):
            = `1`
    """
    result = score(tmp_path, source, EvalOptions())
    assert result.error == (
        "data-loading failed for data 'xs' at suite.kedi:6: RuntimeError: mid-stream"
    )
    assert "Kedi stack trace:" in str(result.exception)
