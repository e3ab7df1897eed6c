"""Core semantics (docs/language.md#statements, docs/language.md#scoping): scopes, source order,
rendering, returns, recursion."""

from __future__ import annotations

import inspect

import pytest

from pytest_kedi.runtime.errors import (
    KediNameError,
    KediTypeExecutionError,
    KediValueExecutionError,
)


def test_sole_backtick_return_is_native(run):
    assert run("= `[1, 2]`\n") == [1, 2]


def test_mixed_text_renders_to_str(run):
    assert run("[n: int] = `3`\n= n is <n> and `n + 1`\n") == "n is 3 and 4"


def test_sole_call_stays_native(run):
    src = """
    @pair() -> tuple[int, int]:
      = `(1, 2)`
    = <pair()>
    """
    assert run(src) == (1, 2)


def test_single_substitution_renders(run):
    # §2.3 reading: exactly one <name> renders to str.
    src = """
    [n: int] = `3`
    [s] = <n>
    = `s`
    """
    assert run(src) == "3"


def test_untyped_assignment_means_str(run):
    with pytest.raises(KediTypeExecutionError, match="expects str, got 3"):
        run("[n] = `3`\n")


def test_plain_text_is_never_int(run):
    with pytest.raises(KediTypeExecutionError, match="expects int, got '5'"):
        run("[n: int] = 5\n")


def test_fenced_assignment_uses_block_return(run):
    src = """
    [xs: list[int]] = ```
    out = [1]
    out.append(2)
    return out
    ```
    = `xs`
    """
    assert run(src) == [1, 2]


def test_fenced_block_new_names_do_not_persist(run):
    src = """
    [a: int] = ```
    temp = 5
    return temp
    ```
    = `'temp' in globals()`
    """
    assert run(src) is False


def test_return_continuation(run):
    src = "= A \\\n  B\n"
    assert run(src) == "A B"


@pytest.mark.parametrize(
    "src",
    [
        "= A \\\n  # a note\n  B\n",
        "@f():\n  = A \\\n  # one\n    # two\n  B\n= <f()>\n",
        "= A \\ # why\n# a note\n  B\n",
    ],
)
def test_a_comment_line_inside_a_continuation_is_skipped(run, src):
    """A comment-only line between continued lines ended the return, and the next line was
    a parse error ("template text must start with '>>'"); tree-sitter-kedi reads past it,
    as a comment-only line does not end a '>>' block either."""
    assert run(src) == "A B"


def test_escapes_render_literally(run):
    src = r"= \<a\> \[b\] \(c\) \, \= \@ \# \~ ~~ \` \\ x\ty\nz\s" + "\n"
    assert run(src) == "<a> [b] (c) , = @ # ~ ~ ` \\ x\ty\nz "


def test_first_return_ends_the_program(run):
    assert run("> if: `True`:\n  = first\n= second\n") == "first"


def test_untyped_procedure_without_return_gives_empty_string(run):
    src = """
    @noop(x):
      `pass`
    = `repr(noop("a"))`
    """
    assert run(src) == "''"


@pytest.mark.parametrize(
    "annotation", ["str", "`str`", 'Annotated[str, "d"]', '`Annotated[str, "d"]`', "Annotated[str]"]
)
def test_str_procedure_falling_off_returns_empty_string(run, annotation):
    """docs/language.md#procedures: a `str` procedure that falls off the end returns "", and
    `Annotated[T, "d"]` is `T`. `Annotated[str, "d"]` raised "expects str, got None"."""
    src = f"""
    @noop() -> {annotation}:
      [x] = y
    = `[noop() for _ in range(100)][-1]`|<noop()>
    """
    assert run(src) == "|"


def test_typed_procedure_falling_off_checks_none(run):
    src = """
    @count() -> int:
      `pass`
    = `count()`
    """
    with pytest.raises(KediTypeExecutionError, match="expects int, got None"):
        run(src)


def test_call_argument_plain_text_is_str(run):
    src = """
    @double(n: int) -> int:
      = `n * 2`
    = <double(5)>
    """
    with pytest.raises(KediTypeExecutionError, match="parameter 'n' of double expects int"):
        run(src)


def test_call_argument_backtick_is_native(run):
    src = """
    @double(n: int) -> int:
      = `n * 2`
    = <double(`5`)>
    """
    assert run(src) == 10


def test_call_argument_mixed_renders(run):
    src = """
    @echo(s) -> str:
      = `s`
    [n: int] = `4`
    = <echo(id <n>)>
    """
    assert run(src) == "id 4"


@pytest.mark.parametrize("call", ["<now( )>", "<now(\t)>", "x <now(  )> y"])
def test_a_blank_argument_list_passes_no_argument(run, call):
    """docs/language.md#substitutions: arguments are trimmed, so `<f( )>` is `<f()>`. It
    passed one empty-string argument: "now() takes 0 arguments"."""
    src = f"""
    @now() -> str:
      = ok
    = {call}
    """
    assert run(src) == call.replace(call.strip("xy "), "ok")


def test_nested_calls_evaluate_inner_first(run):
    src = """
    @inc(n: int) -> int:
      = `n + 1`
    = <inc(<inc(`1`)>)>
    """
    assert run(src) == 3


def test_unknown_substitution_is_an_error(run):
    with pytest.raises(KediNameError, match="unknown name 'missing'"):
        run("= hello <missing>\n")


def test_locals_do_not_leak(run):
    src = """
    @f() -> str:
      [inner] = local
      = `inner`
    [x] = <f()>
    = `'inner' in globals()`
    """
    assert run(src) is False


def test_assignment_in_procedure_leaves_outer_intact(run):
    src = """
    [prefix] = top
    @f() -> str:
      [prefix] = local
      = <prefix>
    [r] = <f()>
    = <r> <prefix>
    """
    assert run(src) == "local top"


