"""Suite bodies run without the interpreter (`runtime.quickbody`) must behave exactly like it.

Each metric runs on the quick path and, in a second load of the same file with the quick
path switched off, on the interpreter; values and errors (class, message, `.kedi`
frames, Python traces, cause, rendered stack trace) and the procedure outputs recorded
for the row must agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kedi_outcomes import error_details

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.evals import run_suite
from pytest_kedi.runtime import program as program_module
from pytest_kedi.runtime.cancel import Cancelled, CancelToken, bound
from pytest_kedi.runtime.rowscope import RowScope, enter, leave

METRICS = {
    "exact": "`word_count(samples) == expected`",
    "plus_k": "`word_count(samples) + k`",
    "divide": "`expected / 0`",
    "wrong_type": "`word_count(expected)`",
    "unknown": "`samples + nowhere`",
    "key": "`boom(samples)`",
    "recursion": "`deep(0)`",
    "twice": '`(word_count(samples), word_count(samples + " c"))`',
    "comprehension": "`sum(1 for _ in samples.split())`",
}
QUICK = {name for name in METRICS if name != "comprehension"}
SUITE = """
@eval: {name}:
  > data: samples:
    = `[("a b", 2), ("a", 5)]`
  > metric: m_{name}(samples):
    = {body}
"""
SOURCE = (
    """\
```
def boom(x):
    raise KeyError(x)
```
[k: int] = `10`

@word_count(text: str) -> int:
  = `len(text.split())`

@deep(n: int) -> int:
  = `deep(n + 1)`
"""
    + "".join(SUITE.format(name=name, body=body) for name, body in METRICS.items())
    + """
@eval: two_steps:
  > data: samples:
    = `[("a b", 2), ("a", 5)]`
  > metric: m_two_steps(samples):
    [n: int] = `word_count(samples)`
    = `n == expected`

@eval: with_directive:
  > model: openai:gpt-4o
  > data: samples:
    = `[("a b", 2), ("a", 5)]`
  > metric: m_with_directive(samples):
    = `len(samples) > 0`
