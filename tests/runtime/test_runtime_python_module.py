"""A file's embedded Python belongs to a module Python can find (docs/language.md#python):
its prelude's globals are the ``__dict__`` of a module in `sys.modules` while the program
is loaded, so `dataclasses` with string annotations, `typing.get_type_hints`, `pickle` and
`copy` work on the classes it defines as on a ``.py`` module's. Its ``__name__`` named no
module: the first failed with ``'NoneType' object has no attribute '__dict__'``, pickling
with ``import of module '__kedi_prelude__' failed``."""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.runtime import load
from pytest_kedi.runtime.program import release_programs
from pytest_kedi.runtime.pymodule import PREFIX, module_name

DATACLASS = """\
```
from __future__ import annotations
from dataclasses import dataclass, field
from typing import ClassVar
@dataclass
class Box:
    v: int
    tags: list[str] = field(default_factory=list)
    made: ClassVar[int] = 0
```
= `Box(1)`
"""

CLASSES = """\
```
import pickle, typing
class Point:
    x: "int"
    label: "Label"
    def __init__(self, x):
        self.x = x
class Label(str):
    pass
def double(n):
    return 2 * n
```
@roundtrip(n: int) -> int:
  = `pickle.loads(pickle.dumps(Point(n))).x`

@hints() -> dict:
  = `typing.get_type_hints(Point)`
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def prelude_modules() -> set[str]:
    return {name for name in sys.modules if name.startswith(PREFIX)}


def test_a_prelude_dataclass_with_postponed_annotations_works(tmp_path: Path) -> None:
    program = load(write(tmp_path, "box.kedi", DATACLASS))
    box = program.run()
    assert repr(box) == "Box(v=1, tags=[])"
    assert [f.name for f in dataclasses.fields(box)] == ["v", "tags"]  # a ClassVar is none
    program.release()


def test_prelude_classes_pickle_copy_and_give_their_type_hints(tmp_path: Path) -> None:
    path = write(tmp_path, "points.kedi", CLASSES)
    program = load(path, mode="validate")
    assert program.procedures["roundtrip"](3) == 3
    hints = program.procedures["hints"]()
    assert hints == {"x": int, "label": program.get("Label")}
    point = program.get("Point")(4)
    assert type(pickle.loads(pickle.dumps(point))) is program.get("Point")
    assert copy.deepcopy(point).x == 4
    assert pickle.loads(pickle.dumps(program.get("double")))(5) == 10
    module = sys.modules[program.get("Point").__module__]
    assert module.__name__ == module_name(str(path)) == program.get("__name__")
    assert module.__dict__["double"] is program.get("double")
    program.release()


def test_a_class_a_fence_defines_finds_the_module_too(tmp_path: Path) -> None:
    """(as a class defined in a function body does: it is no attribute of the module)"""
    source = CLASSES + (
        "\n@make() -> str:\n  = ```\n  from dataclasses import dataclass\n  @dataclass\n"
        '  class Tagged:\n      label: "Label"\n      n: "int" = 0\n'
        "  return repr(Tagged(Label('x'))) + str(typing.get_type_hints(Tagged))\n  ```\n"
    )
    program = load(write(tmp_path, "fenced.kedi", source), mode="validate")
    label = program.get("Label")
    made = program.procedures["make"]()
    assert made.endswith(f"Tagged(label='x', n=0){{'label': {label!r}, 'n': {int!r}}}"), made
    program.release()


def test_the_module_name_is_the_files_and_two_loaded_programs_have_their_own(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "my-file.v2.kedi", CLASSES)
    first, second = load(path, mode="validate"), load(path, mode="validate")
    names = [p.get("__name__") for p in (first, second)]
    base = module_name(str(path))
    assert base.startswith(f"{PREFIX}my_file_v2_")
    assert names == [base, f"{base}_2"]
    for program in (first, second):  # each pickles its own classes
        point = program.get("Point")(1)
        assert type(pickle.loads(pickle.dumps(point))) is program.get("Point")
    first.release()
    assert base not in sys.modules and names[1] in sys.modules
    third = load(path, mode="validate")  # the file's name is free again
    assert third.get("__name__") == base
    assert second.procedures["roundtrip"](2) == 2  # (still registered)
    release_programs([second, third])
    assert not {base, names[1]} & prelude_modules()


def test_a_released_or_dropped_program_leaves_sys_modules(tmp_path: Path) -> None:
    write(tmp_path, "helper.kedi", "```\nclass Helped:\n    pass\n```\n> export: *\n[h] = x\n")
    path = write(tmp_path, "main.kedi", CLASSES + "\n> import: helper\n")
    for release in (True, False):
        before = prelude_modules()
        program = load(path)
        program.run()  # (imports the helper)
        added = prelude_modules() - before
        assert len(added) == 2, added
        point = weakref.ref(program.get("Point"))
        if release:
            program.release()
            assert not added & prelude_modules()  # at once
        del program
        gc.collect()
        assert not added & prelude_modules()
        assert point() is None  # the module kept nothing alive


def test_a_failed_load_leaves_no_module_behind(tmp_path: Path) -> None:
    path = write(
        tmp_path, "fails.kedi", "```\nclass Made:\n    pass\nraise ValueError('no')\n```\n"
    )
    with pytest.raises(KediExecutionError, match="no"):
        load(path)
    assert module_name(str(path)) not in sys.modules


def test_an_object_pickled_in_one_process_unpickles_in_another_that_loaded_the_file(
    tmp_path: Path,
) -> None:
    """The name is the file's, the same in every process (a pytest-xdist worker, say)."""
    path = write(tmp_path, "shared.kedi", CLASSES)
    program = load(path, mode="validate")
    data = pickle.dumps(program.get("Point")(7))
    program.release()
    script = (
        "import pickle, sys\n"
        "from pytest_kedi.runtime import load\n"
        "program = load(sys.argv[1], mode='validate')\n"
        "print(pickle.loads(sys.stdin.buffer.read()).x)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], input=data, capture_output=True, check=False
    )
    assert done.stdout.strip() == b"7", done.stderr.decode()


