"""Fixtures for the plugin tests: hermetic pytester runs with the plugin loaded once.

Plugin autoloading is disabled in every inner run and the plugin is loaded with
``-p pytest_kedi.plugin`` instead, so the tests behave the same whether or not the
project is pip-installed (no double registration through the ``kedi`` entry point).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pydantic_ai  # noqa: F401
import pytest
from kedi_plugin_helpers import KEDI_ENV, REPO_ROOT, Kedi

# pytester's in-process runs drop every module first imported inside them; pydantic-ai
# then imported again on top of the pydantic that stays loaded breaks (pydantic's
# decorator registry no longer recognises its own classes). Import it once, out here.


@pytest.fixture
def kedi(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kedi]:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in KEDI_ENV:
        monkeypatch.delenv(name, raising=False)
    python_path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv(
        "PYTHONPATH", str(REPO_ROOT) + (os.pathsep + python_path if python_path else "")
    )
    yield Kedi(pytester)
