"""A row's ``output`` (what the suite procedure returned) and ``calls`` (traced model calls)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_kedi.evals import EvalOptions, RowResult, SuiteResult, run_suite
from pytest_kedi.evals.results import join_outputs, short_repr
from pytest_kedi.evals.safetext import clean_text, secrets
from pytest_kedi.runtime import load
from pytest_kedi.runtime.rowscope import ModelCallTrace, RowScope, current, entered


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def score(tmp_path: Path, source: str, options: EvalOptions | None = None) -> SuiteResult:
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    return run_suite(program, suite, options or EvalOptions())


LABEL = """\
@label(text: str) -> str:
  = `"billing" if "bill" in text else "account"`

@eval: label:
  > data: tickets:
    = `[("How do I delete my account?", "account"), ("My bill is wrong", "account")]`
  > metric: exact(tickets):
    = `label(tickets) == expected`
"""


def test_output_is_the_repr_of_what_the_suite_procedure_returned(tmp_path: Path) -> None:
    result = score(tmp_path, LABEL)
    assert [(row.score, row.output) for row in result.rows] == [
        (1.0, "'account'"),
        (0.0, "'billing'"),
    ]
    assert result.rows[1].to_json()["output"] == "'billing'"


def test_an_output_is_cut_to_the_repr_limit_and_a_broken_repr_is_described(
    tmp_path: Path,
) -> None:
    source = """\
```
class Ugly:
    def __repr__(self):
        raise RuntimeError("no repr")
```

@make(kind: str) -> object:
  = `Ugly() if kind == "ugly" else ("x" * 500 if kind == "long" else 10**5000)`

@eval: make:
  > data: kinds:
    = `["ugly", "long", "huge"]`
  > metric: shown(kinds):
    = `make(kinds) is not None`
"""
    ugly, long, huge = score(tmp_path, source).rows
    assert ugly.output == "<unrepresentable Ugly: RuntimeError>"
    assert long.output == short_repr("x" * 500)
    assert long.output is not None and len(long.output) == 200 and long.output.endswith("...")
    assert huge.output == "<unrepresentable int: ValueError>"
    assert [row.score for row in (ugly, long, huge)] == [1.0, 1.0, 1.0]


def test_several_calls_are_all_kept_in_call_order(tmp_path: Path) -> None:
    source = LABEL.replace(
        "= `label(tickets) == expected`",
        "= `label(tickets) == expected and label('bill ' + tickets) == 'billing'`",
    )
    result = score(tmp_path, source)
    assert result.rows[0].output == "'account'; 'billing'"
    assert result.rows[1].output == "'billing'"  # `and` stopped after the first call


def test_a_recursive_procedure_records_its_outermost_calls_only(tmp_path: Path) -> None:
    source = """\
    @fact(n: int) -> int:
      > if: `n <= 1`:
        = `1`
      = `n * fact(n - 1)`

    @eval: fact:
      > data: ns:
        = `[(3, 6), (4, 24)]`
      > metric: exact(ns):
        = `fact(ns) == expected`
    """
    result = score(tmp_path, source)
    assert [row.output for row in result.rows] == ["6", "24"]


def test_other_procedures_are_not_recorded_and_no_call_means_no_output(tmp_path: Path) -> None:
    source = """\
    @label(text: str) -> str:
      = `text.upper()`

    @helper(text: str) -> str:
      = `text.lower()`

    @eval: label:
      > data: xs:
        = `[("a", "a"), ("b", "b")]`
      > metric: m(xs):
        = `helper(xs) == expected if xs == "a" else label(xs) == "B"`
    """
    result = score(tmp_path, source)
    assert [row.output for row in result.rows] == [None, "'B'"]


def test_an_errored_row_keeps_the_outputs_made_before_the_error(tmp_path: Path) -> None:
    source = LABEL.replace("= `label(tickets) == expected`", "= `label(tickets) and 1 / 0`")
    result = score(tmp_path, source)
    assert [row.error_class for row in result.rows] == ["metric", "metric"]
    assert [row.output for row in result.rows] == ["'account'", "'billing'"]


def test_outputs_outside_a_row_are_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "suite.kedi"
    path.write_text(LABEL, encoding="utf-8")
    program = load(str(path), mode="validate")
    (suite,) = program.module.eval_suites
    run_suite(program, suite)  # the procedure now records outputs, inside a row only
    assert program.procedures["label"]("x") == "account"
    scope = RowScope()
    with entered(scope):
        assert program.procedures["label"]("bill") == "billing"
    assert scope.outputs == ["'billing'"]


def test_join_outputs_shows_at_most_ten_values() -> None:
    assert join_outputs([]) is None
    assert join_outputs(["1"]) == "1"
    assert (
        join_outputs([str(n) for n in range(12)]) == "0; 1; 2; 3; 4; 5; 6; 7; 8; 9; ... (12 calls)"
    )


TRACED = """\
@eval: traced:
  > data: xs:
    = `["a", "b"]`
  > metric: m(xs):
    = `record(xs)`
