"""A row's input and expected text is the dataset's value before the row ran: a procedure
or metric that changes the value in place (``words.sort()``) does not change what the
reports show, and `--kedi-rerun` matches the row with the freshly loaded one. Before, the
text was made after the metric ran: the report showed a value the dataset never held, and
a rerun carried nothing over because no row matched."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_kedi.evals import EvalOptions, run_suite
from pytest_kedi.runtime import load

SOURCE = """\
@srt(words: list) -> list:
  = ```
  words.sort()
  return words
  ```

@eval: srt:
  > data: rows:
    = `[(["b", "a"], ["z", "y"]), (["d", "c"], ["x"]), (["f", "e"], ["w"])]`
  > metric: exact(rows):
    = ```
    out = srt(rows)
    expected.reverse()
    if out[0] == "c":
        raise ValueError("boom")
    if out[0] == "e":
        import time
        time.sleep(SLEEP)
    return out == expected
    ```
"""


def _rows(tmp_path: Path, options: EvalOptions, sleep: float = 0.0) -> list[tuple[str, str]]:
    path = tmp_path / "mut.kedi"
    path.write_text(SOURCE.replace("SLEEP", repr(sleep)), encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite, options)
    return [(row.input, row.expected, row.error_class) for row in result.rows]


WANTED = [
    ("['b', 'a']", "['z', 'y']", None),
    ("['d', 'c']", "['x']", "metric"),
    ("['f', 'e']", "['w']", None),
]


@pytest.mark.parametrize("concurrency", [1, 3])
@pytest.mark.parametrize("repeat", [1, 2])
def test_the_row_text_is_the_value_before_the_row_ran(
    tmp_path: Path, concurrency: int, repeat: int
) -> None:
    options = EvalOptions(concurrency=concurrency, repeat=repeat)
    assert _rows(tmp_path, options) == WANTED


def test_a_timed_out_row_shows_its_value_before_it_ran(tmp_path: Path) -> None:
    started = time.monotonic()
    rows = _rows(tmp_path, EvalOptions(timeout=0.3, concurrency=2), sleep=3.0)
    assert time.monotonic() - started < 3.0
    assert rows == [*WANTED[:2], ("['f', 'e']", "['w']", "timeout")]
