"""Loading, validation mode, suites entry points and modules (docs/language.md#validation-mode,
docs/language.md#modules, docs/language.md#tests-and-evals, docs/language.md#pytest-mapping)."""

from __future__ import annotations

import ast

import pytest

from pytest_kedi.runtime import Program, load
from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediImportError,
    KediUnsupportedError,
)

SUITES = """
@initials(name: str) -> str:
  = `"".join(w[0].upper() for w in name.split())`

@test: initials:
  > case: two_words:
    `assert initials("ada lovelace") == "AL"`
  > case: failing:
    ```
    value = initials("grace hopper")
    assert value == "XX"
    ```

@eval: initials:
  > data: people:
    = ```
    return [("ada lovelace", "AL"), ("alan turing", "AT")]
    ```
  > test_data: people:
    = `[("grace hopper", "GH")]`
  > metric: exact(people):
    [guess] = <initials(<people>)>
    = `guess == expected`
"""


def test_validate_mode_declares_everything_without_running(kedi, capsys):
    src = """
    > show: side effect
    [x] = value
    @f() -> str:
      = <x>
    = `1 / 0`
    @g() -> str:
      = after return
    """
    program = kedi(src, mode="validate")
    assert isinstance(program, Program)
    assert set(program.procedures) == {"f", "g"}
    assert program.procedures["g"]() == "after return"
    assert program.procedures["f"]() == "value"
    assert capsys.readouterr().out == ""


def test_lazy_binding_failure_is_raised_at_read_with_own_location(kedi):
    src = """
    [bad: int] = `1 // 0`
    @f() -> int:
      = `bad + 1`
    """
    program = kedi(src, mode="validate")
    with pytest.raises(KediExecutionError) as info:
        program.procedures["f"]()
    err = info.value
    assert isinstance(err.original, ZeroDivisionError)
    assert any(f.span is not None and f.span.start_line == 1 for f in err.frames)


def test_lazy_binding_runs_once(kedi):
    src = """
    ```
    calls = []
    def make():
        calls.append(1)
        return "v"
    ```
    [x] = `make()`
    @f() -> str:
      = <x>
    @n() -> int:
      = `len(calls)`
    """
    program = kedi(src, mode="validate")
    assert program.procedures["n"]() == 0
    assert program.procedures["f"]() == "v"
    assert program.procedures["f"]() == "v"
    assert program.procedures["n"]() == 1


def test_listing_globals_forces_nothing(kedi):
    src = """
    [boom: int] = `1 // 0`
    @names() -> bool:
      = `"boom" in globals()`
    """
    assert kedi(src, mode="validate").procedures["names"]() is True


def test_run_case_passes_and_fails_with_original(kedi):
    program = kedi(SUITES, mode="validate")
    suite = program.module.test_suites[0]
    program.run_case(suite, suite.cases[0])
    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, suite.cases[1])
    assert isinstance(info.value.original, AssertionError)
    assert info.value.python_traces[-1].kedi_line == 10
    assert info.value.frames[0].kind == "case"


def test_run_case_transform_rewrites_python(kedi):
    program = kedi(SUITES, mode="validate")
    suite = program.module.test_suites[0]
    seen = []

    def transform(tree: ast.Module, filename: str) -> None:
        seen.append(filename)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                node.msg = ast.Constant("rewritten")

    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, suite.cases[1], transform=transform)
    assert str(info.value.original) == "rewritten"
    assert seen


def test_dataset_and_metric_entry_points(kedi):
    program = kedi(SUITES, mode="validate")
    suite = program.module.eval_suites[0]
    data, test_data = suite.datasets
    assert program.load_dataset(suite, test_data) == [("grace hopper", "GH")]
    rows = program.load_dataset(suite, data)
    assert rows[0] == ("ada lovelace", "AL")
    metric = suite.metric
    assert program.run_metric(suite, metric, {"people": "grace hopper", "expected": "GH"}) is True
    assert program.run_metric(suite, metric, {"people": "ada", "expected": "X"}) is False


def test_metric_without_expected_raises_name_error(kedi):
    program = kedi(SUITES, mode="validate")
    suite = program.module.eval_suites[0]
    with pytest.raises(NameError):
        program.run_metric(suite, suite.metric, {"people": "ada"})


def test_metric_return_value_is_raw(kedi):
    src = """
    @eval: raw:
      > data: rows:
        = `[1]`
      > metric: m(rows):
        = `(0.5, "fine")`
    """
    program = kedi(src, mode="validate")
    suite = program.module.eval_suites[0]
    assert program.run_metric(suite, suite.metric, {"rows": 1}) == (0.5, "fine")


