"""``python -m pytest_kedi parse FILE...``: summaries on stdout, diagnostics on stderr."""

from __future__ import annotations

import os
import textwrap

import pytest

from pytest_kedi.lang import KediParseError, parse

GOOD = """
    @initials(name: str) -> str:
      = `"".join(w[0].upper() for w in name.split())`

    @shout(text: str) -> str:
      = `text.upper()`

    @test: initials:
      > case: two_words:
        `assert initials("ada lovelace") == "AL"`
      > case: one_word:
        `assert initials("ada") == "A"`

    @test: shout:
      > case: hello:
        `assert shout("hi") == "HI"`

    @eval: initials:
      > data: people:
        = `[("ada lovelace", "AL")]`
      > metric: exact(people):
        = `initials(people) == expected`
    """

BAD = """
    @eval: score
    """


def _rendered(source: str, path: str) -> str:
    """The parser's own diagnostic for ``source`` (what the CLI must print verbatim)."""
    try:
        parse(textwrap.dedent(source).lstrip("\n"), path=path)
    except KediParseError as exc:
        return exc.render() + "\n"
    raise AssertionError("expected a parse error")


def test_summary_for_a_valid_file(kedi_file, cli) -> None:
    name = kedi_file(GOOD)
    result = cli("parse", name)
    assert (result.out, result.err, result.code) == (
        "prog.kedi: 2 procedures, 1 eval suite, 3 test cases\n",
        "",
        0,
    )


def test_parse_error_goes_to_stderr_and_fails(kedi_file, cli) -> None:
    good = kedi_file(GOOD)
    bad = kedi_file(BAD, "bad.kedi")
    result = cli("parse", bad, good)
    assert result.out == "prog.kedi: 2 procedures, 1 eval suite, 3 test cases\n"
    assert result.err == _rendered(BAD, "bad.kedi")
    assert result.err.startswith('Kedi parse error:\n\n  File "bad.kedi", line 1, column ')
    assert result.err.endswith("suite header must end with ':'\n")
    assert result.code == 1


def test_missing_file_fails(cli) -> None:
    result = cli("parse", "nope.kedi")
    assert result.out == ""
    assert result.err == "cannot read nope.kedi: No such file or directory\n"
    assert "Traceback" not in result.err
    assert result.code == 1


def test_parse_without_files_is_misuse(cli) -> None:
    result = cli("parse")
    assert result.out == ""
    assert "error: parse needs at least one FILE" in result.err
    assert result.code == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("parse",), "parse needs at least one FILE"),
        (("parse", "-x", "a.kedi"), "unrecognized arguments: -x"),
    ],
)
def test_parse_misuse_shows_the_parse_usage(cli, argv, message) -> None:
    """The usage line under a ``parse`` misuse was the program run's (``usage: python -m
    pytest_kedi FILE [--model MODEL] ...``), which names none of ``parse``'s arguments."""
    result = cli(*argv)
    assert (result.out, result.code) == ("", 2)
    assert result.err == (
        f"python -m pytest_kedi: error: {message}\n"
        "usage: python -m pytest_kedi parse [-h] [FILE ...]\n"
    )


def test_parse_directory_walks_kedi_programs(kedi_file, cli, tmp_path) -> None:
    (tmp_path / "sub").mkdir()
    kedi_file(GOOD, "sub/b.kedi")
    kedi_file(GOOD, "a.kedi")
    kedi_file("@never(x):\n  = <x>\n", "prog.cache.kedi")
    kedi_file("> package: demo:\n  > export: *\n", "package.kedi")
    result = cli("parse", ".")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "./a.kedi: 2 procedures, 1 eval suite, 3 test cases",
        "./sub/b.kedi: 2 procedures, 1 eval suite, 3 test cases",
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_parse_directory_leaves_named_pipes_out(kedi_file, run_cli, tmp_path) -> None:
    """A named pipe called ``*.kedi`` in the directory made `parse` wait forever reading it
    (pytest's collection leaves such files out too)."""
    kedi_file(GOOD, "a.kedi")
    os.mkfifo(tmp_path / "pipe.kedi")
    result = run_cli("parse", ".")  # in a subprocess: its timeout ends a wait
    assert result.code == 0, result.err
    assert result.out.splitlines() == ["./a.kedi: 2 procedures, 1 eval suite, 3 test cases"]
    assert result.err == ""


def test_an_unreadable_directory_is_named_not_called_empty(
    cli, kedi_file, tmp_path, monkeypatch
) -> None:
    """A directory `parse` could not list was reported as holding no .kedi files."""
    import errno
    import os

    from pytest_kedi import cli as cli_module

    (tmp_path / "pd" / "sub").mkdir(parents=True)
    kedi_file("@p() -> str:\n  = x\n", "pd/ok.kedi")
    real_walk = os.walk

    def walk(top: str, onerror: object = None) -> object:  # as a mode-000 directory lists
        for entry in real_walk(top, onerror=onerror):  # type: ignore[arg-type]
            yield entry
            if entry[0] == top:
                sub = os.path.join(top, "sub")
                onerror(PermissionError(errno.EACCES, "Permission denied", sub))  # type: ignore[operator]
                entry[1].clear()

    monkeypatch.setattr(cli_module.os, "walk", walk)
    result = cli("parse", "pd")
    assert result.out == "pd/ok.kedi: 1 procedure, 0 eval suites, 0 test cases\n"
    assert result.err == "cannot read pd/sub: Permission denied\n"
    assert result.code == 1


def test_a_reader_that_stops_reading_ends_parse_quietly(kedi_file, tmp_path) -> None:
    """``python -m pytest_kedi parse DIR | head -1`` ended in a Python traceback of
    pytest-kedi's (``BrokenPipeError``) once ``head`` stopped reading."""
    import subprocess
    import sys
    from pathlib import Path

    for number in range(400):
        kedi_file(GOOD, f"p{number:03}.kedi")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest_kedi", "parse", "."],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the first line
    with process.stderr:
        err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1
    assert err == ""
