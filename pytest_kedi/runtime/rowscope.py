"""`RowScope`: what one eval row's execution collects, whoever runs it.

The suite runner (`pytest_kedi.evals.runner`) enters a fresh scope around each row
(`entered`); code below it reads the scope of the row it is running in with `current()`
(``None`` outside a row: test cases, plain program runs, dataset loading). The scope is a
context variable of the row's thread, so a model request submitted to the session's model
loop must read it in the calling thread (in `ModelBoundary`) and carry it along.

What lives here, and who writes it:

* ``repeat``: which repetition of the row this is (0-based); part of every cassette key.
* ``outputs``: short reprs (`short_repr`) of the suite procedure's return values during
  the row, one per outermost call (a recursive call inside it is not recorded again);
  written by `pytest_kedi.runtime.procedures.KediProcedure`, which sets ``output_depth``
  while such a call runs.
* ``calls``: with tracing on, one `ModelCallTrace` per model call the row made.
* ``retries``: transient model failures retried at the model boundary.
* ``requests``/``input_tokens``/``output_tokens``: model usage summed over the row.
* ``seen``: how many times the row sent each cassette request so far, by its first
  occurrence's key (`pytest_kedi.runtime.model.cassettes`): the n-th identical request
  has its own cassette entry. A test case, a program run and a dataset's load count their
  requests alike outside any row (`counting`); `request_counts` gives the counter in use.
  A lazy top-level binding's evaluation and a file's or imported module's load count theirs
  apart, as in no row's repeat (`apart`), whichever row, case or run makes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import cast

from pytest_kedi.runtime.usererrors import user_error
from pytest_kedi.text import truncate

__all__ = [
    "REPR_LIMIT",
    "ModelCallTrace",
    "RowScope",
    "apart",
    "counting",
    "current",
    "enter",
    "enter_outside",
    "entered",
    "leave",
    "outside",
    "request_counts",
    "short_repr",
]

REPR_LIMIT = 200


def short_repr(value: object, limit: int = REPR_LIMIT) -> str:
    """`repr(value)` cut to at most `limit` characters (never raises)."""
    try:
        text = repr(value)
    except BaseException as exc:  # a user object with a broken __repr__
        if not user_error(exc):
            raise
        text = f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"
    return text if len(text) <= limit else truncate(text, limit)


@dataclass(frozen=True, slots=True)
class ModelCallTrace:
    """One model call made during a row (recorded with tracing on)."""

    model: str
    prompt: str
    instructions: str | None
    answer: str
    input_tokens: int
    output_tokens: int
    duration_s: float


@dataclass(slots=True, init=False)
class RowScope:
    """The mutable collector of one row (see the module docstring)."""

    repeat: int
    trace: bool
    outputs: list[str]
    calls: list[ModelCallTrace]
    retries: int
    requests: int
    input_tokens: int
    output_tokens: int
    output_depth: int  # 1 while a recorded call of the suite procedure runs, else 0
    seen: dict[str, int]  # requests sent so far, by the key of their first occurrence

    def __init__(self, repeat: int = 0, trace: bool = False) -> None:
        # Written out: one scope is made per row, and this is half the generated one's cost.
        self.repeat = repeat
        self.trace = trace
        self.outputs = []
        self.calls = []
        self.retries = self.requests = self.input_tokens = self.output_tokens = 0
        self.output_depth = 0
        self.seen = {}


_CURRENT: ContextVar[RowScope | None] = ContextVar("kedi_row_scope", default=None)


#: ``current()``: the scope of the row running in this thread, or ``None`` outside a row
#: (the context variable's own method: no Python call on the per-call hot path).
current: Callable[[], RowScope | None] = _CURRENT.get


@contextmanager
def entered(scope: RowScope) -> Iterator[RowScope]:
    """Make ``scope`` the current row scope for the duration of the block."""
    token = _CURRENT.set(scope)
    try:
        yield scope
    finally:
        _CURRENT.reset(token)


#: ``enter(scope) -> token``: make ``scope`` current until ``leave(token)`` restores the
#: scope that was current before (`entered` without a context manager, for the suite
#: runner's per-row hot path; the context variable's own methods).
enter: Callable[[RowScope], Token[RowScope | None]] = _CURRENT.set
leave: Callable[[Token[RowScope | None]], None] = _CURRENT.reset


#: Outside a row: the request counter of the test case, program run or dataset load in
#: progress, and what it is (``"@test: case"`` ...), or ``None``.
_OTHER: ContextVar[tuple[dict[str, int], str] | None] = ContextVar(
    "kedi_request_counts", default=None
)
#: ``outside()``: `_OTHER`'s value (what a request made on the model loop carries along)
outside: Callable[[], tuple[dict[str, int], str] | None] = _OTHER.get
#: ``enter_outside(counter)``: make ``counter`` (as `outside` gives it) current
enter_outside: Callable[
    [tuple[dict[str, int], str] | None], Token[tuple[dict[str, int], str] | None]
] = _OTHER.set


class _Apart(dict[str, int]):
    """The request counter of a block counted `apart`, and what the block is."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what


def request_counts() -> tuple[dict[str, int], str] | None:
    """The counter of the requests sent so far in the current row (``RowScope.seen``), else
    in the current test case, program run or dataset load, with what it counts (``"row"``,
    ``"@test: case"`` ...); ``None`` outside all of them (every request is then a first one)."""
    scope = _CURRENT.get()
    if scope is None:
        return _OTHER.get()
    seen = scope.seen
    if type(seen) is dict:
        return seen, "row"
    return seen, cast("_Apart", seen).what  # a block counted `apart` in the row


@contextmanager
def counting(what: str) -> Iterator[None]:
    """Count the requests sent in the block on their own (``what``: a test case, a program
    run, a dataset load); a row inside it counts its own."""
    token = _OTHER.set(({}, what))
    try:
        yield
    finally:
        _OTHER.reset(token)


@contextmanager
def apart(what: str) -> Iterator[None]:
    """Count the requests sent in the block on their own, as in no row's repeat (index 0),
    whoever runs it (``what``: a lazy top-level binding's evaluation,
    docs/language.md#lazy-bindings, or a file's or imported module's load). Each runs once,
    in whichever row, case or run first needs it, which differs with the tests selected,
    their order and pytest-xdist's workers: its cassette keys do not. In a row, the row's
    repeat index and counter are set aside for the block; its usage, retries and traced
    calls still go to the row."""
    scope = _CURRENT.get()
    if scope is None:
        token = _OTHER.set(({}, what))
        try:
            yield
        finally:
            _OTHER.reset(token)
        return
    repeat, seen = scope.repeat, scope.seen
    scope.repeat, scope.seen = 0, _Apart(what)
    try:
        yield
    finally:
        scope.repeat, scope.seen = repeat, seen