"""


def _record(text: str) -> bool:
    """Stands in for the model boundary: one traced call per row, when tracing is on."""
    scope = current()
    assert scope is not None
    if scope.trace:
        scope.calls.append(ModelCallTrace("test", f"say {text}", None, text.upper(), 3, 1, 0.25))
    return scope.trace


@pytest.mark.parametrize("trace", [False, True])
def test_trace_sets_the_row_scope_and_rows_carry_its_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: bool
) -> None:
    import builtins

    monkeypatch.setattr(builtins, "record", _record, raising=False)
    result = score(tmp_path, TRACED, EvalOptions(trace=trace))
    assert result.score == (1.0 if trace else 0.0)
    if not trace:
        assert [row.calls for row in result.rows] == [(), ()]
        return
    assert [row.calls for row in result.rows] == [
        (ModelCallTrace("test", "say a", None, "A", 3, 1, 0.25),),
        (ModelCallTrace("test", "say b", None, "B", 3, 1, 0.25),),
    ]
    assert result.rows[0].to_json()["calls"] == [
        {
            "model": "test",
            "prompt": "say a",
            "instructions": None,
            "answer": "A",
            "input_tokens": 3,
            "output_tokens": 1,
            "duration_s": 0.25,
        }
    ]


def test_output_and_calls_round_trip_and_old_rows_still_load() -> None:
    call = ModelCallTrace("openai:gpt-4o", "p", "be brief", "a", 10, 2, 0.5)
    row = RowResult(0, "'q'", "'a'", 1.0, None, None, None, 0.1, output="'a'", calls=(call,))
    data = json.loads(json.dumps(row.to_json()))
    assert RowResult.from_json(data) == row
    old = {k: v for k, v in data.items() if k not in ("output", "calls")}  # schema version 2
    loaded = RowResult.from_json(old)
    assert (loaded.output, loaded.calls) == (None, ())


def test_secrets_in_outputs_and_calls_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-" + "x" * 24
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    call = ModelCallTrace("m", f"key {secret}", f"use {secret}", f"got {secret}", 1, 1, 0.1)
    row = RowResult(0, None, None, 1.0, None, None, None, 0.1, output=repr(secret), calls=(call,))
    assert secret not in json.dumps(row.to_json())


def test_secrets_follow_the_environment_across_test_phases(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The credential list is remembered while the environment is unchanged but for the
    variable pytest sets for every test phase; any other change is seen at once."""
    first, second = "sk-first-" + "a" * 20, "sk-second-" + "b" * 20
    monkeypatch.setenv("KEDI_TEST_API_KEY", first)
    assert ("KEDI_TEST_API_KEY", first) in secrets()
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "x.py::y (call)")
    assert ("KEDI_TEST_API_KEY", first) in secrets()
    monkeypatch.setenv("KEDI_TEST_API_KEY", second)
    found = secrets()
    assert ("KEDI_TEST_API_KEY", second) in found
    assert ("KEDI_TEST_API_KEY", first) not in found
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "x.py::y (teardown)")
    monkeypatch.setenv("OTHER_API_KEY", first)
    assert {("KEDI_TEST_API_KEY", second), ("OTHER_API_KEY", first)} <= set(secrets())
    monkeypatch.delenv("KEDI_TEST_API_KEY")
    assert all(name != "KEDI_TEST_API_KEY" for name, _ in secrets())
    assert clean_text(f"key {first}") == "key [REDACTED:OTHER_API_KEY]"
    monkeypatch.delenv("PYTEST_CURRENT_TEST")  # the per-test variable gone, nothing else
    assert ("OTHER_API_KEY", first) in secrets()
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "x.py::z (setup)")
    monkeypatch.delenv("OTHER_API_KEY")  # both at once
    assert all(name != "OTHER_API_KEY" for name, _ in secrets())


