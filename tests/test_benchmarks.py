"""The benchmark scripts stay runnable (their numbers are reported, never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_loading_scale_runs_at_quick_size() -> None:
    script = ROOT / "benchmarks" / "loading_scale.py"
    done = subprocess.run(
        [sys.executable, str(script), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for shape in ("bindings", "procedures"):
        for mode in ("validate", "run"):
            assert any(line.split()[:2] == [shape, mode] and "x" in line for line in lines)
    assert "FAILED" not in done.stdout
