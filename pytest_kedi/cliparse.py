"""``python -m pytest_kedi parse FILE...``: check that Kedi files parse, with the modules
they import (README "Command line"), and print one summary line per file."""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_kedi.cliargs import CliUsageError
from pytest_kedi.cliout import FAILED, OK, Console, render_error
from pytest_kedi.text import counted, is_kedi_program

if TYPE_CHECKING:
    from pytest_kedi.lang import nodes
    from pytest_kedi.lang.diagnostics import ImportSite

__all__ = ["parse_command"]

#: The folders pytest's collection does not enter (its default ``norecursedirs``, and
#: ``__pycache__``), which a directory's walk leaves out too, as it does virtual environments.
_SKIPPED_DIRS = (
    "*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}",
    "__pycache__",
)  # fmt: skip


def _skipped(root: str, name: str) -> bool:
    if any(fnmatch.fnmatch(name, pattern) for pattern in _SKIPPED_DIRS):
        return True
    path = os.path.join(root, name)
    return os.path.isfile(os.path.join(path, "pyvenv.cfg")) or os.path.isfile(
        os.path.join(path, "conda-meta", "history")
    )


def _walk(name: str, unreadable: list[OSError]) -> list[str]:
    found: list[str] = []
    for root, dirs, names in os.walk(name, onerror=unreadable.append):
        dirs[:] = [d for d in dirs if not _skipped(root, d)]
        found.extend(
            path
            for file in names
            if is_kedi_program(file) and not _special(path := os.path.join(root, file))
        )
    return found


def _expand_paths(paths: Sequence[str], console: Console) -> tuple[list[str], bool]:
    """Files as given; directories expand to their ``.kedi`` programs, sorted
    (``*.cache.kedi`` and ``package.kedi`` are not programs and are left out, and so are the
    folders pytest does not collect from: hidden ones, ``venv``, ``build`` ...).
    The flag is False when a directory held no program (reported on stderr)."""
    out: list[str] = []
    complete = True
    for name in paths:
        if os.path.isdir(name):
            unreadable: list[OSError] = []  # a directory that cannot be listed is not empty
            found = _walk(name, unreadable)
            for error in unreadable:
                console.error(f"cannot read {error.filename or name}: {error.strerror or error}")
                complete = False
            if not found and not unreadable:
                console.error(f"{name}: no .kedi files in this directory")
                complete = False
            out.extend(sorted(found))
        else:
            out.append(name)
    return out, complete


def _special(path: str) -> bool:
    """Whether ``path`` is a named pipe, socket or device: reading one may wait forever, so a
    directory's walk leaves it out, as pytest's collection does."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # a dangling link: reported as unreadable when read
        return False


def _imported_error(
    module: nodes.Module, sites: tuple[ImportSite, ...], seen: set[str]
) -> BaseException | None:
    """The first parse error of a module that ``module`` imports (directly or further on),
    with the ``> import:`` lines that led to it, innermost first; None when they all parse.
    A module missing or named by an invalid path is a load error, not checked here."""
    from pytest_kedi.lang import KediParseError, check_python, nodes, parse_file
    from pytest_kedi.lang.diagnostics import ImportSite
    from pytest_kedi.lang.syntax import is_identifier

    path = module.path or ""
    lines = module.lines or tuple(module.source.splitlines())
    for stmt in module.body:
        if not (isinstance(stmt, nodes.Directive) and stmt.name == "import"):
            continue
        segments = (stmt.arg or stmt.value or "").strip().split("/")
        if not all(map(is_identifier, segments)):
            continue
        target = os.path.join(os.path.dirname(path), *segments[:-1], segments[-1] + ".kedi")
        key = os.path.realpath(target)
        if key in seen or not os.path.isfile(target):
            continue
        seen.add(key)
        line = stmt.span.start_line
        here = (ImportSite(path, line, lines[line - 1] if line <= len(lines) else ""), *sites)
        try:
            imported = check_python(parse_file(target))
        except KediParseError as exc:
            for site in here:  # innermost first, as a program's load shows them
                exc = exc.imported_at(site)
            return exc
        except OSError:
            continue  # unreadable: told when the program loads it
        found = _imported_error(imported, here, seen)
        if found is not None:
            return found
    return None


def _cache_error(module: nodes.Module, name: str) -> BaseException | None:
    """The parse error of the ``prog.cache.kedi`` beside ``name`` when the program has an
    ``> auto:`` procedure, which reads it (pytest collects its generated tests then); None
    when it parses, or is not read."""
    from pytest_kedi.lang import KediParseError, check_python, parse_file

    if not any(proc.is_auto for proc in module.procedures):
        return None
    stem = name[: -len(".kedi")] if name.endswith(".kedi") else name
    cache = stem + ".cache.kedi"
    if not os.path.isfile(cache):
        return None
    try:
        check_python(parse_file(cache))
    except KediParseError as exc:
        return exc
    except OSError:
        return None  # unreadable: told when the program reads it
    return None


def parse_command(files: Sequence[str], console: Console) -> int:
    from pytest_kedi.lang import KediParseError, check_python, parse_file

    if not files:
        raise CliUsageError("parse needs at least one FILE")
    expanded, complete = _expand_paths(files, console)
    status = OK if complete else FAILED
    for name in expanded:
        try:
            module = check_python(parse_file(name))
        except KediParseError as exc:
            console.error(render_error(exc))
            status = FAILED
            continue
        except OSError as exc:
            console.error(f"cannot read {name}: {exc.strerror or exc}")
            status = FAILED
            continue
        imported = _imported_error(module, (), {os.path.realpath(name)})
        if imported is None:
            imported = _cache_error(module, name)
        if imported is not None:  # as a parse error of the file itself: no summary line
            console.error(render_error(imported))
            status = FAILED
            continue
        cases = sum(len(suite.cases) for suite in module.test_suites)
        console.print(
            f"{name}: {counted(len(module.procedures), 'procedure')}, "
            f"{counted(len(module.eval_suites), 'eval suite')}, {counted(cases, 'test case')}"
        )
    return status