def test_file_with_unsupported_constructs_still_loads(kedi):
    src = """
    > profile: reviewer:
      > model: openai:gpt-4o
    @agentic() -> str:
      > use: reviewer
      >> review
      = done
    @plain() -> str:
      = fine
    """
    program = kedi(src, mode="validate")
    assert program.procedures["plain"]() == "fine"
    with pytest.raises(KediUnsupportedError):
        program.procedures["agentic"]()


def test_relative_import_binds_exports(kedi, tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "util.kedi").write_text(
        "> export:\n  shout\n@shout(s: str) -> str:\n  = `s.upper() + suffix`\n"
        "[suffix] = !\n@hidden() -> str:\n  = no\n",
        encoding="utf-8",
    )
    program = kedi("> import: lib/util\n= <shout(hi)>\n")
    assert program.run() == "HI!"
    program = kedi("> import: lib/util\n= <hidden()>\n")
    with pytest.raises(KediExecutionError):
        program.run()


def test_missing_module_is_a_clear_error(run):
    with pytest.raises(KediImportError, match="nowhere"):
        run("> import: nowhere\n")


def test_a_module_name_too_long_for_the_system_is_not_found(run):
    """`Path.is_file` raised ``OSError: File name too long``: a traceback, not a Kedi error."""
    name = "m" * 300
    with pytest.raises(KediImportError, match=f"prog.kedi:1: module '{name}' not found"):
        run(f"> import: {name}\n")


def test_bundled_module_is_unsupported(run):
    with pytest.raises(KediUnsupportedError, match="helpers"):
        run("> import: helpers\n")


def test_import_cycle_is_a_clear_error(kedi, tmp_path):
    (tmp_path / "a.kedi").write_text("> import: b\n> export: *\n", encoding="utf-8")
    (tmp_path / "b.kedi").write_text("> import: a\n> export: *\n", encoding="utf-8")
    with pytest.raises(KediImportError, match="cycle"):
        kedi("> import: a\n").run()


def test_load_from_source_string(tmp_path):
    program = load(tmp_path / "virtual.kedi", source="= `40 + 2`\n")
    assert program.run() == 42
    assert program.path.endswith("virtual.kedi")


def test_prelude_failure_fails_the_file(kedi):
    with pytest.raises(KediExecutionError) as info:
        kedi("```\nraise RuntimeError('no')\n```\n")
    assert info.value.frames[0].kind == "prelude"


def test_run_case_with_pytest_assertion_rewriter(kedi):
    from _pytest.assertion.rewrite import rewrite_asserts

    def transform(tree: ast.Module, filename: str) -> None:
        rewrite_asserts(tree, ast.unparse(tree).encode("utf-8"), filename, None)

    program = kedi(SUITES, mode="validate")
    suite = program.module.test_suites[0]
    program.run_case(suite, suite.cases[0], transform=transform)
    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, suite.cases[1], transform=transform)
    original = info.value.original
    assert isinstance(original, AssertionError)
    assert "'GH' == 'XX'" in str(original)
    assert info.value.line == 10


def test_selective_import_binds_only_listed_names(kedi, tmp_path):
    (tmp_path / "m.kedi").write_text(
        "> export: *\n@a() -> str:\n  = A\n@b() -> str:\n  = B\n", encoding="utf-8"
    )
    assert kedi("> import: m:\n  a\n= <a()>\n").run() == "A"
    with pytest.raises(KediExecutionError, match="unknown name 'b'"):
        kedi("> import: m:\n  a\n= <b()>\n").run()
    with pytest.raises(KediImportError, match="does not export") as info:
        kedi("> import: m:\n  a\n  zzz\n").run()
    # located at the name listed, not at the directive's header
    assert info.value.line == 3
    assert info.value.message.endswith(":3:3: module 'm' does not export 'zzz'")
    assert info.value.render().splitlines()[-3:-1] == ["    zzz", "    ^"]


@pytest.mark.parametrize(
    ("exports", "line", "column", "quoted"),
    [
        ("> export: a, missing\n", 1, 14, "> export: a, missing"),
        ("> export:\n  a\n  missing\n", 3, 3, "missing"),
    ],
)
def test_an_export_the_module_does_not_define_is_located_in_the_module(
    kedi, tmp_path, exports: str, line: int, column: int, quoted: str
):
    """It was located at the importing file's `> import:` line: the name at fault is in the
    module's own `> export:` list, which the trace now ends at, a caret under the name."""
    (tmp_path / "m.kedi").write_text(exports + "[a] = 1\n", encoding="utf-8")
    with pytest.raises(KediImportError, match="does not define") as info:
        kedi("> import: m\n= <a>\n").run()
    assert info.value.message.endswith(
        f"m.kedi:{line}:{column}: exports 'missing', which the module does not define"
    )
    rendered = info.value.render().splitlines()
    assert rendered[1].endswith(", line 1, in <program>")  # the import, around it
    assert rendered[3].endswith(f'm.kedi", line {line}, in <module>')
    assert rendered[4:6] == [f"    {quoted}", "    " + " " * quoted.index("missing") + "^"]


