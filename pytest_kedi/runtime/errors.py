"""Kedi execution errors (kept importable here; they live in `pytest_kedi.errors`)."""

from __future__ import annotations

from pytest_kedi.errors import (
    FRAME_KINDS,
    KediExecutionError,
    KediImportError,
    KediKeyExecutionError,
    KediModelError,
    KediNameError,
    KediPythonTrace,
    KediTraceFrame,
    KediTypeExecutionError,
    KediUnsupportedError,
    KediValueExecutionError,
    LoopIterationLimitError,
)

__all__ = [
    "FRAME_KINDS",
    "KediExecutionError",
    "KediImportError",
    "KediKeyExecutionError",
    "KediModelError",
    "KediNameError",
    "KediPythonTrace",
    "KediTraceFrame",
    "KediTypeExecutionError",
    "KediUnsupportedError",
    "KediValueExecutionError",
    "LoopIterationLimitError",
]
