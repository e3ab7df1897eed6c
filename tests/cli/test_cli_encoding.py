"""The command line on a console whose encoding cannot hold the text (ASCII, cp1252)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FEEDBACK = """\
@up(s: str) -> str:
  = `s.upper()`

@eval: up:
  > data: words:
    = `[("straße", "STRASSE"), ("café", "CAFÉ")]`
  > metric: m(words):
    = `(up(words) == expected, "geprüft ✓")`
"""


@pytest.mark.parametrize(
    "command",
    [("fb.kedi", "--eval"), ("merge", "fb.json"), ("compare", "fb.json", "fb.json")],
)
def test_text_the_console_cannot_encode_is_escaped_not_fatal(
    run_cli, kedi_file, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """``merge`` exited 1 ("a suite failed") for a green run, and ``--eval`` with an
    internal error, when stdout could not encode a feedback's ``ü``."""
    kedi_file(FEEDBACK, "fb.kedi")
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--kedi-eval", "fb.kedi"]
    done = subprocess.run(
        [sys.executable, *args, "--kedi-report", "fb.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout
    result = run_cli(*command, env={"PYTHONIOENCODING": "ascii"})
    assert result.code == 0, result.err
    assert "internal error" not in result.err
    if command[0] != "compare":  # compare lists changed rows only: none here
        assert "gepr\\xfcft \\u2713" in result.out
