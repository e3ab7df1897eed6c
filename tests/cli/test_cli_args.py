"""Command-line splitting: CLI-owned options vs the program's ``args``
(docs/language.md#program-runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kedi import __version__
from pytest_kedi.cli import (
    CliUsageError,
    Invocation,
    main,
    parse_invocation,
    parse_program_args,
    program_name,
)


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        ([], {}),
        (["--name", "Ada"], {"name": "Ada"}),
        (["--verbose"], {"verbose": True}),
        (["--verbose", "--name", "Ada"], {"verbose": True, "name": "Ada"}),
        (["--max-items", "3"], {"max_items": "3"}),
        (["--name", "Ada", "--name", "Grace"], {"name": "Ada"}),
        (["stray", "--x", "1", "loose"], {"x": "1"}),
        (["--n", "-5"], {"n": "-5"}),
        (["--key=a=b"], {"key": "a=b"}),
        (["--empty="], {"empty": ""}),
        (["--"], {}),
        (["-x", "1"], {}),
    ],
)
def test_parse_program_args(tokens: list[str], expected: dict[str, object]) -> None:
    assert parse_program_args(tokens) == expected


def test_owned_options_anywhere() -> None:
    inv = parse_invocation(["--test", "p.kedi", "--name", "x", "--eval", "--model", "groq:m"])
    assert inv == Invocation(
        file="p.kedi", model="groq:m", test=True, eval=True, args={"name": "x"}
    )


def test_model_equals_form_and_first_model_wins() -> None:
    inv = parse_invocation(["p.kedi", "--model=openai:a", "--model", "openai:b"])
    assert inv.model == "openai:a"
    assert inv.args == {}


def test_owned_options_do_not_reach_args() -> None:
    assert parse_invocation(["p.kedi", "--test", "--flag"]).args == {"flag": True}


def test_help() -> None:
    assert parse_invocation(["--help"]).help
    assert parse_invocation(["-h"]).help
    assert parse_invocation(["p.kedi", "--help"]).help
    assert parse_invocation(["p.kedi", "-h"]).args == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "missing FILE"),
        (["--verbose", "p.kedi"], "unknown option before FILE: --verbose"),
        (["-"], "FILE cannot be '-': a program is read from a file, not standard input"),
        (["--eval", "-"], "FILE cannot be '-'"),
        (["p.kedi", "--model"], "--model needs a model name"),
        (["p.kedi", "--model", "--test"], "--model needs a model name"),
        (["p.kedi", "--model="], "--model needs a model name"),
    ],
)
def test_misuse(argv: list[str], message: str) -> None:
    with pytest.raises(CliUsageError, match=message):
        parse_invocation(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["p.kedi", "--eval", "--adapter", "pydantic", "--adapter-model", "openai:gpt-5.6-luna"],
        ["p.kedi", "--eval", "--adapter=pydantic", "--adapter-model=openai:gpt-5.6-luna"],
        ["p.kedi", "--adapter-model", "openai:gpt-5.6-luna", "--model", "openai:gpt-5.6-luna"],
    ],
)
def test_kedi_adapter_flags_are_owned_by_the_cli(argv: list[str]) -> None:
    inv = parse_invocation(argv)
    assert inv.model == "openai:gpt-5.6-luna"
    assert inv.args == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["p.kedi", "--adapter", "dspy"], "unsupported adapter 'dspy' (--adapter)"),
        (["p.kedi", "--adapter=langchain"], "unsupported adapter 'langchain' (--adapter)"),
        (["p.kedi", "--adapter"], "--adapter needs an adapter name: --adapter pydantic"),
        (["p.kedi", "--adapter-model"], "--adapter-model needs a model name"),
        (
            ["p.kedi", "--model", "openai:a", "--adapter-model", "openai:b"],
            "conflicting models: --model openai:a and --adapter-model openai:b",
        ),
        # a repeat was not compared: the first of each agreed, and the run went on
        (
            ["p.kedi", "--model", "test", "--adapter-model", "test", "--adapter-model", "x:y"],
            "conflicting models: --model test and --adapter-model x:y",
        ),
        (
            ["p.kedi", "--adapter-model", "test", "--model", "test", "--model", "x:y"],
            "conflicting models: --model test and --model x:y",
        ),
        # after `--` too: the CLI's options are its own anywhere (`dspy` reached `args`)
        (["p.kedi", "--", "--adapter", "dspy"], "unsupported adapter 'dspy' (--adapter)"),
    ],
)
def test_adapter_flag_misuse(argv: list[str], message: str) -> None:
    with pytest.raises(CliUsageError) as caught:
        parse_invocation(argv)
    assert str(caught.value).startswith(message)
    if "unsupported" in message:
        assert "supports only the 'pydantic' adapter" in str(caught.value)


def test_kedi_adapter_environment(monkeypatch) -> None:
    monkeypatch.setenv("KEDI_ADAPTER", "dspy")
    with pytest.raises(CliUsageError, match="unsupported adapter 'dspy' \\(environment variable"):
        parse_invocation(["p.kedi"])
    assert parse_invocation(["p.kedi", "--adapter", "pydantic"]).file == "p.kedi"
    monkeypatch.setenv("KEDI_ADAPTER", "pydantic")
    assert parse_invocation(["p.kedi"]).args == {}


def test_kedi_agent_with_kedi_adapter_and_an_invalid_kedi_parallel_are_misuse(monkeypatch) -> None:
    """KEDI.md §6.5: ``KEDI_AGENT`` together with ``KEDI_ADAPTER`` is an error, and so is a
    ``KEDI_PARALLEL`` that is neither a boolean word nor a worker count; both were ignored."""
    monkeypatch.delenv("KEDI_ADAPTER", raising=False)
    monkeypatch.setenv("KEDI_AGENT", "claude")
    assert parse_invocation(["p.kedi"]).file == "p.kedi"  # alone: Kedi's, not ours to judge
    monkeypatch.setenv("KEDI_ADAPTER", "pydantic")
    with pytest.raises(CliUsageError, match="KEDI_AGENT and KEDI_ADAPTER are both set"):
        parse_invocation(["p.kedi"])
    monkeypatch.delenv("KEDI_ADAPTER")
    # `--adapter` is KEDI_ADAPTER's flag (KEDI.md 6.5): it was accepted beside KEDI_AGENT.
    with pytest.raises(CliUsageError, match="KEDI_AGENT and --adapter are both set: Kedi takes"):
        parse_invocation(["p.kedi", "--adapter", "pydantic"])
    monkeypatch.delenv("KEDI_AGENT")
    for good in ("1", "off", "Yes", "4"):
        monkeypatch.setenv("KEDI_PARALLEL", good)
        assert parse_invocation(["p.kedi"]).file == "p.kedi"
    for bad in ("bogus", "0.5", "-2", "0x3"):
        monkeypatch.setenv("KEDI_PARALLEL", bad)
        with pytest.raises(CliUsageError, match=f"KEDI_PARALLEL: expected .* not '{bad}'"):
            parse_invocation(["p.kedi"])


@pytest.mark.parametrize("bad", ["\u00b2", "\u2460", "3\u00b2"])
def test_a_kedi_parallel_of_digits_int_refuses_is_misuse(cli, kedi_file, bad: str) -> None:
    """``KEDI_PARALLEL=\u00b2`` (a digit to `str.isdigit`, not to `int`) ended in a Python
    traceback (``ValueError: invalid literal for int()``)."""
    result = cli(kedi_file("= done\n"), env={"KEDI_PARALLEL": bad})
    assert result.code == 2
    assert (
        f"KEDI_PARALLEL: expected a boolean word (1/0, true/false, yes/no, on/off) or a worker "
        f"count, not {bad!r}" in result.err
    )
    assert result.out == ""


def test_version_is_owned() -> None:
    assert parse_invocation(["--version"]).version
    assert parse_invocation(["p.kedi", "--version"]).args == {}


def test_owned_options_are_not_abbreviated() -> None:
    """argparse's prefix matching is off: ``--mod``/``--te`` are program options."""
    inv = parse_invocation(["p.kedi", "--mod", "x", "--te"])
    assert (inv.model, inv.test, inv.args) == (None, False, {"mod": "x", "te": True})


