"""Control flow (docs/language.md#newer-syntax): branches, loops, map, show, `:=`."""

from __future__ import annotations

import pytest
from kedi_scripted_model import ScriptedModel

from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediNameError,
    KediTypeExecutionError,
    LoopIterationLimitError,
)


def test_if_else_runs_only_selected_body(run):
    src = """
    [log: list[str]] = `[]`
    > if: `len(log) > 0`:
      `log.append("then")`
    > else:
      `log.append("else")`
    = `log`
    """
    assert run(src) == ["else"]


def test_condition_must_be_exact_bool(run):
    src = """
    > if: `1`:
      = yes
    = no
    """
    with pytest.raises(KediTypeExecutionError, match="exactly bool"):
        run(src)


def test_branch_bindings_are_child_scoped(run):
    src = """
    [x] = outer
    > if: `True`:
      [x] = inner
      [y] = only_here
    = `(x, "y" in globals())`
    """
    assert run(src) == ("outer", False)


def test_return_inside_branch_ends_procedure(run):
    src = """
    @sign(n: int) -> str:
      > if: `n < 0`:
        = negative
      = non-negative
    = <sign(`-1`)> <sign(`1`)>
    """
    assert run(src) == "negative non-negative"


def test_reassign_updates_nearest_owner(run):
    src = """
    [n: int] = `0`
    > loop: `n < 3`:
      [n] := `n + 1`
    = `n`
    """
    assert run(src) == 3


def test_reassign_validates_against_owner_contract(run):
    src = """
    [n: int] = `0`
    [n] := `"x"`
    """
    with pytest.raises(KediTypeExecutionError, match="expects int"):
        run(src)


def test_reassign_untyped_owner_means_str(run):
    with pytest.raises(KediTypeExecutionError, match="expects str"):
        run("[s] = a\n[s] := `1`\n")


@pytest.mark.parametrize("export", ["> export: *\n", "> export:\n  count\n  label\n"])
def test_reassign_of_an_imported_value_keeps_its_declared_type(kedi, tmp_path, export: str):
    """An imported value was bound without its type, so `:=` held it to `str`: an `int` was
    refused and a text accepted, turning the number into a string."""
    (tmp_path / "m.kedi").write_text(export + "[count: int] = `0`\n[label] = a\n", encoding="utf-8")
    assert kedi("> import: m\n[count] := `5`\n[label] := b\n= `(count, label)`\n").run() == (
        5,
        "b",
    )
    with pytest.raises(KediTypeExecutionError, match="reassignment of 'count' expects int"):
        kedi("> import: m\n[count] := five\n").run()
    with pytest.raises(KediTypeExecutionError, match="reassignment of 'label' expects str"):
        kedi("> import: m\n[label] := `1`\n").run()


def test_reassign_of_a_re_exported_value_keeps_its_declared_type(kedi, tmp_path):
    (tmp_path / "base.kedi").write_text("> export: *\n[count: int] = `0`\n", encoding="utf-8")
    (tmp_path / "mid.kedi").write_text("> import: base\n> export: *\n", encoding="utf-8")
    assert kedi("> import: mid\n[count] := `7`\n= `count`\n").run() == 7


def test_reassign_without_binding_is_name_error(run):
    with pytest.raises(KediNameError):
        run("[nope] := `1`\n")


def test_reassign_of_procedure_is_an_error(run):
    src = """
    @f() -> str:
      = x
    [f] := y
    """
    with pytest.raises(KediExecutionError, match="procedure or type"):
        run(src)


def test_iterable_loop_binder_never_leaks(run):
    src = """
    [name: int] = `99`
    [seen: list[int]] = `[]`
    > loop [name]: `[0, 1, 2]`:
      `seen.append(name)`
    = `(seen, name)`
    """
    assert run(src) == ([0, 1, 2], 99)


def test_iterable_loop_over_non_iterable(run):
    src = """
    > loop [x]: `5`:
      `pass`
    """
    with pytest.raises(KediTypeExecutionError, match="not iterable"):
        run(src)


def test_iterable_loop_is_lazy_and_closes(run):
    src = """
    ```
    state = {"closed": False, "made": 0}
    def gen():
        try:
            for i in range(100):
                state["made"] += 1
                yield i
        finally:
            state["closed"] = True
    ```
    @first() -> int:
      > loop [i]: `gen()`:
        = `i`
      = `-1`
    [r: int] = <first()>
    = `(r, state["made"], state["closed"])`
    """
    assert run(src) == (0, 1, True)


def _numbers(iter_fails: bool, close_fails: bool) -> str:
    """A prelude defining ``Numbers``, an iterator (1, 2) with a ``close``."""
    return f"""
```
ITER_FAILS = {iter_fails}
CLOSE_FAILS = {close_fails}
class Numbers:
    def __init__(self):
        self.n = 0
    def __iter__(self):
        if ITER_FAILS:
            raise KeyError("no iteration")
        return self
    def __next__(self):
        self.n += 1
        if self.n > 2:
            raise StopIteration
        return self.n
    def close(self):
        if CLOSE_FAILS:
            raise RuntimeError("close failed")
```
"""


