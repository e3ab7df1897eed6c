"""A file's embedded Python belongs to a module Python can find (docs/language.md#python),
in every process that runs its items: a prelude `@dataclass` under ``from __future__
import annotations`` failed the file's load (``'NoneType' object has no attribute
'__dict__'``), and pickling an instance of a prelude class failed its case."""

from __future__ import annotations

import sys

import pytest
from kedi_plugin_helpers import Kedi

from pytest_kedi.runtime.pymodule import PREFIX

BOXES = """\
```
from __future__ import annotations
import pickle
from dataclasses import dataclass
@dataclass
class Box:
    v: int
    where: str = "{where}"
```
@test: boxes:
  > case: pickled:
    ```
    box = pickle.loads(pickle.dumps(Box(1)))
    assert box == Box(1) and box.where == "{where}", box
    ```
"""


def test_prelude_classes_of_same_named_files_are_their_own(kedi: Kedi) -> None:
    for where in ("a", "b"):
        kedi.write(f"{where}/test_box.kedi", BOXES.format(where=where))
    result = kedi.run("--kedi-eval", "-p", "no:randomly")
    result.assert_outcomes(passed=2)


@pytest.mark.single_process("looks at sys.modules of the process that ran the session")
def test_a_finished_session_leaves_no_module_in_sys_modules(kedi: Kedi) -> None:
    kedi.write("test_box.kedi", BOXES.format(where="here"))
    before = {name for name in sys.modules if name.startswith(PREFIX)}
    reprec = kedi.inline("--kedi-eval")
    reprec.assertoutcome(passed=1)
    assert {name for name in sys.modules if name.startswith(PREFIX)} == before


BESIDE = """\
```
import json
from pathlib import Path
HERE = Path(__file__).parent
```
@up(text: str) -> str:
  = `text.upper()`

@eval: up:
  > data: rows:
    = `[(r["in"], r["out"]) for r in json.loads((HERE / "rows.json").read_text())]`
  > metric: same(rows):
    = `up(rows) == expected`

@eval: up:
  > data: again:
    = `json.loads((Path(__file__).parent / "rows.json").read_text())`
  > metric: same_again(again):
    = `up(again["in"]) == again["out"]`
"""


def test_a_dataset_reads_a_file_beside_its_kedi_file(kedi: Kedi) -> None:
    """``__file__`` is the ``.kedi`` file's path, in the prelude and in every block, as
    in a ``.py`` module: a dataset finds a file beside it wherever pytest runs. It was
    not defined (``NameError``): only a path relative to the directory pytest ran in
    worked."""
    kedi.write("evals/deep/test_up.kedi", BESIDE)
    kedi.write("evals/deep/rows.json", '[{"in": "a", "out": "A"}, {"in": "b", "out": "B"}]')
    result = kedi.run("--kedi-eval", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["- up::same: 1.0000  [[]passed]", "- up::same_again: 1.0000*"])
