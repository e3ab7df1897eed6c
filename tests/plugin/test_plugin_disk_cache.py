"""Parsed `.kedi` files and their compiled Python are kept in pytest's cache directory, so a
second run neither parses unchanged files again nor recompiles their code; a damaged
cache entry is ignored (with a one-line debug record) and never changes an outcome."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kedi_plugin_helpers import DEMO, Kedi

from pytest_kedi.plugin.cachefiles import sources_hash

# Imported by every process of a run (xdist workers too): when asked, the parser and the
# assertion rewriter refuse to work, so only cached results can make the run pass.
CONFTEST = """
import os

if os.environ.get("REFUSE_KEDI_PARSE"):
    from pytest_kedi.lang import parser

    def _refuse(src):
        raise RuntimeError("parsed again")

    parser._build = _refuse

if os.environ.get("REFUSE_CASE_COMPILE"):
    import pytest_kedi.plugin.items as items

    def _refuse_rewrite(tree, filename):
        raise RuntimeError("compiled again")

    items.rewrite_case_asserts = _refuse_rewrite

if os.environ.get("REFUSE_PYTHON_COMPILE"):  # any expression or block of a .kedi file
    from pytest_kedi.runtime import pyinterop

    def _refuse(*args, **kwargs):
        raise RuntimeError("compiled again")

    # Collection compiles trees its syntax check parsed (no `_parse`): both refuse.
    pyinterop._parse = pyinterop._compile = _refuse
"""

FAILING_CASE = """\
@double(x: int) -> int:
  = `x * 2`

@test: double:
  > case: wrong:
    `assert double(1) == 3`
"""


def _entries(kedi: Kedi, kind: str) -> list[Path]:
    folder = kedi.pytester.path / ".pytest_cache" / "d" / kind
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_second_run_uses_cached_parses_and_case_code(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("conftest.py", CONFTEST)
    first = kedi.subprocess("--kedi-eval")
    first.assert_outcomes(passed=3)
    # one entry per file: its parse and its compiled Python, as collection compiled it
    assert len(_entries(kedi, "kedi-parse")) == 1
    assert _entries(kedi, "kedi-code") == []  # nothing compiled only by the run
    monkeypatch.setenv("REFUSE_KEDI_PARSE", "1")
    monkeypatch.setenv("REFUSE_CASE_COMPILE", "1")
    monkeypatch.setenv("REFUSE_PYTHON_COMPILE", "1")
    second = kedi.subprocess("--kedi-eval")
    second.assert_outcomes(passed=3)
    assert "again" not in second.stdout.str()


def test_collection_compiles_what_the_run_needs(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Collecting a file it parsed compiles the file's Python (its cases assertion-
    rewritten) into the cache, as pytest compiles a `.py` test module it collects: the
    first run after `--collect-only` compiles nothing, and keeps assertion introspection."""
    kedi.write("demo.kedi", DEMO)
    kedi.write("double.kedi", FAILING_CASE)
    kedi.write("conftest.py", CONFTEST)
    kedi.subprocess("--kedi-eval", "--collect-only").assert_outcomes()
    assert len(_entries(kedi, "kedi-parse")) == 2  # each file's parse and compiled Python
    monkeypatch.setenv("REFUSE_KEDI_PARSE", "1")
    monkeypatch.setenv("REFUSE_CASE_COMPILE", "1")
    monkeypatch.setenv("REFUSE_PYTHON_COMPILE", "1")
    result = kedi.subprocess("--kedi-eval", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: assert 2 == 3*"])
    assert "again" not in result.stdout.str()


def test_collection_reports_python_that_parses_but_does_not_compile(kedi: Kedi) -> None:
    # A `nonlocal` without a binding parses but does not compile: collection compiles it
    # as the run would, and reports it at its line (it was left to the run).
    kedi.write("bad.kedi", FAILING_CASE.replace("`assert double(1) == 3`", "`nonlocal zzz`"))
    collected = kedi.subprocess("--kedi-eval", "--collect-only")
    collected.assert_outcomes(errors=1)
    collected.stdout.fnmatch_lines(["*bad.kedi*line 6*", "*no binding for nonlocal 'zzz'*"])
    assert "Traceback" not in collected.stdout.str()


def test_the_code_cache_version_covers_every_compiling_module() -> None:
    """Every `pytest_kedi.runtime` module the compiling code imports a helper from, and
    every `pytest_kedi.lang` module but the node classes, is hashed into the code cache's
    version, so changing it cannot reuse stale code."""
    import ast

    import pytest_kedi
    from pytest_kedi.plugin.cachefiles import COMPILER_SOURCES

    # Modules that hold no compiling code: errors, globals, scopes, source text.
    unrelated = {"pyerrors", "pyglobals", "scope", "sourcefile"}
    package = Path(pytest_kedi.__file__).parent
    for compiling in ("runtime/pyinterop.py", "runtime/casecode.py"):
        assert compiling in COMPILER_SOURCES
        tree = ast.parse((package / compiling).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "pytest_kedi.runtime."
            ):
                name = node.module.rsplit(".", 1)[-1]
                if name not in unrelated:
                    assert f"runtime/{name}.py" in COMPILER_SOURCES, name
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "pytest_kedi.lang."
            ):
                name = node.module.rsplit(".", 1)[-1]
                if name != "nodes":
                    assert f"lang/{name}.py" in COMPILER_SOURCES, name


