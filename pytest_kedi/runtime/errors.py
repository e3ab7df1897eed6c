"""Kedi execution errors (kept importable here; they live in `pytest_kedi.errors`)."""

from __future__ import annotations

from pytest_kedi import errors
from pytest_kedi.errors import *  # noqa: F403

__all__ = []
__all__ += errors.__all__
