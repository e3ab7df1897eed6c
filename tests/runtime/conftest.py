"""Fixtures for runtime tests: load Kedi source from a temporary file."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def kedi(tmp_path: Path) -> Callable[..., Any]:
    """``kedi(source, mode="run", name="prog.kedi", **load_kwargs) -> Program``."""
    from pytest_kedi.runtime import load

    def make(source: str, mode: str = "run", name: str = "prog.kedi", **kwargs: Any) -> Any:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
        return load(path, mode=mode, **kwargs)

    return make


@pytest.fixture
def run(kedi: Callable[..., Any]) -> Callable[..., Any]:
    """``run(source, **load_kwargs)``: load in run mode and return the program result."""

    def go(source: str, **kwargs: Any) -> Any:
        return kedi(source, **kwargs).run()

    return go