LEAKY = """\
@leak(name: str) -> str:
  = ```
  import os
  if name == "set":
      os.environ["KEDI_LATE_API_KEY"] = "sk-late-" + "z" * 20
  return "key " + (os.environ.get("KEDI_LATE_API_KEY") or "none") + " " + name
  ```

@eval: leak:
  > data: names:
    = `[("before", 1), ("set", 1), ("after", 1)]`
  > metric: echo(names):
    = `(0.0, leak(names))`
"""


def test_a_credential_set_while_the_rows_run_is_redacted_in_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows read the credentials once for the suite; a change while they run is seen when
    they end, and every row's text is cleaned again (output and feedback alike)."""
    import os

    for variable in [name for name in os.environ if name.upper().endswith("_API_KEY")]:
        monkeypatch.delenv(variable)  # no credential when the rows begin
    monkeypatch.setenv("KEDI_LATE_API_KEY", "")  # restored by monkeypatch
    result = score(tmp_path, LEAKY)
    late = "sk-late-" + "z" * 20
    assert [row.output for row in result.rows] == [
        "'key none before'",
        "'key [REDACTED:KEDI_LATE_API_KEY] set'",
        "'key [REDACTED:KEDI_LATE_API_KEY] after'",
    ]
    assert late not in json.dumps([row.to_json() for row in result.rows])
    assert result.feedback is not None and late not in result.feedback
    # The next suite reads the environment as it is now.
    monkeypatch.delenv("KEDI_LATE_API_KEY")
    again = score(tmp_path, LEAKY.replace('("set", 1)', '("nothing", 1)'))
    assert [row.output for row in again.rows] == [
        "'key none before'",
        "'key none nothing'",
        "'key none after'",
    ]


def test_a_credential_read_inside_a_suite_is_the_one_set_when_it_began(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_kedi.evals.safetext import SecretsHeld, current_secrets

    first = "sk-first-" + "a" * 20
    monkeypatch.setenv("KEDI_TEST_API_KEY", first)
    with SecretsHeld() as outer:
        monkeypatch.setenv("KEDI_TEST_API_KEY", "sk-second-" + "b" * 20)
        assert ("KEDI_TEST_API_KEY", first) in current_secrets()
        with SecretsHeld() as inner:  # a second suite (another thread) uses the same
            assert ("KEDI_TEST_API_KEY", first) in current_secrets()
        assert inner.changed
    assert outer.changed
    assert ("KEDI_TEST_API_KEY", "sk-second-" + "b" * 20) in current_secrets()
    with SecretsHeld() as quiet:
        pass
    assert not quiet.changed


def test_texts_clean_is_false_exactly_when_cleaning_would_change_a_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_kedi.evals.safetext import texts_clean

    secret = "sk-clean-" + "c" * 20
    monkeypatch.setenv("KEDI_CLEAN_API_KEY", secret)
    cut = "\udcff"
    cases = [
        ["plain", "café ✓"],
        ["plain", f"key {secret}"],
        [f"cut {cut}"],
        ["", "multi\nline"],
    ]
    for texts in cases:
        assert texts_clean(texts) == all(clean_text(text) == text for text in texts), texts
    assert not texts_clean(["text", 3])  # not a string: left to the full cleaning
