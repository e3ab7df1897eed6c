"""Run the CLI on small `.kedi` files: in-process (`cli`, for argument handling and output
formats) or as ``python -m pytest_kedi`` in a subprocess (`run_cli`, end to end: the process's
exit status, its stdout/stderr streams, the interpreter's dev mode)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_kedi.cli import PROG, main

ROOT = Path(__file__).resolve().parents[2]
_SCRUBBED = (
    "KEDI_ADAPTER_MODEL",
    "KEDI_DEBUG_OPTIMIZED",
    "KEDI_DEBUG",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "KEDI_ADAPTER",
    "PYTHONWARNINGS",
)


@dataclass(frozen=True)
class Result:
    out: str
    err: str
    code: int


@pytest.fixture
def kedi_file(tmp_path: Path) -> Callable[..., str]:
    """Write a dedented `.kedi` file into ``tmp_path``; return its (relative) name."""

    def write(text: str, name: str = "prog.kedi") -> str:
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return name

    return write


@pytest.fixture
def cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., Result]:
    """``cli(*argv, env={...})`` calls `pytest_kedi.cli.main` in this process with ``tmp_path``
    as working directory, like `run_cli` without the subprocess."""
    monkeypatch.chdir(tmp_path)
    for name in _SCRUBBED:
        monkeypatch.delenv(name, raising=False)

    def run(*argv: str, env: dict[str, str] | None = None) -> Result:
        with monkeypatch.context() as patch:
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            capsys.readouterr()  # what earlier calls printed
            code = main(list(argv), prog=PROG)
            out, err = capsys.readouterr()
        return Result(out, err, code)

    return run


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., Result]:
    """``run_cli(*argv, env={...})`` runs the CLI with ``tmp_path`` as working directory."""

    def run(*argv: str, env: dict[str, str] | None = None) -> Result:
        environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        environ["PYTHONPATH"] = str(ROOT)
        environ["PYTHONIOENCODING"] = "utf-8"
        environ.update(env or {})
        done = subprocess.run(
            [sys.executable, "-m", "pytest_kedi", *argv],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )
        return Result(done.stdout, done.stderr, done.returncode)

    return run
