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
