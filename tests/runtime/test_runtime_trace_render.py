"""What a user reads in a Kedi stack trace (docs/language.md#execution-errors): each part
once, at its `.kedi` line."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.runtime.errors import KediExecutionError

RAISED_FROM_A_PROCEDURE = """\
@g() -> int:
  = `1/0`
@f() -> int:
  ```
  try:
      g()
  except ZeroDivisionError as e:
      raise ValueError("wrapped") from e
  ```
= <f()>
"""


#: The opening of the trace of `RAISED_FROM_A_PROCEDURE`: the procedure's failure.
PROCEDURE_FAILURE = [
    "Kedi stack trace:",
    '  File "prog.kedi", line 6',
    "    g()",
    '  File "prog.kedi", line 1, in g',
    "    @g() -> int:",
    '  File "prog.kedi", line 2, in g',
    "    = `1/0`",
    "ZeroDivisionError: division by zero",
]


def test_a_cause_raised_by_a_procedure_is_shown_under_the_one_header(
    run: Callable[..., Any], tmp_path: Path
) -> None:
    """The cause, a Kedi error itself, opened a second ``Kedi stack trace:`` line, and did
    not show the line that called the procedure (Python shows the handling frame first)."""
    with pytest.raises(KediExecutionError) as info:
        run(RAISED_FROM_A_PROCEDURE)
    lines = str(info.value).replace(f"{tmp_path}{os.sep}", "").splitlines()
    assert lines[:8] == PROCEDURE_FAILURE
    assert lines.count("Kedi stack trace:") == 1
    assert "The above exception was the direct cause of the following exception:" in lines
    assert lines[-2:] == ['    raise ValueError("wrapped") from e', "ValueError: wrapped"]


SHADOWING = {
    "type_field": ("~T(json: str, a: int)\n= `T('x', 1).a`\n", "1, in <program>", "~T(json"),
    "output_field": ("@f() -> str:\n  >> hi [json]\n  = <json>\n= <f()>\n", "2, in f", ">> hi"),
}


@pytest.mark.parametrize("kind", sorted(SHADOWING))
def test_a_warning_pytest_kedi_gives_made_an_error_is_located(
    run: Callable[..., Any], tmp_path: Path, kind: str
) -> None:
    """Under ``-W error`` the warning a field named after a BaseModel attribute gives was
    raised from pytest-kedi's own code: the CLI called it an internal error, pytest showed
    its traceback through pytest-kedi's frames, or the failure named the case's line only."""
    source, line, text = SHADOWING[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning) as info:  # still the warning's class
            run(source)
    error = info.value
    assert isinstance(error, KediExecutionError)
    shown = str(error).replace(f"{tmp_path}{os.sep}", "").splitlines()
    assert shown[0] == "Kedi stack trace:"
    assert shown[-3] == f'  File "prog.kedi", line {line}'
    assert shown[-2].startswith(f"    {text}")
    assert shown[-1].startswith("UserWarning: ") and "shadows an attribute" in shown[-1]


def test_each_cause_shows_its_own_calling_line(run: Callable[..., Any], tmp_path: Path) -> None:
    """Two causes deep, the line that called the middle procedure (`f()`) was shown at the
    top of the innermost cause's section, above the line that called `g()`."""
    source = RAISED_FROM_A_PROCEDURE.removesuffix("= <f()>\n") + (
        "```\ntry:\n    f()\nexcept ValueError as e:\n    raise RuntimeError('outer') from e\n```\n"
    )
    with pytest.raises(KediExecutionError) as info:
        run(source)
    lines = str(info.value).replace(f"{tmp_path}{os.sep}", "").splitlines()
    link = "The above exception was the direct cause of the following exception:"
    first = lines.index(link)
    second = lines.index(link, first + 1)
    assert lines[1:3] == ['  File "prog.kedi", line 6', "    g()"]
    assert lines[first + 2 : first + 4] == ['  File "prog.kedi", line 12', "    f()"]
    assert lines[second - 2] == "ValueError: wrapped"
    assert lines[-1] == "RuntimeError: outer"


def test_an_error_raised_while_handling_a_procedures_shows_it_first(
    run: Callable[..., Any], tmp_path: Path
) -> None:
    """An exception raised while handling a procedure's failure (no ``from``) showed no
    "During handling ..." section, as Python does (and as it does for a Python function's)."""
    source = RAISED_FROM_A_PROCEDURE.replace(
        'raise ValueError("wrapped") from e', "return undefined_name"
    )
    with pytest.raises(KediExecutionError) as info:
        run(source)
    lines = str(info.value).replace(f"{tmp_path}{os.sep}", "").splitlines()
    assert lines[:8] == PROCEDURE_FAILURE
    assert "During handling of the above exception, another exception occurred:" in lines
    assert lines.count("Kedi stack trace:") == 1
    assert lines[-2:] == [
        "    return undefined_name",
        "NameError: name 'undefined_name' is not defined",
    ]


RAISING_READS = """\
```
class Weird(Exception):
    def __getattr__(self, name):
        raise RuntimeError(f"no attr {name}")
```

@boom() -> int:
  = `(_ for _ in ()).throw(Weird("from a procedure"))`

@test: t:
  > case: main:
    `raise Weird("w")`
  > case: cause:
    ```
    try:
        raise Weird("inner")
    except Weird as e:
        raise ValueError("outer") from e
    ```
  > case: caught:
    ```
    try:
        boom()
    except Weird as error:
        assert str(error.original) == "from a procedure"
    ```
"""


@pytest.mark.parametrize(
    ("case", "last", "shown"),
    [
        ("main", "Weird: w", '    `raise Weird("w")`'),
        ("cause", "ValueError: outer", "Weird: inner"),
    ],
)
def test_an_exception_class_whose_attribute_reads_raise_is_shown_as_raised(
    kedi: Callable[..., Any], case: str, last: str, shown: str
) -> None:
    """A ``__getattr__`` raising for every name made the failure `RuntimeError: no attr
    name` (pytest-kedi's own probe of the exception), and one raised from crashed pytest
    (INTERNALERROR) while its Kedi stack trace was built."""
    program = kedi(RAISING_READS, mode="validate")
    suite = program.module.test_suites[0]
    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, next(c for c in suite.cases if c.name == case))
    lines = info.value.render().splitlines()
    assert lines[-1] == last
    assert shown in lines
    assert "no attr" not in info.value.render()


def test_such_an_exception_from_a_procedure_is_still_caught_by_its_class(
    kedi: Callable[..., Any],
) -> None:
    program = kedi(RAISING_READS, mode="validate")
    suite = program.module.test_suites[0]
    program.run_case(suite, next(c for c in suite.cases if c.name == "caught"))


def test_a_procedures_error_still_answers_through_its_classs_getattr(
    run: Callable[..., Any],
) -> None:
    source = """\
```
class Dyn(Exception):
    def __getattr__(self, name):
        return f"dyn {name}"
```

@boom() -> int:
  = `(_ for _ in ()).throw(Dyn("x"))`

@probe() -> str:
  = ```
  try:
      boom()
  except Dyn as error:
      return error.anything
  ```

= <probe()>
"""
    assert run(source) == "dyn anything"
