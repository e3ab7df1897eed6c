"""`ModelLoop`: the one event loop that runs every model request of its owner.

Row threads (and the main thread) submit coroutines to a background thread running one
asyncio loop, so provider HTTP clients and connection pools are shared, a cancelled row's
request is cancelled on the loop, and the loop is closed once, by its owner:

* the pytest session (the plugin's session state creates one and closes it when the
  session ends),
* a CLI invocation,
* a `Runtime` made by `pytest_kedi.runtime.load` without one (closed when the runtime is
  garbage-collected or at interpreter exit).

`close()` cancels pending requests, closes the clients of the models the loop adopted,
stops the thread and closes the loop; the next `run()` starts a fresh loop (so `close`
doubles as a reset). Calling from a thread that already runs an event loop (a Kedi
procedure called from an ``async def`` test) is fine: the call blocks that thread while
the request runs on this loop. The calling row's `RowScope` is carried onto the loop with
its request (outside a row, the request counter of the calling test case or program run,
`rowscope.counting`), so wrappers of the model (cassettes, retries) read the row they serve.
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pytest_kedi.errors import ModelError
from pytest_kedi.runtime import rowscope
from pytest_kedi.runtime.cancel import Cancelled, checkpoint, current

if TYPE_CHECKING:  # imported where a loop starts: a run without model calls never imports it
    import asyncio

__all__ = ["ModelLoop"]

T = TypeVar("T")

#: seconds `close()` waits for cancelled requests and closing clients to finish
_SHUTDOWN_GRACE = 10.0


class ModelLoop:
    """A background event loop thread that model calls are submitted to."""

    def __init__(self, name: str = "kedi-model-loop") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        #: the identifier of the loop's thread while it runs (`threading.get_ident`)
        self.thread_id: int | None = None
        self._closers: list[Callable[[], Awaitable[object]]] = []
        self._calls: set[_Call[Any]] = set()
        #: bumped whenever a fresh loop starts: resources made for an older loop are stale
        self.generation = 0

    # ------------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        return self._loop is not None

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                import asyncio

                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=_serve, args=(loop,), name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread, self.thread_id = loop, thread, thread.ident
                self.generation += 1
            return self._loop

    def in_loop_thread(self) -> bool:
        return self.thread_id == threading.get_ident()

    def adopt(self, closer: Callable[[], Awaitable[object]]) -> None:
        """Run ``await closer()`` on the loop when it closes (e.g. close an HTTP client)."""
        with self._lock:
            self._closers.append(closer)

    def close(self) -> None:
        """Cancel pending requests, run the closers, stop the thread, close the loop."""
        with self._lock:
            loop, thread, closers = self._loop, self._thread, self._closers
            self._loop, self._thread, self._closers = None, None, []
            self.thread_id = None
            calls, self._calls = self._calls, set()
        if loop is None or thread is None:
            return
        if thread is threading.current_thread():  # pragma: no cover - misuse
            raise RuntimeError("a ModelLoop cannot be closed from its own thread")
        if thread.is_alive() and not loop.is_closed():
            import asyncio
            import concurrent.futures

            shutdown = asyncio.run_coroutine_threadsafe(_shutdown(loop, closers), loop)
            try:
                shutdown.result(_SHUTDOWN_GRACE)
            except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
                pass
            loop.call_soon_threadsafe(loop.stop)
            thread.join(_SHUTDOWN_GRACE)
        if not thread.is_alive():
            for call in calls:  # submitted while the loop shut down: they never ran
                call.abandon()
            loop.close()

    def __enter__(self) -> ModelLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ calls
    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for its result in the calling thread.

        When the calling thread's work is cancelled (`pytest_kedi.runtime.cancel`), the
        request is cancelled on the loop and `Cancelled` is raised here.
        """
        try:
            checkpoint()
            if self.in_loop_thread():
                raise ModelError("a model call cannot be made from inside a model call")
            loop = self._ensure()
        except BaseException:
            coro.close()
            raise
        # The row's scope follows its request onto the loop (the task's own context, not a
        # wrapper coroutine: a wrapper closed before it started would leave ``coro``
        # never awaited).
        scope = rowscope.current()
        call: _Call[T] = _Call(coro, scope, rowscope.outside() if scope is None else None)
        with self._lock:
            self._calls.add(call)
        try:
            loop.call_soon_threadsafe(call.start, loop)
        except RuntimeError:  # the loop closed between `_ensure` and here
            with self._lock:
                self._calls.discard(call)
            coro.close()
            raise ModelError("the model call was cancelled (the model loop closed)") from None
        token = current()
        remove = None
        if token is not None:
            remove = token.on_cancel(lambda: _call_soon(loop, call.cancel))
        try:
            call.done.acquire()
        finally:
            if remove is not None:
                remove()
            with self._lock:
                self._calls.discard(call)
        if call.cancelled:
            if token is not None and token.cancelled:
                raise Cancelled(token.reason)
            raise ModelError("the model call was cancelled (the model loop closed)")
        if call.error is not None:
            raise call.error
        return call.result  # type: ignore[return-value]

    def close_at_exit(self, owner: object) -> None:
        """Close this loop when ``owner`` is garbage-collected or the interpreter exits."""
        weakref.finalize(owner, self.close)