def test_help_short_form_only_before_file() -> None:
    assert parse_invocation(["-h", "p.kedi"]).help
    inv = parse_invocation(["p.kedi", "-h", "--name", "x"])
    assert (inv.help, inv.args) == (False, {"name": "x"})


def test_owned_switch_with_a_value_is_misuse() -> None:
    with pytest.raises(CliUsageError, match="--test: ignored explicit argument '1'"):
        parse_invocation(["p.kedi", "--test=1"])


@pytest.mark.parametrize(
    ("argv0", "name"),
    [
        ("/venv/bin/pytest-kedi", "pytest-kedi"),
        ("C:\\venv\\Scripts\\pytest-kedi.exe", "pytest-kedi"),
        ("/src/pytest_kedi/__main__.py", "python -m pytest_kedi"),
        ("/venv/bin/pytest", "python -m pytest_kedi"),
    ],
)
def test_program_name(argv0: str, name: str) -> None:
    assert program_name(argv0.replace("\\", "/")) == name


def test_help_version_and_misuse_name_the_program(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"], prog="pytest-kedi") == 0
    out, err = capsys.readouterr()
    assert out.startswith(
        "usage: pytest-kedi FILE [--model MODEL] [--adapter pydantic] [--test] [--eval] "
        "[program options]\n       pytest-kedi parse FILE...\n"
    )
    for flag in ("--model MODEL", "--adapter-model MODEL", "--adapter NAME", "--test",
                 "--eval", "--help", "--version", "Other options after FILE fill"):  # fmt: skip
        assert flag in out
    assert err == ""
    assert main(["--version"]) == 0
    assert capsys.readouterr() == (f"pytest-kedi {__version__}\n", "")
    assert main(["p.kedi", "--adapter"], prog="pytest-kedi") == 2
    assert capsys.readouterr() == (
        "",
        "pytest-kedi: error: --adapter needs an adapter name: --adapter pydantic\n"
        "usage: pytest-kedi FILE [--model MODEL] [--adapter pydantic] [--test] [--eval] "
        "[program options]\n",
    )


def test_parse_subcommand_help_and_misuse(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: python -m pytest_kedi parse [-h] [FILE ...]\n")
    assert err == ""
    assert main(["parse"]) == 2
    assert capsys.readouterr().err.startswith(
        "python -m pytest_kedi: error: parse needs at least one FILE\n"
    )


def test_a_double_dash_is_neither_a_value_nor_the_end_of_the_clis_options() -> None:
    """After ``--`` the CLI's own options reached ``args`` (``{'test': True, 'help':
    True}``), and ``--k -- v`` gave ``k`` the value ``'--'``."""
    inv = parse_invocation(["p.kedi", "--k", "--", "v", "--", "--test", "--model", "test"])
    assert (inv.args, inv.test, inv.model) == ({"k": "v"}, True, "test")


@pytest.mark.parametrize("command", ["parse", "html", "compare", "merge"])
def test_a_command_after_an_option_is_named_as_one(cli, command: str) -> None:
    """``--model test parse a.kedi`` read ``parse`` as the program's FILE and said only ``no
    such file: parse``; the message now says a command comes first. A file of that name runs."""
    result = cli("--model", "test", command, "a.kedi")
    assert result.code == 2
    assert result.err.startswith(
        f"python -m pytest_kedi: error: no such file: {command} (a command comes before any "
        f"option: `python -m pytest_kedi {command} ...`)\n"
    )
    result = cli("--model", "test", "missing.kedi")
    assert "no such file: missing.kedi\n" in result.err
    Path(command).write_text("= ran\n", encoding="utf-8")  # in the cli fixture's directory
    ran = cli("--model", "test", command)
    assert (ran.out, ran.err, ran.code) == ("ran\n", "", 0)