"""
)


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """What a user sees of a metric: its value and outputs, or its error in every detail."""
    scope = RowScope()
    token = enter(scope)
    try:
        value = call()
    except KediExecutionError as err:
        return (*error_details(err), scope.outputs)
    finally:
        leave(token)
    return ("value", type(value), value, scope.outputs)


@pytest.fixture
def programs(kedi: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """``programs() -> (quick, interpreted)``: the same file loaded twice; the second
    program always runs suite bodies on the interpreter."""

    def make() -> tuple[Any, Any]:
        quick = kedi(SOURCE, mode="validate")
        interpreted = kedi(SOURCE, mode="validate")
        original = program_module.quick_body
        monkeypatch.setattr(
            program_module,
            "quick_body",
            lambda body, directives, unit: (
                None if unit is interpreted._unit else original(body, directives, unit)
            ),
        )
        return quick, interpreted

    return make


def suite_of(program: Any, name: str) -> Any:
    return next(suite for suite in program.module.eval_suites if suite.name == name)


def metric_of(program: Any, name: str) -> Any:
    metric = suite_of(program, name).metric
    assert metric is not None
    return metric


def assert_as_interpreted(
    fast: tuple[Any, ...], interpreted: Any, name: str, bindings: dict[str, Any]
) -> None:
    """``fast`` (an `outcome`) is what the interpreter gives for the metric ``name``."""
    slow = outcome(
        lambda: interpreted.run_metric(
            suite_of(interpreted, name), metric_of(interpreted, name), dict(bindings)
        )
    )
    if name == "recursion":  # where the limit hits depends on the stack each path uses
        assert fast[2].startswith("maximum recursion depth exceeded")
        assert slow[2].startswith("maximum recursion depth exceeded")
        fast, slow = fast[:2] + fast[3][:3], slow[:2] + slow[3][:3]
    assert fast == slow


@pytest.mark.parametrize("name", [*METRICS, "two_steps", "with_directive"])
@pytest.mark.parametrize(
    "bindings", [{"samples": "a b", "expected": 2}, {"samples": "a", "expected": 5}]
)
def test_quick_body_agrees_with_the_interpreter(programs, name, bindings):
    quick, interpreted = programs()
    fast = outcome(
        lambda: quick.run_metric(suite_of(quick, name), metric_of(quick, name), bindings)
    )
    assert_as_interpreted(fast, interpreted, name, bindings)
    metric = metric_of(quick, name)
    assert (quick._parts[id(metric)].quick is not None) == (name in QUICK)
    assert interpreted._parts[id(metric_of(interpreted, name))].quick is None


def test_values_and_locations_on_the_quick_path(programs):
    quick, _ = programs()

    def run(name: str, bindings: dict[str, Any]) -> Any:
        return quick.run_metric(suite_of(quick, name), metric_of(quick, name), bindings)

    assert run("exact", {"samples": "a b", "expected": 2}) is True
    assert run("plus_k", {"samples": "a b", "expected": 2}) == 12
    with pytest.raises(KediExecutionError) as info:
        run("divide", {"samples": "a", "expected": 1})
    assert isinstance(info.value.original, ZeroDivisionError)
    assert info.value.line == SOURCE.splitlines().index("    = `expected / 0`") + 1
    assert [f.kind for f in info.value.frames] == ["metric", "return"]
    with pytest.raises(KediExecutionError, match="maximum recursion depth"):
        run("recursion", {"samples": "a", "expected": 1})


def test_a_cancelled_row_stops_before_the_quick_body(programs):
    quick, _ = programs()
    token = CancelToken()
    token.cancel("row exceeded 1s")
    with bound(token), pytest.raises(Cancelled):
        quick.run_metric(
            suite_of(quick, "exact"), metric_of(quick, "exact"), {"samples": "a", "expected": 1}
        )


def assert_suites_score_alike(quick: Any, interpreted: Any) -> None:
    """Every suite of the two programs scores the same rows, score and feedback."""
    for suite_name in [*METRICS, "two_steps", "with_directive"]:
        fast = run_suite(quick, suite_of(quick, suite_name))
        slow = run_suite(interpreted, suite_of(interpreted, suite_name))
        if suite_name == "recursion":
            continue  # compared above
        assert [row.to_json() | {"duration_s": 0} for row in fast.rows] == [
            row.to_json() | {"duration_s": 0} for row in slow.rows
        ]
        assert (fast.score, fast.feedback) == (slow.score, slow.feedback)


def test_suites_score_the_same_either_way(programs):
    quick, interpreted = programs()
    assert_suites_score_alike(quick, interpreted)
    # a suite with directives runs them for every row: never the quick path
    directed = suite_of(quick, "with_directive")
    assert quick._parts[id(directed.metric)].quick is None


@pytest.mark.parametrize("name", [*METRICS, "two_steps", "with_directive"])
@pytest.mark.parametrize(
    "bindings",
    [{"samples": "a b", "expected": 2}, {"samples": "a", "expected": 5}, {"samples": "a b"}],
)
def test_the_metric_as_a_function_agrees_with_the_interpreter(programs, name, bindings):
    # A suite of many rows runs its metric as a function of the row's values.
    quick, interpreted = programs()
    function = quick.metric_function(suite_of(quick, name), metric_of(quick, name), (*bindings,))
    assert (function is not None) == (name in QUICK)
    if function is None:
        return
    fast = outcome(lambda: function(*bindings.values()))
    assert_as_interpreted(fast, interpreted, name, bindings)


def test_a_cancelled_row_stops_before_the_metric_function(programs):
    quick, _ = programs()
    function = quick.metric_function(
        suite_of(quick, "exact"), metric_of(quick, "exact"), ("samples", "expected")
    )
    token = CancelToken()
    token.cancel("row exceeded 1s")
    with bound(token), pytest.raises(Cancelled):
        function("a", 1)


def test_suites_of_many_rows_score_as_the_interpreter_scores(programs, monkeypatch):
    from pytest_kedi.evals import runner

    monkeypatch.setattr(runner, "_FUNCTION_ROWS", 2)  # the two-row suites count as many
    quick, interpreted = programs()
    made: list[tuple[str, ...]] = []
    original = quick.metric_function

    def metric_function(suite: Any, metric: Any, params: tuple[str, ...]) -> Any:
        made.append(params)
        return original(suite, metric, params)

    quick.metric_function = metric_function
    assert_suites_score_alike(quick, interpreted)
    assert made and set(made) == {("samples", "expected")}


def test_the_metric_as_a_function_reads_the_bindings_of_the_moment(kedi):
    # The function keeps the module's globals table it was made with only while that table
    # is current: a rebound top-level name, and a new table after the prelude's `args`
    # change, are read by the next row.
    program = kedi(
        """
        [k: int] = `10`

        @word_count(text: str) -> int:
          = `len(text.split())`

        @eval: plus:
          > data: samples:
            = `[("a b", 2), ("a", 5)]`
          > metric: m(samples):
            = `word_count(samples) + k + args.x`
        """,
        mode="validate",
        args={"x": 1},
    )
    suite = program.module.eval_suites[0]
    two = program.metric_function(suite, suite.metric, ("samples", "expected"))
    one = program.metric_function(suite, suite.metric, ("samples",))
    seen = [two("a b", 2), one("a")]
    program.args = {"x": 100}
    seen += [two("a b", 2), one("a")]
    program._unit.scope.set_existing("k", 1000)
    seen += [two("a b", 2), one("a")]
    program.args = {"x": 5}
    seen += [two("a b", 2), one("a")]
    assert seen == [13, 12, 112, 111, 1102, 1101, 1007, 1006]
