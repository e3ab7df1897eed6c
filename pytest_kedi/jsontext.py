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
    syntax, `ValueError` for those and for arrays or objects nested too deeply to read)."""
    try:
        return json.loads(text, parse_constant=_refuse)
    except RecursionError:  # Python's reader recurses per level: no report nests so deep
        raise ValueError("JSON nested too deeply") from None
