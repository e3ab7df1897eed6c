"""The per-file program cache of one pytest process, and the session's stash key.

Each ``.kedi`` file is loaded once per process, in validate mode; every suite and case
of the file shares that program (Kedi's shared runtime). A failed load is cached too,
so every item of the file reports the same located error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_kedi.constants import HOOK_NOTE, TEST_MODEL

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.plugin.session import KediSession
    from pytest_kedi.runtime import Program
    from pytest_kedi.runtime.model.loop import ModelLoop

__all__ = [
    "SESSION_KEY",
    "TEST_MODEL",
    "LoadedProgram",
    "ProgramCache",
    "ProgramLoadError",
    "kedi_session",
]


class ProgramLoadError(Exception):
    """A ``.kedi`` file could not be loaded; ``text`` is the user-facing diagnostic."""

    def __init__(
        self, text: str, message: str, location: str | None = None, *, usage: bool = False
    ) -> None:
        super().__init__(text)
        self.text = text
        self.message = message  # one line: "<ExceptionType>: <message>"
        self.location = location  # "path:line" of the failure, when known
        self.usage = usage  # a configuration mistake (the run exits with a usage error)

    @property
    def where(self) -> tuple[str | None, int | None]:
        """The failure's file and line (``location`` split), or ``(None, None)``."""
        if self.location is None:
            return None, None
        path, _, line = self.location.rpartition(":")
        return (path, int(line)) if path and line.isdigit() else (None, None)

    def summary(self) -> str:
        """One line for reports: ``the program failed to load at f.kedi:2: <Type>: <msg>``."""
        if self.usage:
            return self.message
        at = f" at {self.location}" if self.location else ""
        return f"the program failed to load{at}: {self.message}"


@dataclass(frozen=True, slots=True)
class LoadedProgram:
    program: Program
    model_label: str  # what answers the file's templates by default
    synthetic: bool  # the offline `test` model is that default


