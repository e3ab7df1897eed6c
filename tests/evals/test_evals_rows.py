"""Iterable rules and row shapes (docs/language.md#datasets) and per-row bindings (§5.5)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest
from kedi_evals_fakes import FakeProgram, make_suite

from pytest_kedi.evals import run_suite, short_repr

Pair = namedtuple("Pair", "inp exp")


def bindings_for(value: Any) -> list[dict[str, Any]]:
    """The bindings each row's metric frame received for a dataset value."""
    program = FakeProgram({("data", "samples"): value}, lambda b: True)
    result = run_suite(program, make_suite())
    assert result.completed, result.error
    return program.calls


def test_two_tuples_bind_input_and_expected() -> None:
    rows = [("one two", 2), ("x", {"label": "y"}), ("z", [1, 2])]
    assert bindings_for(rows) == [
        {"samples": "one two", "expected": 2},
        {"samples": "x", "expected": {"label": "y"}},
        {"samples": "z", "expected": [1, 2]},
    ]


def test_none_expected_creates_no_expected_binding() -> None:
    assert bindings_for([("passage", None)]) == [{"samples": "passage"}]


def test_reading_absent_expected_is_a_row_error() -> None:
    def metric(b: dict[str, Any]) -> bool:
        if "expected" not in b:
            raise NameError("name 'expected' is not defined")
        return True

    program = FakeProgram({("data", "samples"): [("a", None), ("b", 1)]}, metric)
    result = run_suite(program, make_suite())
    assert result.score == 0.5
    assert result.feedback == "error: NameError: name 'expected' is not defined"
    assert [r.error_class for r in result.rows] == ["metric", None]


@pytest.mark.parametrize(
    "row",
    ["Kedi", {"text": "a"}, ["a", "b"], ("a", "b", "c"), ("single",), 7, ()],
    ids=["str", "dict", "list", "3-tuple", "1-tuple", "int", "empty-tuple"],
)
def test_raw_rows_bind_only_the_dataset_name(row: Any) -> None:
    assert bindings_for([row]) == [{"samples": row}]


def test_tuple_subclasses_count_as_tuples() -> None:
    assert bindings_for([Pair("in", "out")]) == [{"samples": "in", "expected": "out"}]


def test_multi_parameter_input_is_a_tuple() -> None:
    assert bindings_for([((2, 3), {"sum": 5})]) == [{"samples": (2, 3), "expected": {"sum": 5}}]


MAPPING = {"short": ["short"], "pair": ("a", "b"), "n": 3, "none": None, "rec": {"label": "x"}}
MAPPING_BINDINGS = [
    {"samples": ("short", ["short"])},
    {"samples": ("pair", ("a", "b"))},
    {"samples": ("n", 3)},
    {"samples": ("none", None)},
    {"samples": "rec", "expected": {"label": "x"}},
]


def test_dict_dataset_splits_only_dict_values() -> None:
    assert bindings_for(dict(MAPPING)) == MAPPING_BINDINGS


def test_dict_items_view_behaves_like_the_dict() -> None:
    assert bindings_for(dict(MAPPING).items()) == MAPPING_BINDINGS


def test_dict_keys_and_values_views_are_plain_iterables() -> None:
    assert bindings_for({"a": 1, "b": 2}.keys()) == [{"samples": "a"}, {"samples": "b"}]
    assert bindings_for({"a": ("x", 1)}.values()) == [{"samples": "x", "expected": 1}]


@pytest.mark.parametrize(
    "make",
    [
        lambda: [("a", 1), ("b", 2)],
        lambda: (("a", 1), ("b", 2)),
        lambda: (row for row in [("a", 1), ("b", 2)]),
        lambda: iter([("a", 1), ("b", 2)]),
    ],
    ids=["list", "tuple", "generator", "iterator"],
)
def test_iterables_are_materialized_in_order(make: Any) -> None:
    assert bindings_for(make()) == [
        {"samples": "a", "expected": 1},
        {"samples": "b", "expected": 2},
    ]


def test_set_and_range_are_accepted() -> None:
    assert bindings_for({("only", 1)}) == [{"samples": "only", "expected": 1}]
    assert bindings_for(range(3)) == [{"samples": 0}, {"samples": 1}, {"samples": 2}]


def test_each_row_gets_a_fresh_bindings_dict() -> None:
    def metric(b: dict[str, Any]) -> bool:
        leaked = "leak" in b
        b["leak"] = True
        return not leaked

    program = FakeProgram({("data", "samples"): ["a", "b", "c"]}, metric)
    result = run_suite(program, make_suite())
    assert result.score == 1.0
    assert len({id(b) for b in program.calls}) == 3


