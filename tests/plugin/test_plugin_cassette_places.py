"""Where cassettes go under ``--kedi-cassette-dir``, and keys that do not depend on where
the files are: single-process and -n 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kedi_plugin_helpers import CLASSIFY, Kedi


def _entries(path: Path) -> dict[str, dict[str, object]]:
    entries: dict[str, dict[str, object]] = json.loads(path.read_text(encoding="utf-8"))["entries"]
    return entries


def _two_same_named_files(kedi: Kedi, where: str) -> None:
    kedi.write(f"{where}/proj/pytest.ini", "[pytest]\n")
    for folder in ("a", "b"):
        kedi.write(f"{where}/{folder}/classify.kedi", CLASSIFY.replace("Classify", folder))


def test_same_named_files_outside_the_rootdir_keep_cassettes_of_their_own(kedi: Kedi) -> None:
    """Two ``classify.kedi`` outside the rootdir shared one cassette under the cassette
    directory, and pruning the run of one deleted the other's entries."""
    _two_same_named_files(kedi, "one")
    tapes = ("--kedi-eval", "--rootdir=one/proj", "--kedi-cassette-dir=one/tapes")
    files = ("one/a/classify.kedi", "one/b/classify.kedi")
    recorded = kedi.run(*tapes, "--kedi-record-mode", "record", *files)
    recorded.assert_outcomes(passed=2)
    recorded.stdout.fnmatch_lines(
        [
            "kedi: cassettes written: one/tapes/__up__/a/classify.kedi.cassette.json, "
            "one/tapes/__up__/b/classify.kedi.cassette.json"
        ]
    )
    a = kedi.pytester.path / "one/tapes/__up__/a/classify.kedi.cassette.json"
    b = kedi.pytester.path / "one/tapes/__up__/b/classify.kedi.cassette.json"
    assert len(_entries(a)) == len(_entries(b)) == 2
    assert not (kedi.pytester.path / "one/tapes/classify.kedi.cassette.json").exists()

    pruned = kedi.run(*tapes, "--kedi-record-mode", "strict", "--kedi-prune-cassettes", files[0])
    pruned.assert_outcomes(passed=1)
    assert len(_entries(a)) == len(_entries(b)) == 2  # nothing of b's was removed

    # a checkout elsewhere (another machine, CI) finds the same cassettes
    shutil.copytree(kedi.pytester.path / "one", kedi.pytester.path / "two")
    for folder in ("a", "b"):  # (one at a time: pytest gives both the node id "::eval:...")
        replayed = kedi.run(
            "--kedi-eval", "--rootdir=two/proj", "--kedi-cassette-dir=two/tapes",
            "--kedi-record-mode", "strict", "--kedi-report", "r.json",
            f"two/{folder}/classify.kedi",
        )  # fmt: skip
        replayed.assert_outcomes(passed=1)
        assert kedi.json("r.json")["suites"][0]["errors_by_class"] == {}


#: three classes named ``Item`` in one output schema: a type of the file, one of a module
#: it imports and a class of its Python (JSON schema definitions named by their modules)
ITEMS = """\
```
from pydantic import BaseModel
class Item(BaseModel):
    z: int
PItem = Item
```

> import: sub/m:
  - Item
[Other: `type`] = `Item`
~Item(x: int)

@ask(text: str) -> str:
  >> Say <text> [a: Item] [b: `Other`] [c: `PItem`]
  = done

@eval: ask:
  > data: rows:
    = `[("hi", "done")]`
  > metric: m(rows):
    = `ask(rows) == expected`
"""


def test_same_named_types_in_a_schema_replay_from_another_checkout(kedi: Kedi) -> None:
    """The output schema named same-named types by their file's absolute path (and a
    digest of it), so a cassette recorded in one checkout missed in another."""
    kedi.write("one/sub/m.kedi", "~Item(y: str)\n\n> export: Item\n")
    kedi.write("one/items.kedi", ITEMS)
    recorded = kedi.run("--kedi-eval", "--kedi-record-mode", "record", "one/items.kedi")
    recorded.assert_outcomes(passed=1)
    cassette = (kedi.pytester.path / "one/items.kedi.cassette.json").read_text(encoding="utf-8")
    assert str(kedi.pytester.path) not in cassette
    shutil.copytree(kedi.pytester.path / "one", kedi.pytester.path / "two")
    replayed = kedi.run(
        "--kedi-eval", "--kedi-record-mode", "strict", "--kedi-report", "r.json", "two/items.kedi"
    )
    replayed.assert_outcomes(passed=1)
    suite = kedi.json("r.json")["suites"][0]
    assert suite["errors_by_class"] == {} and suite["score"] == 1.0


def test_a_cassette_whose_name_is_near_the_systems_limit_is_written(kedi: Kedi) -> None:
    """Its temporary file's name, 14 bytes longer, passed the limit: ``cannot write
    cassettes: ...: File name too long``, though the cassette's own name fits."""
    name = "c" * 230 + ".kedi"
    kedi.write(name, CLASSIFY)
    result = kedi.run("--kedi-eval", "--kedi-record-mode", "record")
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"kedi: cassettes written: {name}.cassette.json"])
    assert len(_entries(kedi.pytester.path / f"{name}.cassette.json")) == 2
