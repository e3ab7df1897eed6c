"""Errors raised at the model boundary (kept importable here; they live in
`pytest_kedi.errors`). The interpreter wraps them in Kedi frames."""

from __future__ import annotations

from pytest_kedi.errors import ModelError, UnsupportedFeature

__all__ = ["ModelError", "UnsupportedFeature"]
