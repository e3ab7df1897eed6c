"""The Python module a loaded `.kedi` file's embedded Python belongs to (docs/language.md
#python): a real module in `sys.modules` whose ``__dict__`` is the prelude's globals, so
that what Python finds through the ``__module__`` of a class or function the file defines
(`dataclasses` with string annotations, `typing.get_type_hints`, `pickle`, `copy`) is the
file's own names, as for a ``.py`` module.

Its name is the same for a file in every process (``__kedi_prelude__`` with the file's
name and a digest of its real path), so an object pickled by one process unpickles in
another that loaded the same file (a pytest-xdist worker, a forked child); a second
program of a file loaded while the first is (a name taken) gets ``_2``, ``_3`` ... It is
registered while its program is: `Program.release`, a load that fails and the program's
garbage collection remove it, so `sys.modules` never keeps a dropped program alive.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import threading
import types
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = [
    "PREFIX",
    "drop_modules",
    "module_name",
    "new_module",
    "program_modules",
    "without_digests",
]

#: what every such module's name starts with (a warnings filter's module regex may use it)
PREFIX = "__kedi_prelude__"

#: A program's registered modules: ``(name, module)`` for its file and each it imports.
Owned = list[tuple[str, types.ModuleType]]

T = TypeVar("T")

#: Programs load, and modules import, on several threads at once. Reentrant: a garbage
#: collection while it is held may run a dropped program's finalizer (`drop_modules`).
_LOCK = threading.RLock()


def module_name(path: str) -> str:
    """``__kedi_prelude__<file name>_<8 hex digits>``: the file's name without ``.kedi``,
    any character but an ASCII letter, digit or ``_`` made ``_`` (a dot would make
    `pickle` import a parent package), and a digest of its real path (same-named files
    in other folders differ)."""
    return _name(os.path.abspath(path))


#: a module name's digest and load count (`module_name`, `new_module`) where it stands in text
_DIGEST = re.compile(rf"({PREFIX}\w*)_[0-9a-f]{{8}}(?:_\d+)?(?!\w)")


def without_digests(text: str) -> str:
    """``text`` with each module name of a file's Python left as ``__kedi_prelude__<file
    name>``: its digest of the file's real path (and its load count) differ from machine to
    machine, and what a model is sent (a JSON schema's definition names) must not."""
    return _DIGEST.sub(r"\1", text) if PREFIX in text else text


@functools.lru_cache(maxsize=4096)
def _name(path: str) -> str:
    """`module_name` of an absolute path (worked out once per file a process loads)."""
    stem = re.sub(r"\W", "_", os.path.basename(path).removesuffix(".kedi"), flags=re.ASCII)
    real = _realpath(path).encode("utf-8", "surrogatepass")
    return f"{PREFIX}{stem}_{hashlib.sha1(real, usedforsecurity=False).hexdigest()[:8]}"


def _realpath(path: str) -> str:
    """`os.path.realpath` of an absolute, normalized path, its folder's resolved once per
    process (`_real_folder`): the files of a folder then cost one ``lstat`` each, not one
    per component of the path (a thousand files took 14 ms). A file that is a symbolic
    link is resolved in full, as `os.path.realpath` does; so is every path on Windows,
    whose `os.path.realpath` also gives a file name the case it has on disk."""
    folder, name = os.path.split(path)
    if os.name != "posix" or not name or os.path.islink(path):
        return os.path.realpath(path)
    return os.path.join(_real_folder(folder), name)


@functools.lru_cache(maxsize=256)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def new_module(path: str, owned: Owned) -> dict[str, Any]:
    """Register a new module for the file at ``path`` (recorded in ``owned``, whose
    program removes it; its ``__file__`` the file's absolute path); its ``__dict__``, the
    globals the file's prelude runs in."""
    base = module_name(path)
    with _LOCK:
        name, count = base, 1
        while name in sys.modules:
            count += 1
            name = f"{base}_{count}"
        module = types.ModuleType(name)
        module.__file__ = os.path.abspath(path)
        sys.modules[name] = module
    owned.append((name, module))
    return module.__dict__


def drop_modules(owned: Owned) -> None:
    """Remove the modules in ``owned`` from `sys.modules` (each still registered as
    itself: a name released earlier may serve a newer program by now)."""
    with _LOCK:
        for name, module in owned:
            if sys.modules.get(name) is module:
                del sys.modules[name]
        owned.clear()


@contextmanager
def program_modules(owned: Owned) -> Iterator[Callable[[T], T]]:
    """Around a program's load: the modules in ``owned`` are dropped if the block raises,
    and when the program given to the function it gives (which returns it) is
    garbage-collected. Only the program is watched: the modules' globals may hold its
    procedures, and so its runtime, but nothing holds the program itself."""

    def adopt(program: T) -> T:
        weakref.finalize(program, drop_modules, owned)
        return program

    try:
        yield adopt
    except BaseException:
        drop_modules(owned)
        raise
