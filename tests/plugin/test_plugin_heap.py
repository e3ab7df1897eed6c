"""A session keeps no cyclic garbage back until it ends.

pytest-kedi freezes the heap around an eval item's run and its row reports (so that the
collections the suite triggers do not walk the rest of the process), and the frozen
objects go to the oldest generation afterwards. Two faults kept garbage until the
session's end: garbage frozen with them (pytest's fixture closures left a dozen objects
of it for every item), and objects that became garbage after the thaw (an errored row's
exception and its frames), because objects thawed never counted towards the oldest
generation's next full collection. Each run here counts, as the session ends, the garbage
a full collection finds.
"""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

FILES = 60

SUITE = """\
@double_{i}(x: int) -> int:
  = `x * 2`

@eval: double_{i}:
  > data: numbers:
    = `[(n, n * 2) for n in range({rows})]`
  > metric: exact(numbers):
    = `double_{i}(numbers) == expected`

@test: file_{i}:
  > case: doubles:
    `assert double_{i}(21) == 42`
  > case: again:
    `assert double_{i}(1) == 2`
"""

#: A suite whose every row errors: each row's exception holds its traceback's frames,
#: garbage in reference cycles once the suite's results are dropped.
ERRING = """\
@eval: erring_{i}:
  > data: numbers:
    = `[(n, n) for n in range(100)]`
  > metric: exact(numbers):
    = `numbers / 0`
"""

#: Writes, as the session ends (before pytest's own end-of-session collections), how many
#: unreachable objects a full collection finds.
CONFTEST = """\
import gc


def pytest_unconfigure(config):
    found = gc.collect()
    with open("garbage.txt", "w", encoding="utf-8") as out:
        out.write(str(found))
"""


def _garbage(kedi: Kedi) -> int:
    return int((kedi.pytester.path / "garbage.txt").read_text(encoding="utf-8"))


@pytest.mark.single_process("counts the garbage of the process that runs the items")
def test_items_leave_no_garbage_behind(kedi: Kedi) -> None:
    kedi.write("conftest.py", CONFTEST)
    for i in range(FILES):
        kedi.write(f"suite_{i}.kedi", SUITE.format(i=i, rows=5))
    result = kedi.subprocess("--kedi-eval", "-q")
    result.assert_outcomes(passed=FILES * 3)
    # About 100 whatever the number of items (pytest's own); before, about 12 more for
    # each of the 180 items (about 2,500 in all).
    assert _garbage(kedi) < 400


@pytest.mark.single_process("counts the garbage of the process that runs the rows")
def test_garbage_of_errored_rows_is_collected_as_the_session_goes(kedi: Kedi) -> None:
    # Each suite leaves about 2,500 objects of garbage; 60 of them, kept to the end, are
    # about 150,000. Objects frozen and thawed again count, as those the collector
    # moves to the oldest generation do, towards its next full collection.
    kedi.write("conftest.py", CONFTEST)
    for i in range(60):
        kedi.write(f"erring_{i}.kedi", ERRING.format(i=i))
    result = kedi.subprocess("--kedi-eval", "-q", "--kedi-rows", "summary")
    result.assert_outcomes(passed=60)
    assert _garbage(kedi) < 20_000  # before: about 150,000


#: Turns GC off as the session starts, and writes how many collections ran until its end.
GC_OFF_CONFTEST = """\
import gc

collections = []


def pytest_configure(config):
    gc.disable()
    gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info))


def pytest_unconfigure(config):
    with open("collections.txt", "w", encoding="utf-8") as out:
        out.write(str(len(collections)))
"""


@pytest.mark.single_process("counts the collections of the process that runs the items")
def test_gc_turned_off_stays_off(kedi: Kedi) -> None:
    # A process that turned GC off (to keep collection pauses off its timings, say) gets
    # no collection from pytest-kedi, with rows as sub-results and in the summary.
    kedi.write("conftest.py", GC_OFF_CONFTEST)
    for i in range(3):
        kedi.write(f"suite_{i}.kedi", SUITE.format(i=i, rows=200))
    for mode in ("subtests", "summary"):
        result = kedi.subprocess("--kedi-eval", "-q", "--kedi-rows", mode)
        result.assert_outcomes(passed=9)
        assert (kedi.pytester.path / "collections.txt").read_text(encoding="utf-8") == "0"