@pytest.mark.parametrize(
    ("exports", "exported"),
    [
        ("> export: *\n> export: b\n", ["a", "b"]),
        ("> export: b\n> export: *\n", ["a", "b"]),
        ("> export: *\n> export: _h\n", ["_h", "a", "b"]),
        ("> export: a\n> export: b\n", ["a", "b"]),
        ("> export: b\n", ["b"]),
    ],
)
def test_export_directives_add_up(kedi, tmp_path, exports: str, exported: list[str]):
    """A list after `> export: *` replaced it: the module exported only the listed names."""
    (tmp_path / "m.kedi").write_text(exports + "[a] = A\n[b] = B\n[_h] = H\n", encoding="utf-8")
    program = kedi("> import: m\n= `sorted(n for n in ('a', 'b', '_h') if n in globals())`\n")
    assert program.run() == exported


def test_module_initializes_once_per_root(kedi, tmp_path):
    log = tmp_path / "inits.log"
    (tmp_path / "base.kedi").write_text(
        f"```\nwith open({str(log)!r}, 'a') as fh:\n    fh.write('init\\n')\n```\n"
        "[stamp] = base\n> export: *\n",
        encoding="utf-8",
    )
    (tmp_path / "left.kedi").write_text("> import: base\n> export: *\n", encoding="utf-8")
    (tmp_path / "right.kedi").write_text("> import: base\n> export: *\n", encoding="utf-8")
    program = kedi("> import: left\n> import: right\n= <stamp>\n")
    assert program.run() == "base"
    assert log.read_text(encoding="utf-8").splitlines() == ["init"]


def test_unsupported_import_does_not_fail_the_file_in_validate_mode(kedi):
    src = """
    > import: helpers:
      tidy
    > import: filesystem
    @uses() -> str:
      = <tidy(x)>
    @other() -> str:
      = fine
    @unknown() -> str:
      = <read_file(x)>
    """
    program = kedi(src, mode="validate")
    assert program.procedures["other"]() == "fine"
    with pytest.raises(KediUnsupportedError, match="helpers"):
        program.procedures["uses"]()
    with pytest.raises(KediUnsupportedError, match="filesystem"):
        program.procedures["unknown"]()


def test_case_lines_share_one_python_unit(kedi):
    src = """
    @up(x) -> str:
      = `x.upper()`

    @test: up:
      > case: shared:
        `value = up("ab")`
        # a comment between lines
        ```
        other = value + "!"
        ```
        `assert other == "AB!"`
      > case: fails_on_its_own_line:
        `value = up("ab")`

        `assert value == "xy"`
    """
    program = kedi(src, mode="validate")
    suite = program.module.test_suites[0]
    program.run_case(suite, suite.cases[0])
    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, suite.cases[1])
    assert isinstance(info.value.original, AssertionError)
    assert info.value.python_traces[-1].kedi_line == 15
    # names created by a case never become Kedi variables
    with pytest.raises(NameError):
        program.get("value")


@pytest.mark.parametrize("problem", ["missing", "directory"])
def test_an_unreadable_file_is_a_one_line_load_error(tmp_path, problem):
    from pytest_kedi.runtime import load
    from pytest_kedi.runtime.errors import KediImportError

    path = tmp_path / "gone.kedi"
    if problem == "directory":
        path.mkdir()
    with pytest.raises(KediImportError) as info:
        load(path, mode="validate")
    assert info.value.message.startswith(f"cannot read {path}: ")
    assert "Error" not in info.value.message


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"path": None},
            "load() takes the path of a .kedi file as str or os.PathLike, not NoneType",
        ),
        (
            {"path": b"p.kedi"},
            "load() takes the path of a .kedi file as str or os.PathLike, not bytes",
        ),
        ({"path": 3}, "load() takes the path of a .kedi file as str or os.PathLike, not int"),
        (
            {"path": "p.kedi", "source": b"= x\n"},
            "load() takes the source text as str, not bytes (decode it first: "
            "data.decode('utf-8'))",
        ),
    ],
    ids=["none", "bytes", "int", "source-bytes"],
)
def test_load_with_an_argument_of_the_wrong_type_is_a_clear_type_error(kwargs, message):
    """``load(None)`` said ``KediImportError: cannot read None: No such file or directory``
    (it read a file named ``None``); ``load(b"p.kedi")`` looked for ``b'p.kedi'``."""
    with pytest.raises(TypeError) as info:
        load(**kwargs)
    assert str(info.value) == message
