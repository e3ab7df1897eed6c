"""A `.kedi` file removed or changed between collection and run fails its items with a
one-line error naming the file (never an internal traceback), with and without xdist."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import DEMO, Kedi

# Runs once per process, after every process collected (xdist starts running tests only
# when all workers have collected).
CONFTEST = """
from pathlib import Path

def pytest_runtest_setup(item):
    path = Path(item.config.rootpath, "demo.kedi")
    if ACTION == "remove":
        path.unlink(missing_ok=True)
    elif path.exists() and "changed" not in path.read_text():
        path.write_text("# changed\\n" + path.read_text())
"""


@pytest.mark.parametrize("action", ["remove", "change"])
def test_file_changed_after_collection_fails_its_items_naming_it(kedi: Kedi, action: str) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("conftest.py", f"ACTION = {action!r}\n" + CONFTEST)
    result = kedi.subprocess("--kedi-eval", "-rf")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 1, output
    result.assert_outcomes(failed=3)
    assert "FileNotFoundError" not in output
    assert "Traceback" not in output
    assert "runtime/" not in output and "runtime\\" not in output
    reason = "cannot read demo.kedi" if action == "remove" else "demo.kedi changed since"
    # The kedi summary shows each item's one-line error.
    summary = [line for line in output.splitlines() if line.startswith("- initials::")]
    assert len(summary) == 3, output
    assert all(reason in line for line in summary), summary
    assert "Kedi stack trace" not in output
