"""A case body's Python compiles as the user wrote it (docs/language.md#python), with
pytest's assertion rewriting and none of pytest-kedi's own compiler flags."""

from __future__ import annotations

from kedi_plugin_helpers import Kedi

ANNOTATIONS = """\
```
from dataclasses import dataclass
```
@test: anno:
  > case: dataclass_in_case:
    ```
    @dataclass
    class P:
        x: int
    assert P(1).x == 1
    def f(a: int): ...
    assert f.__annotations__ == {"a": int}, f.__annotations__
    ```
"""


def test_case_body_annotations_are_objects(kedi: Kedi) -> None:
    kedi.write("test_anno.kedi", ANNOTATIONS)
    result = kedi.run("--kedi-eval")
    result.assert_outcomes(passed=1)
