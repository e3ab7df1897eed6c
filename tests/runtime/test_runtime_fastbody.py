"""Generated procedure bodies (`runtime.fastbody`) must behave exactly like the interpreter.

Each case calls a procedure of a common shape (expression return, text return, a
two-statement body, a nested ``<call(...)>``) on the generated body and, in a second
load of the same file, on the interpreter (generation switched off), and compares the
values, or the errors: class, message, `.kedi` frames, Python traces, cause and the
rendered stack trace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kedi_outcomes import built_at_first_call, never_generated, outcome

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.runtime import procedures
from pytest_kedi.runtime.cancel import Cancelled, CancelToken, bound

SOURCE = """\
```
class Loud:
    def __str__(self):
        raise ValueError("no text")

def boom(x):
    raise KeyError(x)

not_a_procedure = 3
```
[k: int] = `10`
[broken: int] = `1 // 0`

@add(a: int, b: int) -> int:
  = `a + b + k`

@div(a: int, b: int) -> float:
  = `a / b`

@bad(a: int) -> int:
  = `str(a)`

@lam(n: int) -> int:
  = `sum(map(lambda i: 10 // i, range(n)))`

@unknown(a: int) -> int:
  = `a + nowhere`

@greet(name: str) -> str:
  = Hello <name>, `name.upper()` \\[answer] <k>!

@render(x: object) -> str:
  = value: <x>

@loud_text(a: int) -> str:
  = value <a> `Loud()`

@loud_arg(a: int) -> str:
  = <render(x `Loud()`)>

@loose_default(a: int, b: int = `"x"`) -> str:
  = <a> <b>

@default(a: int, b: int = `2`) -> int:
  = `a + b`

@missing(a: int) -> str:
  = <a> and <nowhere>

@twice(a: int, b: int) -> int:
  [s: int] = `a + b`
  = `s * 2`

@typed(a: int) -> int:
  [s: int] = `str(a)`
  = `s`

@second(a: int, b: int) -> float:
  [s: int] = `a + 1`
  = `s / b`

@text_then(a: int) -> str:
  [label] = item <a>
  = `label + "!"`

@outer(a: int, b: int) -> int:
  = <add(<a>, <b>)>

@outer_text(a: int, b: int) -> str:
  = sum <add(<a>, <b>)> of <a>/<b>

@outer_bad(a: int) -> int:
  = <bad(<a>)>

@call_python(a: int) -> int:
  = <boom(<a>)>

@call_number(a: int) -> int:
  = <not_a_procedure(<a>)>

@call_nothing(a: int) -> int:
  = <nothing(<a>)>

@call_text_arg(a: int) -> str:
  = <greet(n<a>)>

@recurse(n: int) -> int:
  = <recurse(`n + 1`)>

@steps(stop: object, log: object) -> int:
  [a: int] = `log.append("a") or stop() or 1`
  [b: int] = `log.append("b") or 2`
  = `a + b`

@reads_broken(a: int) -> str:
  = <a> <broken>

@uses_broken(a: int) -> int:
  = `a + broken`

@fenced(n: int) -> int:
  = ```
  total = 0
  for i in range(n):
      total += 10 // (i - 2)
  return total
  ```

@fence_rebinds(n: int) -> int:
  = ```
  n = 5
  return n
  ```

@fence_text(n: int) -> int:
  = ```
  return str(n)
  ```

@nested_steps(stop: object, log: object) -> int:
  = <steps(<stop>, <log>)>
