"""Suite-wide test setup: the package imports from an uninstalled checkout too.

``python -m pytest`` puts the working directory on ``sys.path``, the ``pytest`` script does
not; CI installs the project (``pip install -e '.[dev]'``), where this is a no-op.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kedi_openai_stub import OpenAIStub  # noqa: E402


def _import_the_package() -> None:
    """Import every module of pytest_kedi once, for the whole session.

    The plugin imports most of its modules on first use. pytester's in-process runs
    (``pytester.runpytest``) drop, when a test ends, the modules first imported during
    it, while their package keeps them as attributes: a later ``from pkg import mod``
    would then see the old copy and ``import pkg.mod`` a new one (two sets of AST
    classes, a monkeypatch of one copy missed by the other). Modules imported here,
    before any test, are kept.
    """
    import importlib
    import pkgutil

    import pytest_kedi

    for module in pkgutil.walk_packages(pytest_kedi.__path__, "pytest_kedi."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)


_import_the_package()


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees the environment CI gives it, whatever the shell exported: no
    ``KEDI_*`` setting, no GitHub job summary to append to (``GITHUB_STEP_SUMMARY``), and an
    80-column terminal (pytest sizes its output to a real terminal; the README's samples,
    which tests hold to the plugin's output, are 80 columns wide)."""
    for name in list(os.environ):
        if name.startswith("KEDI_") or name == "GITHUB_STEP_SUMMARY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A running local OpenAI Chat Completions server (see ``kedi_openai_stub``)."""
    stub = OpenAIStub().start()
    try:
        yield stub
    finally:
        stub.stop()
