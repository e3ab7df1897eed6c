"""`loads`: JSON as the standard has it, for the reports pytest-kedi reads back.

Python's reader also takes ``NaN``, ``Infinity`` and ``-Infinity``, which no report
pytest-kedi writes holds (it writes with ``allow_nan=False``): read back, they would
break the numbers every reader relies on. Here they are a `ValueError` naming them.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads"]


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str) -> Any:
    """``json.loads(text)``, refusing ``NaN``/``Infinity`` (`json.JSONDecodeError` for bad
    syntax, `ValueError` for those)."""
    return json.loads(text, parse_constant=_refuse)
