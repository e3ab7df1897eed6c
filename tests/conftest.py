"""Suite-wide test setup: the package imports from an uninstalled checkout too.

``python -m pytest`` puts the working directory on ``sys.path``, the ``pytest`` script does
not; CI installs the project (``pip install -e '.[dev]'``), where this is a no-op.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kedi_openai_stub import OpenAIStub  # noqa: E402


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A running local OpenAI Chat Completions server (see ``kedi_openai_stub``)."""
    stub = OpenAIStub().start()
    try:
        yield stub
    finally:
        stub.stop()
