"""``-v``: each suite's row scores as a one-line histogram, when it fits the terminal."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

from pytest_kedi.plugin.sparkline import histogram, histogram_line, sparkline


def test_histogram_uses_ten_fixed_bins_over_zero_to_one() -> None:
    assert histogram([0.0, 0.05, 0.1, 0.55, 0.99, 1.0]) == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    assert histogram([-0.5, 1.5]) == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert histogram([]) == [0] * 10


def test_sparkline_heights_are_relative_to_the_fullest_bin() -> None:
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7, 8, 0]) == " ▁▂▃▄▅▆▇█ "
    assert sparkline([1, 100]) == "▁█"  # a bin holding a score is never blank
    assert sparkline([0, 0]) == "  "


def test_histogram_line_only_when_it_fits() -> None:
    assert histogram_line([1.0, 1.0, 0.0], 80) == "    scores 0 |▄        █| 1"
    assert histogram_line([1.0], 28) == "    scores 0 |         █| 1"
    assert histogram_line([1.0], 27) is None  # the terminal's last column stays free
    assert histogram_line([], 80) is None


SUITES = """\
@half(x: int) -> float:
  = `x / 10`

@eval: half:
  > data: xs:
    = `[(n, None) for n in range(10)]`
  > metric: m(xs):
    = `half(xs)`

@eval: empty:
  > data: ys:
    = `[]`
  > metric: m(ys):
    = `1.0`
"""


@pytest.mark.parametrize(("columns", "shown"), [(80, True), (27, False)])
def test_verbose_summary_shows_a_histogram_per_suite(kedi: Kedi, columns: int, shown: bool) -> None:
    # pytest treats a terminal narrower than 40 columns as 80 wide: set the width directly
    kedi.write(
        "conftest.py",
        "import pytest\n\n@pytest.hookimpl(trylast=True)\ndef pytest_configure(config):\n"
        f"    config.get_terminal_writer().fullwidth = {columns}\n",
    )
    kedi.write("suites.kedi", SUITES)
    result = kedi.run("--kedi-eval", "-v", "--kedi-rows", "summary")
    lines = [line for line in result.outlines if line.startswith("    scores ")]
    assert lines == (["    scores 0 |██████████| 1"] if shown else [])
    quiet = kedi.run("--kedi-eval", "--kedi-rows", "summary")
    assert not any(line.startswith("    scores ") for line in quiet.outlines)


def test_scores_outside_0_and_1_are_told() -> None:
    """Scores are not clamped; those outside [0, 1] count in the end bins, which alone
    would show them as 0 and 1."""
    assert histogram_line([-5.0, 2.0, 3.0, 0.5], 80) == (
        "    scores 0 |▄    ▄   █| 1 (1 below 0, 2 above 1)"
    )
    assert histogram_line([-0.5], 80) == "    scores 0 |█         | 1 (1 below 0)"
    assert histogram_line([1.5], 80) == "    scores 0 |         █| 1 (1 above 1)"
    assert histogram_line([0.0, 1.0], 80) == "    scores 0 |█        █| 1"
