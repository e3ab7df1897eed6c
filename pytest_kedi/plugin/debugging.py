"""``--trace`` for test cases: pytest's debugger opens at the first line of the case's Python.

pytest's own ``--trace`` wraps a Python test function; a case has none, so the case's
compiled Python is recognised by the file name it is compiled under (seen by the compile
``transform``) and the debugger is started when that code is entered.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["TraceCase"]

_Transform = Callable[[Any, str], None]


class TraceCase:
    """A context manager that starts pytest's debugger in the case's own first frame.

    Use `transform` as the compile transform of the case, then run the case inside
    ``with``. Nothing is traced once the debugger has started (it traces from there on).
    """

    def __init__(self, transform: _Transform) -> None:
        self._inner = transform
        self._filenames: set[str] = set()
        self._previous: Any = None
        self._started = False

    def transform(self, tree: Any, filename: str) -> None:
        self._filenames.add(filename)
        self._inner(tree, filename)

    def _on_call(self, frame: types.FrameType, event: str, arg: object) -> Any:
        if event != "call" or self._started or frame.f_code.co_filename not in self._filenames:
            return None
        self._started = True
        from _pytest.debugging import pytestPDB

        debugger = pytestPDB._init_pdb("runcall")
        debugger.set_trace(frame)  # stops at the frame's first line
        return debugger.trace_dispatch

    def __enter__(self) -> TraceCase:
        self._previous = sys.gettrace()
        sys.settrace(self._on_call)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)  # the debugger does not step on into pytest-kedi
