"""Row-error text and error classes (dsxir-style), without any pytest import.

Error-class mapping for a row that raised (first match wins):

* ``cassette_miss`` -- a `KediModelError` caused by a `CassetteMiss`: under
  ``--kedi-record-mode strict`` a model call had no recorded answer;
* ``budget``    -- a `KediModelError` caused by `BudgetExhausted`: the run's
  ``--kedi-max-requests`` were spent before the call;
* ``model``     -- any other `KediModelError` (adapter, provider or model-output failure)
  anywhere in the error's ``.original`` chain, or a raw ``pydantic_ai`` exception;
* ``type``      -- a `KediTypeExecutionError` whose ``.original`` is ``None``: Kedi's own
  strict validation rejected a value (parameter, return, typed assignment, model field);
* ``procedure`` -- the error's frames include a ``procedure`` frame: it was raised inside a
  procedure the metric called;
* ``metric``    -- anything else raised by the metric body itself (``KeyError`` on
  ``expected``, a failing ``assert``, a metric result of the wrong shape, ...).

Two classes are assigned by the runner, not by this mapping: ``timeout`` (the row
exceeded `EvalOptions.timeout`) and ``invalid_score`` (NaN or an infinite score).

Row feedback is Kedi's ``error: <ExceptionType>: <message>`` where the type is the
original exception's class (`KediExecutionError.kind_name`) and the message is kept on
one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from pytest_kedi.errors import (
    KediExecutionError,
    KediModelError,
    KediTypeExecutionError,
    ModelError,
)
from pytest_kedi.text import display_path, message_text

__all__ = [
    "ERROR_CLASSES",
    "classify_exception",
    "describe_exception",
    "exception_location",
    "relative_locations",
]

ERROR_CLASSES = (
    "metric",
    "procedure",
    "type",
    "model",
    "timeout",
    "invalid_score",
    "cassette_miss",
    "budget",
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then each nested ``.original`` of Kedi errors (outermost first)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.original if isinstance(current, KediExecutionError) else None


def classify_exception(exc: BaseException) -> str:
    """The error class of a row that raised `exc` (see the module docstring)."""
    chain = list(_chain(exc))
    for err in chain:
        if isinstance(err, KediModelError):
            cause = err.__cause__
            return cause.error_class if isinstance(cause, ModelError) else "model"
        module = type(err).__module__  # user code may set any value, even None
        pydantic_ai = isinstance(module, str) and module.startswith("pydantic_ai")
        if pydantic_ai and not isinstance(err, KediExecutionError):
            return "model"
    for err in chain:
        if isinstance(err, KediTypeExecutionError) and err.original is None:
            return "type"
    for err in chain:
        if isinstance(err, KediExecutionError) and any(
            getattr(frame, "kind", None) == "procedure" for frame in err.frames
        ):
            return "procedure"
    return "metric"


def describe_exception(exc: BaseException) -> str:
    """``<ExceptionType>: <message>`` on one line (the innermost Kedi error's original)."""
    inner = exc
    while isinstance(inner, KediExecutionError) and isinstance(inner.original, KediExecutionError):
        inner = inner.original
    if isinstance(inner, KediExecutionError):
        kind = inner.kind_name
        original = inner.original
        # The Kedi error's own message is the text only when it wraps no exception; an
        # original raised without a message reads `ValueError: ` (docs/language.md#scoring).
        message = relative_locations(inner.message) if original is None else message_text(original)
    else:
        kind = type(inner).__name__
        message = message_text(inner)
    return f"{kind}: {message}"


#: a `.kedi` file or its `.kedi.optimized.json` prompts (docs/language.md#model-directives)
_KEDI_SUFFIX = r"\.kedi(?:\.optimized\.json)?"
_ABSOLUTE_KEDI_PATH = re.compile(
    r"""(?<![\w.])((?:[A-Za-z]:)?[\\/][^\s:'"]*""" + _KEDI_SUFFIX + r""")(?=:\d|", line \d|: )"""
)
#: the rest of a `.kedi` path after the working directory's (which it starts with)
_KEDI_PATH_BELOW = r"""([^\n:'"]*?""" + _KEDI_SUFFIX + r""")(?=:\d|", line \d|: )"""


def relative_locations(text: str) -> str:
    """Kedi's messages and stack traces with their absolute ``/abs/file.kedi:LINE`` (and
    ``File "/abs/file.kedi", line N``) locations shown like `display_path` (relative to
    the working directory when inside it), so reports do not depend on where the
    project is checked out."""
    if ".kedi" not in text:
        return text
    try:
        inside = os.path.join(os.getcwd(), "")
    except OSError:  # the working directory was deleted: no path is below it
        inside = None
    # below the working directory, spaces and all ("/ci/My Job/x.kedi")
    if inside is not None and inside in text:
        below = re.escape(inside) + _KEDI_PATH_BELOW
        text = re.sub(below, lambda match: match.group(1), text)
    return _ABSOLUTE_KEDI_PATH.sub(lambda match: display_path(match.group(1)), text)


def exception_location(exc: BaseException) -> str | None:
    """``path:line`` of the innermost located `.kedi` position of a Kedi error or, for an
    exception that reached the row as it was raised (a pytest outcome: ``pytest.skip()``,
    ``pytest.fail()``), of its traceback's innermost `.kedi` line; None when there is none."""
    for err in reversed(list(_chain(exc))):
        if not isinstance(err, KediExecutionError):
            continue
        span = err.span
        line = err.line
        if span is not None and line is not None:
            return f"{display_path(span.path)}:{line}"
    found = None
    tb = exc.__traceback__
    while tb is not None:  # embedded Python is compiled with its `.kedi` file and lines
        path = tb.tb_frame.f_code.co_filename
        if path.endswith(".kedi"):
            found = f"{display_path(path)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found
