"""The interpreter's dispatch table is listed in one place and covers every statement."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest

from pytest_kedi.lang import nodes
from pytest_kedi.runtime import dispatch, interpreter

ROOT = Path(__file__).resolve().parents[2]


def test_every_statement_has_a_handler() -> None:
    statements = set(typing.get_args(nodes.Stmt))
    assert statements <= set(dispatch.TABLE)


def test_load_installs_the_table() -> None:
    from pytest_kedi.runtime import load

    load("prog.kedi", source="[x] = `1`\n")
    assert dict(interpreter.HANDLERS) == dict(dispatch.TABLE)


@pytest.mark.parametrize("module", ["control", "procedures", "model.calls", "directive_effects"])
def test_importing_handlers_registers_nothing(module: str) -> None:
    """Importing a handler module fills no table (registration is explicit)."""
    code = (
        f"import pytest_kedi.runtime.{module}\n"
        "from pytest_kedi.runtime import interpreter\n"
        "assert interpreter.HANDLERS == {}, interpreter.HANDLERS\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