def test_the_cache_versions_hash_sources_that_exist() -> None:
    """A listed source that is not there (a module renamed or split) would be left out of
    the hash without a word, and changing the code that replaced it would reuse stale
    entries. Each cache's own modules are listed."""
    import pytest_kedi
    from pytest_kedi.plugin.cachefiles import COMPILER_SOURCES, PARSER_SOURCES

    package = Path(pytest_kedi.__file__).parent
    for source in (*PARSER_SOURCES, *COMPILER_SOURCES):
        assert (package / source).exists(), source
    assert {"plugin/parsecache.py", "plugin/cachefiles.py"} <= set(PARSER_SOURCES)
    assert {"plugin/codecache.py", "plugin/cachefiles.py"} <= set(COMPILER_SOURCES)


# Counts, in each process, the reads of every parse cache entry (every cache entry is
# read by `cachefiles.read_entry`, through the `read_bytes` it imported).
COUNT_ENTRY_READS = """
import json
import os
from pathlib import Path

from pytest_kedi.plugin import cachefiles

READS = {}
_read_bytes = cachefiles.read_bytes


def _counting(target):
    path = Path(target)
    if path.parent.name == "kedi-parse":
        READS[path.name] = READS.get(path.name, 0) + 1
    return _read_bytes(target)


cachefiles.read_bytes = _counting


def pytest_sessionfinish(session):
    with open(f"reads-{os.getpid()}.json", "w", encoding="utf-8") as handle:
        json.dump(READS, handle)
"""


def test_a_run_reads_a_parse_cache_entry_once_for_its_module_and_its_code(kedi: Kedi) -> None:
    """After a cached collection (one read of the entry, for the outline), the first item
    of the file to run needs its module and its compiled Python, both in the entry: the
    entry is read once more for both, not once for each."""
    import json

    kedi.write("demo.kedi", DEMO)
    kedi.subprocess("--kedi-eval", "--collect-only").assert_outcomes()
    (entry,) = _entries(kedi, "kedi-parse")
    kedi.write("conftest.py", COUNT_ENTRY_READS)
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=3)
    assert _entries(kedi, "kedi-code") == []  # every unit the run needed was in the entry
    counts = [
        json.loads(path.read_text(encoding="utf-8")).get(entry.name, 0)
        for path in kedi.pytester.path.glob("reads-*.json")
    ]
    # Each process that ran an item of the file (under xdist: a worker; the controller
    # collects nothing) read it twice: at collection, then for the module and the code.
    assert max(counts) == 2, counts


def test_a_changed_file_compiles_its_python_again(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its expressions and cases are unchanged, at the same places: only the text around
    # them changed, and no code compiled from the earlier text is used.
    kedi.write("demo.kedi", DEMO)
    kedi.write("conftest.py", CONFTEST)
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=3)
    kedi.write("demo.kedi", DEMO + "\n# a comment\n")
    monkeypatch.setenv("REFUSE_PYTHON_COMPILE", "1")
    result = kedi.subprocess("--kedi-eval")
    assert "compiled again" in result.stdout.str()
    monkeypatch.delenv("REFUSE_PYTHON_COMPILE")
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=3)
    monkeypatch.setenv("REFUSE_PYTHON_COMPILE", "1")
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=3)