def test_closures_read_latest_outer_value(run):
    src = """
    [state] = draft
    @show_state() -> str:
      = <state>
    [state] = approved
    = <show_state()>
    """
    assert run(src) == "approved"


def test_nested_procedure_lives_only_during_invocation(run):
    src = """
    @outer() -> str:
      @helper() -> str:
        = inner
      = <helper()>
    [a] = <outer()>
    = `(a, 'helper' in globals())`
    """
    assert run(src) == ("inner", False)


def test_nested_type_lives_only_during_invocation(run):
    src = """
    @outer() -> int:
      ~Point(x: int)
      = `Point(3).x`
    [n: int] = <outer()>
    = `(n, 'Point' in globals())`
    """
    assert run(src) == (3, False)


def test_later_binding_wins_across_kinds(run):
    src = """
    [thing] = value
    @thing() -> str:
      = procedure
    = <thing()>
    """
    assert run(src) == "procedure"


def test_no_hoisting_in_program_runs(run):
    src = """
    = <later()>
    @later() -> str:
      = x
    """
    with pytest.raises(KediNameError, match="later"):
        run(src)


def test_recursion(run):
    src = """
    @fact(n: int) -> int:
      = `1 if n <= 1 else n * fact(n - 1)`
    = `fact(6)`
    """
    assert run(src) == 720


def test_recursion_through_templates_text(run):
    src = """
    @countdown(n: int) -> str:
      > if: `n == 0`:
        = done
      = <n> <countdown(`n - 1`)>
    = <countdown(`2`)>
    """
    assert run(src) == "2 1 done"


def test_defaults_evaluated_once_at_definition(run):
    src = """
    ```
    calls = []
    def make():
        calls.append(1)
        return len(calls)
    ```
    @f(x: int = `make()`) -> int:
      = `x`
    = `(f(), f(), len(calls))`
    """
    assert run(src) == (1, 1, 1)


def test_untyped_parameter_default_keeps_native_value(run):
    src = """
    @f(x = `7`):
      = `repr(x)`
    = <f()>
    """
    assert run(src) == "7"


def test_parameters_are_read_only_from_python(run):
    src = """
    @f(x) -> str:
      `x = "other"`
      = <x>
    = <f(a)>
    """
    with pytest.raises(KediValueExecutionError, match="read-only"):
        run(src)


def test_args_cannot_be_rebound_from_python(run):
    with pytest.raises(KediValueExecutionError, match="args"):
        run("`args = 1`\n")


def test_args_missing_attribute_is_none(kedi):
    program = kedi("= `(args.name, args.flag)`\n")
    assert program.run() == (None, None)
    program = kedi("= `(args.name, args.flag)`\n")
    program.args = {"name": "x", "flag": True}
    assert program.run() == ("x", True)


def test_procedures_have_real_signatures(kedi):
    src = """
    @fmt(count: int, label: str = `"items"`) -> str:
      = <count> <label>
    """
    program = kedi(src, mode="validate")
    fmt = program.procedures["fmt"]
    sig = inspect.signature(fmt)
    assert list(sig.parameters) == ["count", "label"]
    assert sig.parameters["count"].annotation is int
    assert sig.parameters["label"].default == "items"
    assert sig.return_annotation is str
    assert fmt(3) == "3 items"
    assert fmt(count=3, label="x") == "3 x"
    with pytest.raises(TypeError):
        fmt()
    with pytest.raises(TypeError):
        fmt(1, "a", "b")
    with pytest.raises(TypeError):
        fmt(1, nope=2)


def test_a_parameter_named_self_can_be_passed_by_keyword(kedi):
    """``f(self=1)`` raised ``TypeError: KediProcedure.__call__() got multiple values for
    argument 'self'``, naming pytest-kedi's internal class."""
    from pytest_kedi.runtime import procedures

    src = """
    @f(self: int, other: int = `0`) -> int:
      = `self + other`
    """
    f = kedi(src, mode="validate").procedures["f"]
    calls = [f(self=i, other=1) for i in range(procedures.BUILD_AFTER + 5)]  # and generated
    assert calls[-1] == procedures.BUILD_AFTER + 5
    assert f(other=2, self=3) == 5


def test_procedure_results_are_native(kedi):
    program = kedi("@f() -> list[int]:\n  = `[1]`\n", mode="validate")
    assert program.procedures["f"]() == [1]


def test_used_default_is_not_validated_but_passed_arguments_are(kedi):
    src = """
    @f(x: int = `None`) -> str:
      = <x>
    """
    f = kedi(src, mode="validate").procedures["f"]
    assert f() == "None"
    with pytest.raises(KediTypeExecutionError):
        f(None)


def test_return_type_is_validated(run):
    src = """
    @f() -> int:
      = `"5"`
    = <f()>
    """
    with pytest.raises(KediTypeExecutionError, match="return value of f expects int, got '5'"):
        run(src)


def test_inline_expression_in_template_text(run):
    assert run("= `2 * 21` is the answer\n") == "42 is the answer"


def test_expression_substitution(run):
    assert run("[xs: list[int]] = `[1, 2]`\n= count: <`len(xs)`>\n") == "count: 2"


def test_runaway_recursion_is_a_kedi_error_with_bounded_rendering(run):
    from pytest_kedi.runtime.errors import KediExecutionError

    src = """
    @down(n: int) -> int:
      [m: int] = `n + 1`
      = <down(<m>)>
    = <down(`0`)>
    """
    with pytest.raises(KediExecutionError) as info:
        run(src)
    assert isinstance(info.value.original, RecursionError)
    assert len(str(info.value).splitlines()) < 120
    assert "more frames" in str(info.value)