def test_a_filter_naming_the_files_module_applies_to_pytest_kedis_own_warnings(
    tmp_path: Path,
) -> None:
    """pytest-kedi's own warnings of a file (a field shadowing a `BaseModel` attribute)
    name the module its Python's warnings do (docs/language.md#python-warnings)."""
    import re
    import warnings

    source = (
        "```\nimport warnings\n```\n@mk() -> int:\n  ~T(json: int = `2`)\n"
        "  `warnings.warn('python')`\n  = `T().json`\n"
    )
    path = write(tmp_path, "warns.kedi", source)
    program = load(path, mode="validate")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        warnings.filterwarnings("always", module=re.escape(module_name(str(path))) + r"\Z")
        assert program.procedures["mk"]() == 2
    assert [str(w.message) for w in caught] == [
        'field "json" of T shadows an attribute of pydantic.BaseModel',
        "python",
    ]
    program.release()


def test_file_is_the_absolute_path_of_each_loaded_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prelude's module has a ``__file__``, the absolute path of its ``.kedi`` file
    (the path it was loaded by may be relative), as has each file it imports."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.kedi").write_text(
        "```\nWHERE = __file__\n```\n@where() -> str:\n  = `WHERE`\n> export: where\n",
        encoding="utf-8",
    )
    (tmp_path / "main.kedi").write_text(
        "```\nMINE = __file__\n```\n> import: lib/helpers\n= `(MINE, where())`\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    program = load("main.kedi")
    try:
        assert program.run() == (
            str(tmp_path / "main.kedi"),
            str(tmp_path / "lib" / "helpers.kedi"),
        )
    finally:
        program.release()


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges")
def test_a_file_reached_through_symbolic_links_has_its_real_paths_module_name(
    tmp_path: Path,
) -> None:
    """The module's name digests the file's real path (the file's folder resolved once
    per process, the file itself when it is a link): the same file reached through a
    linked folder, or a link to it, gets the name its real path gets."""
    real = tmp_path / "real" / "sub"
    real.mkdir(parents=True)
    (tmp_path / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    (real / "a.kedi").write_text("", encoding="utf-8")
    (real / "b.kedi").symlink_to(real / "a.kedi")
    (tmp_path / "real" / "c.kedi").symlink_to(Path("sub", "a.kedi"))
    name = module_name(str(real / "a.kedi"))
    for path in ("linked/sub/a.kedi", "real/sub/b.kedi", "linked/c.kedi", "real/c.kedi"):
        assert module_name(str(tmp_path / path)).endswith(name[-8:]), path
    assert module_name(str(real / "b.kedi")).startswith(f"{PREFIX}b_")  # its own stem
    other = module_name(str(tmp_path / "real" / "a.kedi"))  # another (missing) file
    assert other.startswith(f"{PREFIX}a_") and other != name