@pytest.mark.parametrize(
    ("iter_fails", "close_fails", "error", "line"),
    [
        # the value's own `__iter__` raised: was a raw KeyError (the CLI: "internal error")
        (True, False, "KeyError: 'no iteration'", 9),
        # its `close()` raised once the loop ended: was a raw RuntimeError
        (False, True, "RuntimeError: close failed", 18),
    ],
)
def test_a_loop_iterator_s_own_failure_is_located(run, iter_fails, close_fails, error, line):
    src = (
        _numbers(iter_fails, close_fails)
        + """
@f() -> str:
  > loop [i]: `Numbers()`:
    `pass`
  = done
= <f()>
"""
    )
    with pytest.raises(KediExecutionError) as info:
        run(src)
    shown = info.value.render()
    assert shown.splitlines()[-1] == error
    assert "line 22, in f\n    > loop [i]: `Numbers()`:" in shown
    assert f"line {line}, in <prelude> (Python)" in shown


def test_a_loop_body_failure_survives_a_failing_close(run):
    """A body failure closes the iterator; ``close()`` raising too was a raw RuntimeError
    that hid the body's error. The body's error stays, the close failure told in a note."""
    src = (
        _numbers(False, True)
        + """
> loop [i]: `Numbers()`:
  `1/0`
= done
"""
    )
    with pytest.raises(KediExecutionError) as info:
        run(src)
    assert isinstance(info.value.original, ZeroDivisionError)
    assert info.value.render().splitlines()[-2:] == [
        "ZeroDivisionError: division by zero",
        "(closing the loop's iterator failed too: RuntimeError: close failed)",
    ]


def test_map_runs_after_all_iterations_in_order(run):
    src = """
    [log: list[str]] = `[]`
    > loop [x]: `["a", "b"]`:
      [up] = `x.upper()`
      `log.append("body " + x)`
    > map:
      `log.append("map " + up)`
    = `log`
    """
    assert run(src) == ["body a", "body b", "map A", "map B"]


def test_map_failures_drain_then_raise_first(run):
    src = """
    [log: list[int]] = `[]`
    > loop [x]: `[1, 0, 2]`:
      `pass`
    > map:
      `log.append(10 // x)`
    = `log`
    """
    with pytest.raises(KediExecutionError) as info:
        run(src)
    assert isinstance(info.value.original, ZeroDivisionError)


def test_loop_iteration_limit(kedi):
    src = """
    [n: int] = `0`
    > loop: `True`:
      [n] := `n + 1`
    """
    program = kedi(src)
    assert program.loop_limit == 10_000
    program.loop_limit = 5
    with pytest.raises(LoopIterationLimitError, match="exceeded 5 iterations") as info:
        program.run()
    assert str(info.value).splitlines()[-1].startswith("LoopIterationLimitError: ")
    assert program.get("n") == 5  # five completed iterations, then the check fails


def test_conditional_loop_false_first_check_runs_nothing(run):
    src = """
    [n: int] = `0`
    > loop: `False`:
      [n] := `1`
    = `n`
    """
    assert run(src) == 0


def test_show_prints_native_value(run, capsys):
    src = """
    > show: `[1, 2]`
    > show: total <`1 + 1`>
    = done
    """
    assert run(src) == "done"
    assert capsys.readouterr().out == "[1, 2]\ntotal 2\n"


def test_directives_in_a_branch_are_undone_when_it_ends(run):
    model = ScriptedModel()
    src = """
    > instructions: outer
    > if: `True`:
      > instructions: inner
      >> in branch
    >> after
    = ok
    """
    run(src, model=model)
    assert model.instructions == ["inner", "outer"]


def test_a_map_body_has_the_directives_in_force_where_it_stands(run):
    # Directives are lexical (docs/language.md#block-scopes): a loop body's directives end
    # with each iteration, and the map body, written after the loop body, is not inside it.
    # It sees each iteration's bindings, not its directives. Before, its `>>` was sent the
    # loop body's `inner`; a directive of the map body's own applies to it.
    model = ScriptedModel()
    src = """
    > instructions: outer
    > loop [x]: `["a", "b"]`:
      > instructions: inner
      >> loop <x>
    > map:
      >> map <x>
    > loop [y]: `["c"]`:
      `pass`
    > map:
      > instructions: own
      >> map <y>
    >> after
    = ok
    """
    run(src, model=model)
    assert model.instructions == ["inner", "inner", "outer", "outer", "own", "outer"]


def test_loop_claim_is_asked_before_every_iteration(run):
    answers = iter([True, True, False])
    model = ScriptedModel(fields=lambda prompt: {"holds": next(answers)})
    src = """
    [n: int] = `0`
    > loop: more work remains after <n> steps
      [n] := `n + 1`
    = `n`
    """
    assert run(src, model=model) == 2
    assert len(model.prompts) == 3
    assert "after 0 steps" in model.prompts[0] and "after 2 steps" in model.prompts[2]