"""


class Shy:
    def __str__(self) -> str:
        raise RuntimeError("shy")


#: (procedure, arguments): each one runs on the generated body.
CALLS: list[tuple[str, tuple[Any, ...]]] = [
    ("add", (2, 3)),
    ("add", (True, 3)),
    ("add", ("2", 3)),
    ("div", (1, 0)),
    ("div", (1, 4)),
    ("bad", (1,)),
    ("lam", (3,)),
    ("lam", (0,)),
    ("unknown", (1,)),
    ("greet", ("kedi",)),
    ("greet", (3,)),
    ("render", (3.5,)),
    ("render", ([1, "x"],)),
    ("render", (None,)),
    ("render", (Shy(),)),
    ("loud_text", (1,)),
    ("loud_arg", (1,)),
    ("missing", (1,)),
    ("twice", (2, 3)),
    ("typed", (2,)),
    ("second", (2, 0)),
    ("second", (2, 4)),
    ("text_then", (7,)),
    ("outer", (2, 3)),
    ("outer", (2, "3")),
    ("outer_text", (2, 3)),
    ("outer_bad", (1,)),
    ("call_python", (1,)),
    ("call_number", (1,)),
    ("call_nothing", (1,)),
    ("call_text_arg", (5,)),
    ("reads_broken", (1,)),
    ("uses_broken", (1,)),
    ("fenced", (2,)),
    ("fenced", (3,)),
    ("fenced", ("3",)),
    ("fence_rebinds", (1,)),
    ("fence_text", (1,)),
]


def line_of(text: str) -> int:
    return SOURCE.splitlines().index(text) + 1


@pytest.fixture(autouse=True)
def _generated_from_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    built_at_first_call(monkeypatch)


@pytest.fixture
def programs(kedi: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """``programs(source) -> (generated, interpreted)``: the same file loaded twice;
    the second program's procedures never generate their bodies."""

    def make(source: str) -> tuple[Any, Any]:
        generated = kedi(source, mode="validate")
        interpreted = kedi(source, mode="validate")
        never_generated(monkeypatch, interpreted)
        return generated, interpreted

    return make


@pytest.mark.parametrize(
    ("name", "args"), CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)]
)
def test_generated_body_agrees_with_the_interpreter(programs, name, args):
    generated, interpreted = programs(SOURCE)
    fast = outcome(lambda: generated.procedures[name](*args))
    slow = outcome(lambda: interpreted.procedures[name](*args))
    assert generated.procedures[name]._generated is not None
    assert interpreted.procedures[name]._generated is None
    assert fast == slow
    # ... and from a Kedi call site, which passes arguments positionally
    fast_nested = outcome(lambda: generated.procedures[name].invoke_positional(list(args)))
    slow_nested = outcome(lambda: interpreted.procedures[name].invoke_positional(list(args)))
    assert fast_nested == slow_nested


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("default", (1,), {}),
        ("default", (), {"a": 1, "b": 5}),
        ("default", (1,), {"b": "5"}),
        ("default", (), {"b": 5}),
        ("loose_default", (1,), {}),
        ("loose_default", (1,), {"b": "y"}),
        ("twice", (), {"b": 1, "a": 2}),
    ],
)
def test_keyword_and_default_calls_agree(programs, name, args, kwargs):
    generated, interpreted = programs(SOURCE)
    fast = outcome(lambda: generated.procedures[name](*args, **kwargs))
    assert fast == outcome(lambda: interpreted.procedures[name](*args, **kwargs))


def test_expected_values_and_locations(programs):
    generated, _ = programs(SOURCE)
    procs = generated.procedures
    assert procs["add"](2, 3) == 15
    assert procs["greet"]("kedi") == "Hello kedi, KEDI [answer] 10!"
    assert procs["twice"](2, 3) == 10
    assert procs["outer"](2, 3) == 15
    assert procs["outer_text"](2, 3) == "sum 15 of 2/3"
    assert procs["default"](1) == 3
    assert procs["default"]._generated is not None
    assert procs["loose_default"](1) == "1 x"  # a used default is not checked
    with pytest.raises(KediExecutionError) as info:
        procs["second"](2, 0)
    assert isinstance(info.value.original, ZeroDivisionError)
    assert info.value.line == line_of("  = `s / b`")  # the return, not the assignment
    assert [f.kind for f in info.value.frames] == ["procedure", "return"]
    with pytest.raises(KediExecutionError) as info:
        procs["div"](1, 0)
    assert [t.kedi_line for t in info.value.python_traces] == [line_of("  = `a / b`")]
    lam = line_of("  = `sum(map(lambda i: 10 // i, range(n)))`")
    with pytest.raises(KediExecutionError) as info:
        procs["lam"](3)
    assert [t.kedi_line for t in info.value.python_traces] == [lam, lam]  # body and lambda


def test_deep_recursion_is_a_located_error_on_both_paths(programs):
    generated, interpreted = programs(SOURCE)
    for program in (generated, interpreted):
        with pytest.raises(KediExecutionError, match="maximum recursion depth") as info:
            program.procedures["recurse"](0)
        assert info.value.frames[0].kind == "procedure"


