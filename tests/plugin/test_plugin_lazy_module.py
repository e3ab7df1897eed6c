"""Collection reads only each file's outline from the parse cache; the full module is
read when an item first needs it. Whatever happens to the cache entry or to the file in
between, items run the collected content or fail naming the changed file."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import DEMO, Kedi

# Runs in every process once it has collected (xdist workers collect before any runs).
DAMAGE_ENTRIES = """
from pathlib import Path

def pytest_collection_finish(session):
    folder = Path(session.config.rootpath, ".pytest_cache", "d", "kedi-parse")
    for entry in folder.iterdir() if folder.is_dir() else ():
        if ACTION == "remove":
            entry.unlink(missing_ok=True)
        else:
            entry.write_bytes(entry.read_bytes()[:60])
"""

CHANGE_FILE = """
from pathlib import Path

def pytest_runtest_setup(item):
    path = Path(item.config.rootpath, "demo.kedi")
    if ACTION == "remove":
        path.unlink(missing_ok=True)
    elif path.exists() and "changed" not in path.read_text():
        path.write_text("# changed\\n" + path.read_text())
"""

FIXTURES = """
import pytest

@pytest.fixture(autouse=True)
def around_everything():
    yield

def pytest_collection_modifyitems(items):
    with open("fixtures.txt", "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(f"{item.nodeid} {' '.join(sorted(item.fixturenames))}\\n")
"""


def _fill_parse_cache(kedi: Kedi) -> None:
    kedi.subprocess("--kedi-eval", "--collect-only").stdout.fnmatch_lines(["*3 tests collected*"])
    entries = kedi.pytester.path / ".pytest_cache" / "d" / "kedi-parse"
    assert len(list(entries.iterdir())) == 1


@pytest.mark.parametrize("action", ["remove", "truncate"])
def test_items_run_when_the_cache_entry_is_damaged_after_collection(
    kedi: Kedi, action: str
) -> None:
    kedi.write("demo.kedi", DEMO)
    _fill_parse_cache(kedi)
    kedi.write("conftest.py", f"ACTION = {action!r}\n" + DAMAGE_ENTRIES)
    result = kedi.subprocess("--kedi-eval")
    result.assert_outcomes(passed=3)
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("action", ["remove", "change"])
def test_file_changed_after_a_cached_collection_fails_its_items(kedi: Kedi, action: str) -> None:
    kedi.write("demo.kedi", DEMO)
    _fill_parse_cache(kedi)
    kedi.write("conftest.py", f"ACTION = {action!r}\n" + CHANGE_FILE)
    result = kedi.subprocess("--kedi-eval", "-rf")
    output = result.stdout.str() + result.stderr.str()
    result.assert_outcomes(failed=3)
    assert "Traceback" not in output
    reason = "cannot read demo.kedi" if action == "remove" else "demo.kedi changed since"
    summary = [line for line in output.splitlines() if line.startswith("- initials::")]
    assert len(summary) == 3, output
    assert all(reason in line for line in summary), summary


@pytest.mark.single_process("the hook writes one file per process")
def test_a_collection_hook_sees_the_fixtures_of_kedi_items(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("conftest.py", FIXTURES)
    for _ in range(2):  # cold and warm parse cache
        kedi.run("--kedi-eval", "--collect-only").assert_outcomes()
        lines = (kedi.pytester.path / "fixtures.txt").read_text(encoding="utf-8").splitlines()
        assert len(lines) == 3, lines
        assert all("around_everything" in line for line in lines), lines


# Records, in each process, which heavy modules a run imported.
IMPORTED = """
import os
import sys

def pytest_sessionfinish(session):
    heavy = ("pytest_kedi.lang.parser", "lark", "pydantic_ai")
    with open(f"imported-{os.getpid()}.txt", "w", encoding="utf-8") as handle:
        handle.write(" ".join(name for name in heavy if name in sys.modules))
"""


def test_a_warm_run_imports_neither_the_parser_nor_pydantic_ai(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    _fill_parse_cache(kedi)
    kedi.write("conftest.py", IMPORTED)
    kedi.subprocess("--kedi-eval", "--collect-only").stdout.fnmatch_lines(["*3 tests collected*"])
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=3)
    records = list(kedi.pytester.path.glob("imported-*.txt"))
    assert records
    assert [path.read_text(encoding="utf-8") for path in records] == [""] * len(records)


# Records, in each process, which of the modules that store a run's results it imported.
RESULT_MODULES = """
import os
import sys

def pytest_unconfigure(config):
    stores = ("pytest_kedi.plugin.rerun", "pytest_kedi.plugin.records",
              "pytest_kedi.plugin.transport")  # fmt: skip
    with open(f"stores-{os.getpid()}.txt", "w", encoding="utf-8") as handle:
        handle.write(" ".join(name for name in stores if name in sys.modules))
"""


def test_a_run_without_suites_imports_nothing_to_store_results(kedi: Kedi) -> None:
    """A run that scores no suite (no ``.kedi`` file, or ``--collect-only``) stores no
    rows for ``--kedi-rerun`` and writes no report: it does not import what would. The
    reports of other tests carry no Kedi record: nothing reads or writes one on them."""
    kedi.write("demo.kedi", DEMO)
    kedi.write("test_plain.py", "def test_plain():\n    pass\n")
    kedi.write("conftest.py", RESULT_MODULES)
    kedi.subprocess("--kedi-eval", "--collect-only").stdout.fnmatch_lines(["*4 tests collected*"])
    kedi.subprocess("test_plain.py").assert_outcomes(passed=1)
    records = list(kedi.pytester.path.glob("stores-*.txt"))
    assert records
    assert [path.read_text(encoding="utf-8") for path in records] == [""] * len(records)
    for path in records:
        path.unlink()
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=4)
    assert "pytest_kedi.plugin.rerun" in " ".join(
        path.read_text(encoding="utf-8") for path in kedi.pytester.path.glob("stores-*.txt")
    )


REPEATED_NAMES = (
    DEMO
    + """
@test: initials:
  > case: two_words:
    `assert initials("x y") == "XY"`
  > case: one_word:
    `assert initials("a") == "A"`

@eval: initials:
  > data: more:
    = `[("a b", "AB")]`
  > metric: exact(more):
    = `initials(more) == expected`
"""
)

LOCATIONS = """
def pytest_collection_modifyitems(items):
    with open("locations.txt", "a", encoding="utf-8") as handle:
        for item in items:
            path, line, name = item.reportinfo()
            handle.write(f"{item.nodeid} {line} {name} {item.location}\\n")
        handle.write("--\\n")
"""


@pytest.mark.single_process("the hook writes one file per process")
def test_a_cached_collection_names_and_locates_items_as_a_parse_does(kedi: Kedi) -> None:
    kedi.write("demo.kedi", REPEATED_NAMES)
    kedi.write("conftest.py", LOCATIONS)
    for _ in range(2):  # parsed, then read from the parse cache
        kedi.run("--kedi-eval", "--collect-only").stdout.fnmatch_lines(["*6 tests collected*"])
    cold, warm, _ = (kedi.pytester.path / "locations.txt").read_text(encoding="utf-8").split("--\n")
    assert cold == warm
    assert "demo.kedi::test:initials-2::one_word 20 one_word" in cold, cold
    assert "demo.kedi::eval:initials-2 23 eval:initials-2" in cold, cold


@pytest.mark.single_process("records what this process's collection saw")
def test_a_kedi_file_is_collected_with_the_older_heap_frozen(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Collecting a file (its parse or cache read, its outline, its items) happens with
    the objects made before it frozen: the collections its objects trigger walk what the
    file made, not every file collected before it; nothing stays frozen afterwards."""
    import gc

    from pytest_kedi.plugin.collect import KediFile, KediTestSuite

    seen: list[tuple[str, bool]] = []
    for cls in (KediFile, KediTestSuite):
        original = cls._children

        def recording(self: object, _original: object = original) -> object:
            seen.append((type(self).__name__, gc.get_freeze_count() > 0))
            return _original(self)  # type: ignore[operator]

        monkeypatch.setattr(cls, "_children", recording)
    kedi.write("demo.kedi", DEMO)
    kedi.write("other.kedi", DEMO)
    assert len(kedi.genitems("--kedi-eval")) == 6
    assert sorted(seen) == [("KediFile", True)] * 2 + [("KediTestSuite", True)] * 2
    assert gc.get_freeze_count() == 0


# Records which of the modules collection does not need the process imported.
NOT_FOR_COLLECTION = """
import sys

def pytest_sessionfinish(session):
    unneeded = ("pickle", "pytest_kedi.plugin.failures", "pytest_kedi.pytraces",
                "pytest_kedi.evals.evaloptions")  # fmt: skip
    with open("imported.txt", "w", encoding="utf-8") as handle:
        handle.write(" ".join(name for name in unneeded if name in sys.modules))
"""


@pytest.mark.single_process("pytest alone, in one process")
def test_a_warm_collection_imports_only_what_collecting_needs(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection that reads every file from the parse cache reads each entry's outline
    only, kept in `marshal`'s format: pytest with pytest-kedi alone imports no `pickle`
    for it (the full module, pickled, is read when an item runs), nor what only a failing
    item (its failure's text, the user's frames) or a suite's run needs."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    kedi.write("demo.kedi", REPEATED_NAMES)
    kedi.write("conftest.py", NOT_FOR_COLLECTION)
    imported = kedi.pytester.path / "imported.txt"
    for _ in range(2):  # parsed (and the entry written), then read from the parse cache
        kedi.subprocess("--kedi-eval", "--collect-only").stdout.fnmatch_lines(
            ["*6 tests collected*"]
        )
    assert imported.read_text(encoding="utf-8") == ""
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=6)  # the modules read back
