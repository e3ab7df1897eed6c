"""SystemExit and GeneratorExit raised by embedded Python are Kedi errors of that unit."""

from __future__ import annotations

import textwrap

import pytest

from pytest_kedi.runtime import load
from pytest_kedi.runtime.errors import KediExecutionError

SOURCE = textwrap.dedent("""\
    @stop(code: int) -> int:
      ```
      raise SystemExit(code)
      ```

    @fast(code: int) -> int:
      = `(_ for _ in ()).throw(SystemExit(code))`

    @test: t:
      > case: direct:
        `import sys; sys.exit(0)`
      > case: via_procedure:
        `stop(3)`
      > case: via_fast_procedure:
        `fast(4)`
      > case: closed:
        `raise GeneratorExit("closed")`
      > case: loop:
        ```
        for _ in iter(lambda: stop(5), None):
            pass
        ```

    @eval: e:
      > data: d:
        = `[stop(6)]`
      > metric: m(d):
        = `1.0`
    """)


def _case(name: str, path: str = "exits.kedi", source: str = SOURCE) -> KediExecutionError:
    program = load(path, source=source, mode="validate")
    (suite,) = program.module.test_suites
    case = next(c for c in suite.cases if c.name == name)
    with pytest.raises(KediExecutionError) as caught:
        program.run_case(suite, case)
    return caught.value


@pytest.mark.parametrize(
    ("case", "last_line", "line"),
    [
        ("direct", "SystemExit: 0", 11),
        ("via_procedure", "SystemExit: 3", 3),
        ("via_fast_procedure", "SystemExit: 4", 7),
        ("closed", "GeneratorExit: closed", 17),
        ("loop", "SystemExit: 5", 3),
    ],
)
def test_a_case_that_exits_fails_with_a_kedi_stack_trace(
    case: str, last_line: str, line: int
) -> None:
    error = _case(case)
    rendered = error.render()
    assert rendered.startswith("Kedi stack trace:\n")
    assert rendered.splitlines()[-1] == last_line
    assert f'File "exits.kedi", line {line}' in rendered
    assert "<kedi" not in rendered


def test_a_dataset_that_exits_is_a_kedi_error() -> None:
    program = load("exits.kedi", source=SOURCE, mode="validate")
    (suite,) = program.module.eval_suites
    with pytest.raises(KediExecutionError) as caught:
        program.load_dataset(suite, suite.datasets[0])
    assert caught.value.render().splitlines()[-1] == "SystemExit: 6"


def test_keyboard_interrupt_is_not_wrapped() -> None:
    program = load("k.kedi", source="`raise KeyboardInterrupt`\n")
    with pytest.raises(KeyboardInterrupt):
        program.run()


BASE_SOURCE = textwrap.dedent("""\
    ```
    class Halt(BaseException):
        pass
    ```

    @halt(code: int) -> int:
      = ```
      raise Halt(f"halted {code}")
      ```

    @fast(code: int) -> int:
      = `(_ for _ in ()).throw(Halt(code))`

    @grouped() -> int:
      = `(_ for _ in ()).throw(BaseExceptionGroup("two", [Halt(1), SystemExit(2)]))`

    @test: t:
      > case: direct:
        `raise Halt("direct")`
      > case: via_procedure:
        `halt(3)`
      > case: via_fast_procedure:
        `fast(4)`
      > case: group:
        `grouped()`
      > case: interrupted_group:
        `raise BaseExceptionGroup("stop", [Halt(1), KeyboardInterrupt()])`

    @eval: e:
      > data: d:
        = `[halt(6)]`
      > metric: m(d):
        = `1.0`
    """)


@pytest.mark.parametrize(
    ("case", "last_line", "line"),
    [
        ("direct", "Halt: direct", 19),
        ("via_procedure", "Halt: halted 3", 7),
        ("via_fast_procedure", "Halt: 4", 11),
        ("group", "BaseExceptionGroup: two (2 sub-exceptions)", 14),
    ],
)
def test_a_user_base_exception_fails_its_case_with_a_kedi_stack_trace(
    case: str, last_line: str, line: int
) -> None:
    """A class deriving from `BaseException` directly escaped Kedi's handling: pytest's own
    traceback naming ``__kedi_prelude__.Halt``, and a row raising one failed its suite."""
    error = _case(case, "halts.kedi", BASE_SOURCE)
    rendered = error.render()
    assert rendered.startswith("Kedi stack trace:\n")
    lines = rendered.splitlines()
    if case == "group":  # the group's line, then its members
        assert lines[lines.index(last_line) + 2 :][:1] == ["    | Halt: 1"]
    else:
        assert lines[-1] == last_line
    assert f'File "halts.kedi", line {line}' in rendered
    assert "__kedi" not in rendered


def test_a_group_carrying_an_interrupt_is_not_wrapped() -> None:
    program = load("halts.kedi", source=BASE_SOURCE, mode="validate")
    (suite,) = program.module.test_suites
    case = next(c for c in suite.cases if c.name == "interrupted_group")
    with pytest.raises(BaseExceptionGroup) as caught:
        program.run_case(suite, case)
    assert not isinstance(caught.value, KediExecutionError)


def test_a_dataset_raising_a_user_base_exception_is_a_kedi_error() -> None:
    program = load("halts.kedi", source=BASE_SOURCE, mode="validate")
    (suite,) = program.module.eval_suites
    with pytest.raises(KediExecutionError) as caught:
        program.load_dataset(suite, suite.datasets[0])
    assert caught.value.render().splitlines()[-1] == "Halt: halted 6"