@pytest.mark.parametrize("name", ["steps", "nested_steps"])
def test_cancellation_stops_before_the_next_statement(programs, name):
    generated, interpreted = programs(SOURCE)
    logs = []
    for program in (generated, interpreted):
        log: list[str] = []
        token = CancelToken()
        with bound(token), pytest.raises(Cancelled):
            program.procedures[name](token.cancel, log)
        logs.append(log)
        assert program.procedures["steps"](lambda: None, []) == 3  # no token bound
    assert logs == [["a"], ["a"]]
    assert generated.procedures["steps"]._generated is not None


def test_cancelled_before_the_call_runs_nothing(programs):
    generated, _ = programs(SOURCE)
    token = CancelToken()
    token.cancel("deadline")
    log: list[str] = []
    with bound(token), pytest.raises(Cancelled, match="deadline"):
        generated.procedures["steps"].invoke_positional([lambda: None, log])
    assert log == []


def test_module_rebinding_is_seen_by_generated_bodies(kedi):
    source = """\
[k: int] = `10`
@add(a: int, b: int) -> int:
  = `a + b + k`
@outer(a: int, b: int) -> str:
  [s: int] = <add(<a>, <b>)>
  = <s> and <k>
[first: str] = <outer(`1`, `2`)>
[k] := `100`
= `(first, outer(1, 2))`
"""
    program = kedi(source)
    assert program.run() == ("13 and 10", "103 and 100")
    assert program.procedures["outer"]._generated is not None


def test_fence_rebinding_a_module_name_agrees(kedi, monkeypatch):
    source = """\
[count: int] = `0`
@bump(by: int) -> int:
  = ```
  count = count + by
  return count
  ```
= `(bump(2), bump(3), count)`
"""
    program = kedi(source)
    assert program.run() == (2, 5, 5)
    assert program.procedures["bump"]._generated is not None
    monkeypatch.setattr(procedures, "build", lambda proc: None)
    assert kedi(source).run() == (2, 5, 5)


GENERAL_ONLY = """\
[k: int] = `1`
@reads_later(a: int) -> int:
  [x: int] = `k + a`
  [k: int] = `x`
  = `k`
@walrus(a: int) -> int:
  = `(y := a + 1) * y`
@builtin_name(a: int) -> int:
  = <len(<a>)>
@fence_then(a: int) -> int:
  [x: int] = `a`
  = ```
  return x
  ```
@reassigns(a: int) -> int:
  [x: int] = `a`
  [x: int] = `a + 1`
  = `x`
@deferred(a: int) -> int:
  [f: object] = `lambda: a + k`
  = `f()`
@names(a: int) -> int:
  = `len(dir())`
@custom(a: int) -> int:
  [x: Count] = `a`
  = `x`
~Count(n: int)
"""


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("reads_later", (1,)),
        ("walrus", (2,)),
        ("builtin_name", (1,)),
        ("fence_then", (1,)),
        ("reassigns", (1,)),
        ("custom", (1,)),
        ("deferred", (1,)),
        ("names", (1,)),
    ],
)
def test_other_shapes_stay_interpreted(programs, name, args):
    generated, interpreted = programs(GENERAL_ONLY)
    fast = outcome(lambda: generated.procedures[name](*args))
    assert generated.procedures[name]._generated is None
    assert fast == outcome(lambda: interpreted.procedures[name](*args))


def test_a_cancelled_row_stops_at_a_call_from_a_text_template(kedi):
    # `<call(...)>` inside a `=` text reaches the callee through `invoke_positional`, which
    # must check for cancellation like a direct call does, before running the callee.
    program = kedi(
        "@effect(stopped: object, log: list) -> str:\n  = `log.append('ran') or 'x'`\n\n"
        "@outer(stop: object, log: list) -> str:\n  = said <effect(`stop()`, <log>)>\n",
        mode="validate",
    )
    log: list[str] = []
    token = CancelToken()
    with bound(token), pytest.raises(Cancelled, match="deadline"):
        program.procedures["outer"](lambda: token.cancel("deadline"), log)
    assert log == []
    assert program.procedures["outer"](lambda: None, log) == "said x"  # no token bound