class _Call(Generic[T]):
    """One coroutine submitted from another thread; the caller waits on ``done``.

    Lighter than ``asyncio.run_coroutine_threadsafe`` (no `concurrent.futures.Future`
    and no chained callback: one loop iteration less per call). `start` and `cancel`
    run on the loop; `abandon` runs after the loop thread stopped.
    """

    __slots__ = (
        "cancelled",
        "coro",
        "counts",
        "done",
        "error",
        "finished",
        "result",
        "scope",
        "task",
    )

    def __init__(
        self,
        coro: Coroutine[Any, Any, T],
        scope: rowscope.RowScope | None,
        counts: tuple[dict[str, int], str] | None = None,
    ) -> None:
        self.coro = coro
        self.scope = scope
        #: outside a row: the request counter of the caller's case or run
        self.counts = counts
        self.done = threading.Lock()
        self.done.acquire()
        self.task: asyncio.Task[T] | None = None
        self.result: T | None = None
        self.error: BaseException | None = None
        self.cancelled = False
        self.finished = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.finished:
            return
        if self.cancelled:  # cancelled before it started
            self.coro.close()
            self._finish()
            return
        if self.scope is not None:
            context = contextvars.copy_context()
            context.run(rowscope.enter, self.scope)
            task = loop.create_task(_contained(self.coro), context=context)
        elif self.counts is not None:
            context = contextvars.copy_context()
            context.run(rowscope.enter_outside, self.counts)
            task = loop.create_task(_contained(self.coro), context=context)
        else:
            task = loop.create_task(_contained(self.coro))
        self.task = task
        task.add_done_callback(self._done)

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
        else:
            self.cancelled = True

    def _done(self, task: asyncio.Task[T]) -> None:
        self.coro.close()  # never started when the task was cancelled at once; else a no-op
        if task.cancelled():
            self.cancelled = True
        else:
            error = task.exception()
            if error is None:
                self.result = task.result()
            else:
                self.error = error.escaped if isinstance(error, _Escaped) else error
        self._finish()

    def _finish(self) -> None:
        if not self.finished:
            self.finished = True
            self.done.release()

    def abandon(self) -> None:
        if self.finished:
            return
        if self.task is None:
            self.coro.close()
        self.cancelled = True
        self._finish()


class _Escaped(Exception):
    """Carries a `SystemExit` or `KeyboardInterrupt` raised by a model (a `FunctionModel`
    calling ``sys.exit()``) to the calling thread: raised as itself inside the loop it
    would stop the loop thread, and every waiting call with it."""

    def __init__(self, escaped: BaseException) -> None:
        super().__init__(type(escaped).__name__)
        self.escaped = escaped


async def _contained(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _Escaped(exc) from None


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    """``callback()`` on ``loop`` soon; nothing if the loop has closed."""
    try:
        loop.call_soon_threadsafe(callback)
    except RuntimeError:
        pass


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    import asyncio

    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        asyncio.set_event_loop(None)


async def _shutdown(
    loop: asyncio.AbstractEventLoop, closers: list[Callable[[], Awaitable[object]]]
) -> None:
    import asyncio

    me = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks(loop) if task is not me]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    for closer in closers:
        try:
            await closer()
        except Exception:
            pass
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()