@dataclass
class ProgramCache:
    """Each ``.kedi`` file's program, loaded once per process (owned by `KediSession`)."""

    config: pytest.Config
    default_model: str | None  # the configured ``--kedi-model`` (None: the offline model)
    debug: bool = False  # ``--kedi-debug``: show the traceback of an internal parser error
    usage_errors: list[str] = field(default_factory=list)  # e.g. a hook returned no model
    #: the model policy of a program loaded from a path (cassettes, retries, budget)
    model_policy: Callable[[Path], Any] | None = None
    _programs: dict[Path, LoadedProgram | ProgramLoadError] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _model_loop: ModelLoop | None = None
    _loop_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def model_loop(self) -> ModelLoop:
        """The one event loop every model request of this process runs on, made when the
        first program loads (a run that loads none never imports the model layer)."""
        with self._loop_lock:
            if self._model_loop is None:
                from pytest_kedi.runtime.model.loop import ModelLoop

                self._model_loop = ModelLoop()
            return self._model_loop

    def close_model_loop(self) -> None:
        """Close the model loop, if one was made (at the end of the session)."""
        with self._loop_lock:
            loop = self._model_loop
        if loop is not None:
            loop.close()

    def release(self) -> None:
        """Take every loaded program apart and forget it (`Program.release`): at the end
        of the session, so that pytest's closing garbage collections and the
        interpreter's exit do not walk them. A program asked for later loads again."""
        with self._lock:
            loaded = [p for p in self._programs.values() if isinstance(p, LoadedProgram)]
            self._programs.clear()
        if loaded:
            from pytest_kedi.runtime.program import release_programs

            release_programs(entry.program for entry in loaded)

    def default_model_label(self) -> tuple[str, bool]:
        """The configured default model (no hook involved) and whether it is synthetic."""
        name = self.default_model or TEST_MODEL
        return name, name == TEST_MODEL

    def model_calls(self) -> dict[str, int]:
        """Model calls made in this process so far, per resolved model name."""
        with self._lock:
            loaded = [p for p in self._programs.values() if isinstance(p, LoadedProgram)]
        totals: dict[str, int] = {}
        for entry in loaded:
            for name, count in entry.program.model_calls().items():
                totals[name] = totals.get(name, 0) + count
        return totals

    def model_calls_of(self, path: Path) -> dict[str, int]:
        """The model calls the program loaded from ``path`` made so far (none loaded: {})."""
        entry = self._programs.get(path)
        return entry.program.model_calls() if isinstance(entry, LoadedProgram) else {}

    def program_for(self, path: Path, node: pytest.Item) -> LoadedProgram:
        """Load ``path`` once per process (validate mode; ``node``'s hooks asked for its
        model); raise `ProgramLoadError`."""
        with self._lock:
            cached = self._programs.get(path)
            if cached is None:
                cached = self._load(path, node.ihook)
                self._programs[path] = cached
        if isinstance(cached, ProgramLoadError):
            raise cached
        return cached

    def _load(self, path: Path, ihook: Any) -> LoadedProgram | ProgramLoadError:
        from pytest_kedi.evals import describe_exception
        from pytest_kedi.evals.classify import exception_location, relative_locations
        from pytest_kedi.lang import KediParseError
        from pytest_kedi.runtime import errors, load
        from pytest_kedi.runtime.model.names import describe_model
        from pytest_kedi.runtime.pyerrors import python_error
        from pytest_kedi.runtime.usererrors import failed_outcome
        from pytest_kedi.text import display_path

        injected = ihook.pytest_kedi_model(config=self.config)
        problem = _not_a_model(injected)
        if problem is not None:
            self.usage_errors.append(problem)
            return ProgramLoadError(problem, problem, usage=True)
        if injected is not None:
            label, synthetic = f"{describe_model(injected)} ({HOOK_NOTE})", False
        else:
            label, synthetic = self.default_model_label()
        try:
            program = load(
                path,
                mode="validate",
                model=injected,
                default_model=self.default_model,
                model_loop=self.model_loop,
                model_policy=self.model_policy(path) if self.model_policy else None,
                code_store=kedi_session(self.config).disk_caches[1],
                python_checked=True,  # by the collection of the file (`collect`)
            )
        except KediParseError as exc:
            where = f"{display_path(exc.path)}:{exc.line}"
            return ProgramLoadError(
                relative_locations(exc.render(debug=self.debug)),
                f"KediParseError: {exc.message}",
                where,
            )
        except BaseException as exc:
            if not isinstance(exc, errors.KediExecutionError):
                if not failed_outcome(exc):  # pytest.skip() skips the file's items
                    raise
                exc = python_error(exc)  # pytest.fail(): a load failure like any other
            located = exc.frames or exc.python_traces
            return ProgramLoadError(
                relative_locations(exc.render()) if located else describe_exception(exc),
                describe_exception(exc),
                exception_location(exc),
            )
        return LoadedProgram(program=program, model_label=label, synthetic=synthetic)


def _not_a_model(value: object) -> str | None:
    """Why a ``pytest_kedi_model`` result is unusable, or None when it is fine."""
    if value is None:  # the usual answer: no need to import pydantic-ai to check it
        return None
    from pydantic_ai.models import Model

    if isinstance(value, Model):
        return None
    if isinstance(value, str) and value.strip():
        return None
    from pytest_kedi.runtime.rowscope import short_repr  # the hook's object: repr may raise

    return (
        f"pytest_kedi_model hook returned {short_repr(value)} ({type(value).__name__}); expected a "
        "pydantic-ai Model, a model name such as 'openai:gpt-4o', or None"
    )


SESSION_KEY = pytest.StashKey["KediSession"]()


def kedi_session(config: pytest.Config) -> KediSession:
    """The plugin's session object of ``config`` (set in ``pytest_configure``)."""
    return config.stash[SESSION_KEY]