@pytest.mark.parametrize(("name", "args"), [("add", (2, 3)), ("second", (2, 0)), ("greet", ("k",))])
def test_a_procedure_is_built_at_its_build_after_th_call_and_agrees_across(
    programs, monkeypatch, name, args
):
    """A procedure runs on the interpreter until its `BUILD_AFTER`-th call, which builds
    its generated body; a caller sees the same values and errors before and after."""
    monkeypatch.setattr(procedures, "BUILD_AFTER", 3)
    generated, interpreted = programs(SOURCE)
    proc = generated.procedures[name]
    expected = outcome(lambda: interpreted.procedures[name](*args))
    seen = []
    for _ in range(2):
        seen.append(outcome(lambda: proc(*args)))
        assert proc._generated is None  # still interpreted
    seen.append(outcome(lambda: proc.invoke_positional(list(args))))
    assert proc._generated is not None  # built at the third call
    seen.append(outcome(lambda: proc(*args)))
    assert seen == [expected] * 4


def test_a_procedure_called_fewer_times_is_never_built(kedi, monkeypatch):
    built: list[str] = []
    original = procedures.build
    monkeypatch.setattr(procedures, "build", lambda proc: built.append(proc.name) or original(proc))
    monkeypatch.setattr(procedures, "BUILD_AFTER", 64)
    program = kedi("@double(x: int) -> int:\n  = `x * 2`\n", mode="validate")
    assert [program.procedures["double"](n) for n in range(63)] == [n * 2 for n in range(63)]
    assert built == []
    assert program.procedures["double"](100) == 200
    assert built == ["double"]


def test_a_body_that_is_one_fence_is_built_at_its_first_call(programs, monkeypatch):
    monkeypatch.setattr(procedures, "BUILD_AFTER", 64)
    generated, interpreted = programs(SOURCE)
    assert outcome(lambda: generated.procedures["fenced"](2)) == outcome(
        lambda: interpreted.procedures["fenced"](2)
    )
    assert generated.procedures["fenced"]._generated is not None


@pytest.mark.parametrize(
    ("expression", "category"),
    [('x == "\\d"', DeprecationWarning), ("x is 1 or x == 1", SyntaxWarning)],
)
def test_a_python_warning_is_given_once_across_the_build(kedi, monkeypatch, expression, category):
    # Inlined in the generated body, the expression would be parsed and compiled again:
    # Python warned again at the 64th call (an invalid escape when parsing, `is` with a
    # literal when compiling). Such an expression stays on the interpreter's unit.
    import warnings

    monkeypatch.setattr(procedures, "BUILD_AFTER", 64)  # the interpreter runs it first
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = kedi(f"@check(x: str) -> bool:\n  = `{expression}`\n", mode="validate")
        check = program.procedures["check"]
        assert [check("a") for _ in range(70)] == [False] * 70
    warned = [w for w in caught if issubclass(w.category, category)]
    assert len(warned) == 1, [(str(w.message), w.lineno) for w in caught]
    assert warned[0].filename.endswith("prog.kedi") and warned[0].lineno == 2


_FORWARD = """\
```
Alias = int
```
~P(a: int)

@listed(a: int) -> int:
  [x: list["P"]] = `[P(a)]`
  = `x[0].a`

@optional(a: int) -> int:
  [x: Optional["P"]] = `P(a)`
  = `x.a`

@aliased(a: int) -> int:
  [x: list["Alias"]] = `[a]`
  = `x[0]`

@asked(a: int) -> int:
  >> Give [x: list["P"]]
  = `x[0].a`

@wrong(a: int) -> int:
  [x: list["int"]] = `["s"]`
  = `a`

@quoted(a: int) -> int:
  [x: "P"] = `P(a)`
  = `x.a`
"""


@pytest.mark.parametrize("name", ["listed", "optional", "aliased", "asked", "wrong", "quoted"])
def test_string_forward_references_in_a_body_agree_across_the_build(kedi, monkeypatch, name):
    """A string in a direct annotation of an assignment or output field is a forward
    reference (`list["P"]` is `list[P]`). The generated body took it as it was written:
    a procedure working on the interpreter failed from its BUILD_AFTER-th call on with
    pydantic's "`TypeAdapter[P]` is not fully defined", and `list["int"]` was told as
    "expects list['int']"."""
    from kedi_scripted_model import ScriptedModel

    monkeypatch.setattr(procedures, "BUILD_AFTER", 3)
    model = ScriptedModel(fields={"x": [{"a": 1}]})
    proc = kedi(_FORWARD, mode="validate", model=model).procedures[name]
    seen = [outcome(lambda: proc(1)) for _ in range(5)]  # built (or not) at the third
    assert seen == [seen[0]] * 5
    if name == "wrong":
        with pytest.raises(KediExecutionError, match=r"expects list\[int\], got \['s'\]"):
            proc(1)
    else:
        assert proc(1) == 1