def test_a_changed_file_is_parsed_again(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("conftest.py", CONFTEST)
    kedi.subprocess("--kedi-eval", "--collect-only").assert_outcomes()
    kedi.write("demo.kedi", DEMO.replace("two_words", "three_words"))
    monkeypatch.setenv("REFUSE_KEDI_PARSE", "1")
    result = kedi.subprocess("--kedi-eval", "--collect-only")
    assert "internal error in the Kedi parser" in result.stdout.str()


def test_cached_case_code_keeps_assertion_introspection(kedi: Kedi) -> None:
    kedi.write("double.kedi", FAILING_CASE)
    for _ in range(2):
        result = kedi.subprocess("--kedi-eval", "-p", "no:randomly")
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*AssertionError: assert 2 == 3*"])
    assert len(_entries(kedi, "kedi-parse")) == 1 and _entries(kedi, "kedi-code") == []


@pytest.mark.single_process("live log records of xdist workers are not shown")
@pytest.mark.parametrize("damaged", ["parse", "code"])
def test_corrupt_entries_are_ignored_with_a_debug_record(kedi: Kedi, damaged: str) -> None:
    import struct

    kedi.write("demo.kedi", DEMO)
    kedi.run("--kedi-eval").assert_outcomes(passed=3)
    entries = _entries(kedi, "kedi-parse") + _entries(kedi, "kedi-code")
    assert len(entries) == 1
    (entry,) = entries
    data = entry.read_bytes()
    if damaged == "parse":  # the whole entry
        entry.write_bytes(b"\x80not a cache entry")
    else:  # only the compiled Python kept after the parse (the entry's last part)
        units = struct.unpack_from("<III", data)[2]
        assert units > 0
        entry.write_bytes(data[:-units] + b"\x80" * units)
    from pytest_kedi.lang import parser

    parser._CACHE.clear()  # this process parsed the file already
    result = kedi.run("--kedi-eval", "-o", "log_cli=true", "--log-cli-level=DEBUG")
    result.assert_outcomes(passed=3)
    output = result.stdout.str()
    expected = {"parse": (1, 0), "code": (0, 1)}[damaged]
    found = (
        output.count("ignoring corrupt parse cache entry"),
        output.count("ignoring corrupt code cache entry"),
    )
    assert found == expected, output
    assert "Traceback" not in output


def test_runs_without_pytest_cache(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert not (kedi.pytester.path / ".pytest_cache").exists()


def test_parser_version_changes_with_any_parser_source(tmp_path: Path) -> None:
    import pytest_kedi

    package = Path(pytest_kedi.__file__).parent
    shutil.copytree(package / "lang", tmp_path / "lang")
    before = sources_hash(tmp_path, "lang")
    assert sources_hash(tmp_path, "lang") == before
    grammar = next((tmp_path / "lang" / "grammar").glob("*.lark"))
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    after_grammar = sources_hash(tmp_path, "lang")
    assert after_grammar != before
    scanner = tmp_path / "lang" / "scanner.py"
    scanner.write_text(scanner.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert sources_hash(tmp_path, "lang") not in (before, after_grammar)


def test_two_processes_flushing_one_file_keep_both_their_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two xdist workers that compiled different units of one file flush at the same time:
    the second reads the entry after the first wrote it, so neither loses its units (the
    second run would compile them again). Here the second flush starts, in its own
    thread, while the first is between reading the entry and writing it."""
    import marshal
    import threading

    from pytest_kedi.plugin import codecache
    from pytest_kedi.plugin.codecache import CodeCache

    code = compile("x = 1", "demo.kedi", "exec")
    tmp_path = tmp_path / "kedi-code"
    tmp_path.mkdir()
    first, second = CodeCache(tmp_path), CodeCache(tmp_path)
    first.put(("demo.kedi", "unit-a"), (code,))
    second.put(("demo.kedi", "unit-b"), (code,))
    write = codecache.write_entry
    second_done = threading.Event()
    started: list[threading.Thread] = []

    def interleaved(target: Path, data: bytes) -> None:
        if not started:  # the first flush, after its read: the second one runs now
            thread = threading.Thread(target=lambda: (second.flush(), second_done.set()))
            started.append(thread)
            thread.start()
            second_done.wait(timeout=0.5)  # without the lock it finishes here, else it waits
        write(target, data)

    monkeypatch.setattr(codecache, "write_entry", interleaved)  # where `flush` looks it up
    first.flush()
    started[0].join()
    (entry,) = tmp_path.iterdir()
    assert set(marshal.loads(entry.read_bytes())) == {"unit-a", "unit-b"}


def test_units_read_with_the_module_are_not_read_again_and_not_kept(tmp_path: Path) -> None:
    """The units part of a parse cache entry, read with the file's module, is what the
    code cache decodes at the first lookup (the entry is not read again); the bytes are
    dropped once decoded (a run of 1,000 files keeps none of them)."""
    import marshal

    from pytest_kedi.plugin.codecache import CodeCache

    code = compile("x = 1", "demo.kedi", "exec")
    units = marshal.dumps({"unit": (code,)})
    entry = tmp_path / "entry"  # the entry's other parts, then the units
    entry.write_bytes(b"head" + units)
    store = CodeCache(tmp_path / "kedi-code")
    store.bind("demo.kedi", entry, 4, 4 + len(units))
    store.provide("demo.kedi", entry, units)
    entry.unlink()
    assert store.get(("demo.kedi", "unit")) == (code,)
    assert store._bound == {}


def test_an_entry_is_written_over_a_temporary_file_left_by_a_crashed_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Temporary files are named for the process, the thread and a counter: one left by a
    crashed process that had the same identifiers does not keep the entry from being
    written."""
    import itertools
    import os
    import threading

    from pytest_kedi.plugin import cachefiles

    monkeypatch.setattr(cachefiles, "_TEMPORARY", itertools.count(7))
    stale = tmp_path / f".tmp-{os.getpid()}-{threading.get_ident()}-7"
    stale.write_bytes(b"partial")
    target = tmp_path / "entry"
    cachefiles.write_entry(target, b"whole")
    assert target.read_bytes() == b"whole"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["entry"]


@pytest.mark.parametrize("cache", ["with pytest's cache", "-p no:cacheprovider"])
def test_collection_imports_no_pydantic(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    # Collecting (cold, then from the cache) parses and compiles `.kedi` files but runs
    # nothing: it must not import pydantic or pydantic-ai (about 0.25 s of CPU a process,
    # paid by an IDE at each re-collection). Nor does running suites and cases that call no
    # model and name no pydantic type (pydantic alone is about 0.13 s of CPU, asyncio
    # 0.04 s). A run that calls a model does import them: the probe can fail.
    pytester.makepyfile(
        conftest="""
        import sys
        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_unconfigure(config):
            names = ("pydantic", "pydantic_ai", "asyncio")
            heavy = [name for name in names if name in sys.modules]
            print(f"heavy imports: {heavy}")
            print(f"ast classes imported: {'pytest_kedi.lang.nodes' in sys.modules}")
        """
    )
    pytester.makefile(".kedi", test_demo=DEMO)
    pytester.makeini("[pytest]\nkedi_collect = true\n")
    options = ["-p", "no:cacheprovider"] if cache != "with pytest's cache" else []
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # other plugins may import it
    base = ["-p", "pytest_kedi.plugin", "-s", *options]
    for step in ("cold", "warm"):
        result = pytester.runpytest_subprocess(*base, "--collect-only")
        result.stdout.fnmatch_lines(["heavy imports: []"])
        # Read from the parse cache, the files' outlines need no AST.
        parsed = step == "cold" or cache != "with pytest's cache"
        result.stdout.fnmatch_lines([f"ast classes imported: {parsed}"])
    ran = pytester.runpytest_subprocess(*base, "--kedi-eval")
    ran.assert_outcomes(passed=3)
    ran.stdout.fnmatch_lines(["heavy imports: []"])
    pytester.makefile(".kedi", test_ask=ASKS)
    asked = pytester.runpytest_subprocess(*base, "--kedi-eval")
    asked.assert_outcomes(passed=4)
    asked.stdout.fnmatch_lines(["heavy imports: ['pydantic', 'pydantic_ai', 'asyncio']"])


ASKS = """\
@ask(q: str) -> str:
  >> Answer <q>.

@test: ask:
  > case: one:
    `assert isinstance(ask("x"), str)`
"""


CHECKED = """\
@check(x: int) -> int:
  = ```
  assert x > 0, "not positive"
  return x
  ```

@test: check:
  > case: negative:
    `check(-1)`
"""


def test_a_python_dash_o_run_keeps_its_compiled_code_apart(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled-code caches were not keyed on ``-O``: after one ``python -O`` run,
    normal runs kept running code whose asserts ``-O`` had compiled out."""
    kedi.write("checked.kedi", CHECKED)
    kedi.subprocess("--kedi-eval").assert_outcomes(failed=1)
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")
    kedi.subprocess("--kedi-eval").assert_outcomes(passed=1)  # the procedure's assert is gone
    monkeypatch.delenv("PYTHONOPTIMIZE")
    result = kedi.subprocess("--kedi-eval")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: not positive"])