def test_shared_runtime_state_is_visible_to_later_rows() -> None:
    seen: list[str] = []

    def metric(b: dict[str, Any]) -> float:
        seen.append(b["samples"])
        return float(len(seen))

    program = FakeProgram({("data", "samples"): ["a", "b", "c"]}, metric)
    result = run_suite(program, make_suite())
    assert [r.score for r in result.rows] == [1.0, 2.0, 3.0]
    assert result.score == 2.0


def test_row_results_carry_short_reprs() -> None:
    long_input = "x" * 500
    program = FakeProgram({("data", "samples"): [(long_input, {"a": 1}), "raw"]}, lambda b: True)
    result = run_suite(program, make_suite())
    first, second = result.rows
    assert first.input is not None and len(first.input) == 200 and first.input.endswith("...")
    assert first.expected == "{'a': 1}"
    assert (second.index, second.input, second.expected) == (1, "'raw'", None)


def test_unrepresentable_input_does_not_break_the_row() -> None:
    class Ugly:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    program = FakeProgram({("data", "samples"): [Ugly()]}, lambda b: True)
    result = run_suite(program, make_suite())
    assert result.rows[0].input == "<unrepresentable Ugly: RuntimeError>"
    assert result.score == 1.0


def test_an_expected_value_without_a_repr_does_not_break_the_row() -> None:
    class Ugly:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    huge = 10**5000  # Python refuses to turn it into text
    rows = [("in", Ugly()), (huge, "out"), ("x" * 300, "y" * 300)]
    program = FakeProgram({("data", "samples"): rows}, lambda b: True)
    first, second, third = run_suite(program, make_suite()).rows
    assert (first.input, first.expected) == ("'in'", "<unrepresentable Ugly: RuntimeError>")
    assert (second.input, second.expected) == ("<unrepresentable int: ValueError>", "'out'")
    assert third.input == short_repr("x" * 300) and third.expected == short_repr("y" * 300)
    assert [row.score for row in (first, second, third)] == [1.0, 1.0, 1.0]


def test_on_rows_is_told_the_row_count_before_the_first_row() -> None:
    events: list[object] = []
    program = FakeProgram({("data", "samples"): ["a", "b", "c"]}, lambda b: True)
    run_suite(program, make_suite(), on_rows=events.append, on_row=lambda r: events.append(r.index))
    assert events == [3, 0, 1, 2]


#: Scores 300 rows of a `.kedi` suite and prints how many objects were frozen as row 1 and
#: row 299 ran, with rows that keep two objects each, then with rows that also leave five
#: cyclic lists each (GC off: no collection empties the young generation between checks).
#: A fresh process: in the test process, other threads' allocations and heap blocks (pools,
#: model loops of earlier tests) change what a young generation holds.
_FREEZING = '''
import gc, sys
from pytest_kedi.evals import run_suite
from pytest_kedi.runtime import load

SOURCE = """
```
import gc
counts = []

def seen(x, garbage):
    counts.append(gc.get_freeze_count())
    for _ in range(garbage):
        loop = []
        loop.append(loop)
    return True
```
@eval: rows:
  > data: samples:
    = `[(i, i) for i in range(300)]`
  > metric: exact(samples):
    = `seen(samples, GARBAGE)`
"""
for garbage in (0, 5):
    path = sys.argv[1] + f"/rows_{garbage}.kedi"
    open(path, "w").write(SOURCE.replace("GARBAGE", str(garbage)))
    program = load(path, mode="validate")
    (suite,) = program.module.eval_suites
    if garbage:
        gc.disable()
    result = run_suite(program, suite)
    gc.enable()
    counts = program.get("counts")
    assert result.score == 1.0 and len(counts) == 300, result.feedback
    assert gc.get_freeze_count() == 0  # the suite's block ended: nothing stays frozen
    print(garbage, counts[1], counts[299])
'''


def test_the_results_of_rows_that_keep_little_are_frozen_as_they_are_scored(
    tmp_path: Any,
) -> None:
    # The collector's young passes would otherwise walk every row's result again; rows
    # that make more objects are left to the collector.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _FREEZING, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    few, many = (tuple(map(int, line.split()[1:])) for line in done.stdout.splitlines())
    assert few[1] > few[0]  # frozen as the rows were scored
    assert many[1] == many[0]  # nothing frozen: more than three young objects a row
