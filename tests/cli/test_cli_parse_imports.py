"""``parse`` checks the modules a file imports (a parse error in one fails the file, located
in the module, as the program's load shows it), and walks a directory as pytest collects it."""

from __future__ import annotations

import pytest

OK_LIB = "@helper() -> str:\n  = hi\n> export: *\n"
BROKEN_LIB = "@helper( -> str:\n  = hi\n> export: *\n"
MAIN = "> import: lib\n= `helper()`\n"


@pytest.mark.parametrize("main", [MAIN, "> import: lib:\n  helper\n= `helper()`\n"])
def test_a_parse_error_in_an_imported_module_fails_parse(kedi_file, cli, main) -> None:
    """`parse main.kedi` printed `main.kedi: 0 procedures, ...` and exited 0; the error
    showed only when the program ran."""
    kedi_file(main, "main.kedi")
    kedi_file(BROKEN_LIB, "lib.kedi")
    parsed = cli("parse", "main.kedi")
    ran = cli("main.kedi")
    assert (parsed.out, parsed.code) == ("", 1)
    assert parsed.err == ran.err  # the program's own rendering: the module's, then the import
    assert parsed.err.startswith('Kedi parse error:\n\n  File "lib.kedi", line 1, column 8\n')
    site = 'Imported from:\n  File "main.kedi", line 1\n  ' + main.splitlines()[0] + "\n"
    assert parsed.err.endswith(site)


def test_a_module_imported_further_on_is_checked_too(kedi_file, cli, tmp_path) -> None:
    (tmp_path / "sub").mkdir()
    kedi_file(MAIN, "main.kedi")
    kedi_file("> import: sub/deep\n@helper() -> str:\n  = hi\n> export: *\n", "lib.kedi")
    kedi_file("@deep(:\n  = x\n", "sub/deep.kedi")
    parsed = cli("parse", "main.kedi", "lib.kedi")
    assert (parsed.out, parsed.code) == ("", 1)
    assert parsed.err.count('File "sub/deep.kedi", line 1, column 6') == 2
    site = 'Imported from:\n  File "lib.kedi", line 1\n  > import: sub/deep\n'
    assert parsed.err.count(site) == 2
    assert parsed.err.count('  File "main.kedi", line 1\n  > import: lib\n') == 1
    assert parsed.err == cli("main.kedi").err + cli("lib.kedi").err


def test_modules_that_parse_and_import_cycles_pass(kedi_file, cli) -> None:
    kedi_file(MAIN, "main.kedi")
    kedi_file("> import: main\n" + OK_LIB, "lib.kedi")  # a cycle: a load error, not a parse one
    parsed = cli("parse", "main.kedi")
    assert (parsed.out, parsed.err, parsed.code) == (
        "main.kedi: 0 procedures, 0 eval suites, 0 test cases\n",
        "",
        0,
    )
    assert cli("parse", "lib.kedi").code == 0


@pytest.mark.parametrize("folder", [".hidden", ".venv-x", "node_modules", "build", "venv", "env"])
def test_a_directory_walk_skips_what_pytest_does_not_collect(
    kedi_file, cli, tmp_path, folder
) -> None:
    """pytest's collection does not enter hidden folders, `build`, `node_modules`, `venv` ...
    (its `norecursedirs`) or a virtual environment; `parse .` read them, and failed on a
    broken file pytest never collects."""
    (tmp_path / folder).mkdir()
    if folder == "env":  # a virtual environment, by its pyvenv.cfg
        (tmp_path / folder / "pyvenv.cfg").write_text("home = /usr\n")
    kedi_file("@broken(:\n", f"{folder}/bad.kedi")
    kedi_file(OK_LIB, "lib.kedi")
    parsed = cli("parse", ".")
    assert (parsed.out, parsed.err, parsed.code) == (
        "./lib.kedi: 1 procedure, 0 eval suites, 0 test cases\n",
        "",
        0,
    )
    # named on the command line, the folder is parsed (as pytest collects it then)
    assert cli("parse", folder).code == 1


AUTO = "@double(x: int) -> int:\n  > auto:\n    Double the number.\n"


@pytest.mark.parametrize("target", ["prog.kedi", "."])
def test_the_auto_cache_a_program_reads_is_checked(kedi_file, cli, target) -> None:
    """pytest collects a broken `prog.cache.kedi` as a collection error, and the program's
    run fails on it; `parse` left it out and exited 0."""
    kedi_file(AUTO, "prog.kedi")
    kedi_file("# generated: double\n@double(x: int -> int:\n  = `x * 2`\n", "prog.cache.kedi")
    parsed = cli("parse", target)
    assert (parsed.out, parsed.code) == ("", 1)
    where = "prog.cache.kedi" if target == "prog.kedi" else "./prog.cache.kedi"
    assert parsed.err.startswith(f'Kedi parse error:\n\n  File "{where}", line 2, column 8\n')
    assert parsed.err == cli("parse", where).err


def test_an_auto_cache_is_read_only_for_a_program_with_an_auto_procedure(kedi_file, cli) -> None:
    kedi_file("@double(x: int) -> int:\n  = `x * 2`\n", "prog.kedi")
    kedi_file("@double(x: int -> int:\n", "prog.cache.kedi")  # never read: as pytest does
    assert cli("parse", "prog.kedi").code == 0
    kedi_file(AUTO, "prog.kedi")
    kedi_file("# generated: double\n@double(x: int) -> int:\n  = `x * 2`\n", "prog.cache.kedi")
    parsed = cli("parse", "prog.kedi")
    assert (parsed.out, parsed.err, parsed.code) == (
        "prog.kedi: 1 procedure, 0 eval suites, 0 test cases\n",
        "",
        0,
    )
