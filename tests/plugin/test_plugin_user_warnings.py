"""Warnings the user's own Python gives, as Python gives them in a ``.py`` module."""

from __future__ import annotations

from kedi_plugin_helpers import Kedi

REPEATED = """\
```
import warnings
```

@ident(x: int) -> int:
  = `x`

@noisy(x: int) -> int:
  ```
  warnings.warn("noisy is noisy", UserWarning)
  ```
  = `x`

@eval: ident:
  > data: xs:
    = `[(i, i) for i in range(40)]`
  > metric: m(xs):
    = ```
    warnings.warn("in metric", UserWarning)
    return ident(xs) == expected
    ```

@test: noisy:
  > case: five_calls:
    `assert [noisy(i) for i in range(5)] == [0, 1, 2, 3, 4]`
"""


def test_a_default_action_warning_is_shown_once_per_location(kedi: Kedi) -> None:
    """Python's ``default`` action shows a warning once per location (the module's
    ``__warningregistry__``): a metric's warning given by 40 rows, or a procedure's given
    by five calls, is one warning each, as the same code in a ``.py`` test module gives."""
    kedi.write("many.kedi", REPEATED)
    result = kedi.subprocess("--kedi-eval")  # in a process of its own: no outer filters
    result.assert_outcomes(passed=2, warnings=2)
    output = result.stdout.str()
    assert output.count("UserWarning: in metric") == 1, output
    assert output.count("UserWarning: noisy is noisy") == 1, output


SHADOWING = """\
~T(json: str, a: int)

@f() -> str:
  >> hi [json]
  = <json>

@test: t:
  > case: typed:
    `assert T("x", 1).a == 1`
"""

OUTPUT_FIELD = """\
@f() -> str:
  >> hi [json]
  = <json>

@test: t:
  > case: field:
    `assert f()`
"""


def test_a_warning_of_the_plugin_s_own_made_an_error_is_located(kedi: Kedi) -> None:
    """Under ``-W error`` the warning of a field named after a BaseModel attribute was raised
    from pytest-kedi's own code: pytest showed its traceback through pytest-kedi's and
    pluggy's frames, or the failure named the case's line and not the field's."""
    kedi.write("typed.kedi", SHADOWING)
    kedi.write("field.kedi", OUTPUT_FIELD)
    result = kedi.subprocess("--kedi-eval", "-W", "error", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "typed.kedi:1: the program failed to load at typed.kedi:1: UserWarning: field "
            '"json" of T shadows an attribute of pydantic.BaseModel',
            "*",
            "Kedi stack trace:",
            '  File "typed.kedi", line 1, in <program>',
            "    ~T(json: str, a: int)",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(
        [
            'field.kedi:2: UserWarning: output field "json" shadows an attribute of '
            "pydantic.BaseModel",
            "*",
            '  File "field.kedi", line 2, in f',
            "    >> hi [json]",
            'UserWarning: output field "json" shadows an attribute of pydantic.BaseModel',
        ]
    )
    output = result.stdout.str()
    for internal in ("customtypes.py", "calls.py", "runner.py", "_caller.py"):
        assert internal not in output


ALWAYS_TRUE = """\
@test: t:
  > case: c:
    ```
    x = 1
    assert (x, "x is set")
    ```
"""


def test_an_assert_rewriting_warning_made_an_error_is_located(kedi: Kedi) -> None:
    """Under ``-W error`` pytest's "assertion is always true" warning failed the case at its
    `> case:` line, with no stack trace; it is located at the `assert`, as Python's own
    compile-time warning is (``python -W error -m pytest_kedi FILE --test`` says the same)."""
    kedi.write("always.kedi", ALWAYS_TRUE)
    result = kedi.subprocess("--kedi-eval", "-W", "error", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "always.kedi:5: SyntaxError: assertion is always true, perhaps remove parentheses?",
            "*",
            "Kedi stack trace:",
            '  File "always.kedi", line 2, in case c',
            "    > case: c:",
            '  File "always.kedi", line 5, in case c (Python)',
            '    assert (x, "x is set")',
            "SyntaxError: assertion is always true, perhaps remove parentheses?",
        ]
    )
