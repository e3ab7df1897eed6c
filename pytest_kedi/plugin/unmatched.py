"""``kedi_min_scores`` patterns that gate nothing: warned about once per run.

A pattern is judged against the eval suites the run collected and, when it names a file
the run did not collect or a suite the run did not select (an IDE running one suite,
``-k``, ``--kedi-shard``), against the suites that file defines: a gate on a suite this
run did not select is not a typo, and a subset run must not fail under ``-W error``.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from pytest_kedi.fileread import is_file
from pytest_kedi.plugin.settings import KediSettings

__all__ = ["UnmatchedGates"]

#: files on disk a wildcard pattern is judged against, at most (a subset run)
_FILES = 200


def _is_eval_id(nodeid: str) -> bool:
    """``path/file.kedi::eval:<suite>`` (the node id of an ``@eval:`` item)."""
    parts = nodeid.split("::")
    return len(parts) == 2 and parts[0].endswith(".kedi") and parts[1].startswith("eval:")


class UnmatchedGates:
    """Warns once (on the xdist controller, or the only process) about ``kedi_min_scores``
    patterns that match no eval suite: a gate that silently gates nothing.

    Nothing is said when no eval suite was collected at all (e.g. a run of Python tests).
    """

    def __init__(self, config: pytest.Config, settings: KediSettings) -> None:
        self.config = config
        self.settings = settings
        self.checked = False

    def check(self, nodeids: Iterable[str]) -> None:
        """Called with the collected node ids (under xdist every worker collects the same
        ids: the first worker's are enough)."""
        if self.checked:
            return
        self.checked = True
        ids = list(nodeids)
        suites = [nodeid for nodeid in ids if _is_eval_id(nodeid)]
        if not suites:
            return
        matches = self.settings.pattern_matches
        unmatched = [
            pattern
            for pattern, _ in self.settings.min_scores
            if not any(matches(pattern, nodeid) for nodeid in suites)
            and not self._defined(pattern, ids)
        ]
        if not unmatched:
            return
        bases = [f"the rootdir {self.settings.rootdir}"]
        if self.settings.ini_dir is not None and self.settings.ini_dir != self.settings.rootdir:
            bases.append(f"the ini file's directory {self.settings.ini_dir}")
        message = (
            "kedi_min_scores: no eval suite matches "
            + ", ".join(repr(pattern) for pattern in unmatched)
            + f" (node ids are matched relative to {' and to '.join(bases)})"
        )
        try:
            _warn_at(self.config, pytest.PytestConfigWarning(message), unmatched[0])
        except pytest.PytestConfigWarning:  # -W error: a usage error, not a traceback
            raise pytest.UsageError(message) from None

    def _defined(self, pattern: str, ids: list[str]) -> bool:
        """Whether ``pattern`` names a suite defined in a file (collected or on disk) that
        this run did not select."""
        path_part, sep, _ = pattern.partition("::")
        if not sep:
            return False
        settings = self.settings
        files = {nodeid.partition("::")[0] for nodeid in ids}
        candidates = {
            file
            for file in files
            if any(fnmatch.fnmatchcase(name, path_part) for name in settings.suite_ids(file))
        }
        rootdir = settings.rootdir
        if not candidates:  # files this run did not collect: those on disk
            for base in {rootdir, settings.ini_dir} - {None}:
                assert base is not None
                if glob.has_magic(path_part):
                    found = glob.glob(path_part, root_dir=base, recursive=True)[:_FILES]
                else:
                    found = [path_part] if is_file(base / path_part) else []
                candidates.update(
                    Path(os.path.relpath(base / name, rootdir)).as_posix() for name in found
                )
            if not candidates:
                return False  # no such file: a typo
        for file in candidates:
            names = _eval_names(rootdir / file if rootdir is not None else Path(file))
            if names is None:
                return True  # the file's own error is reported
            if any(settings.pattern_matches(pattern, f"{file}::eval:{name}") for name in names):
                return True
        return False


def _eval_names(path: Path) -> list[str] | None:
    """The names of the eval items of the ``.kedi`` file at ``path`` (None: unreadable)."""
    from pytest_kedi.lang import KediParseError, parse_file
    from pytest_kedi.plugin.collect import eval_item_names
    from pytest_kedi.plugin.outline import outline_of

    try:
        module = parse_file(path)
    except (KediParseError, OSError, UnicodeDecodeError):
        return None
    return eval_item_names(outline_of(module))


def _warn_at(config: pytest.Config, warning: Warning, pattern: str) -> None:
    """Issue ``warning`` through pytest (`pytest.Config.issue_config_time_warning`: its
    filters, its warnings summary) located at the configuration file's line that holds
    ``pattern``, which the summary then shows, as it shows the line of code that gave a
    warning. A pattern no configuration file holds (``-o kedi_min_scores=...``) is located at
    ``-o kedi_min_scores``, never at a pytest-kedi source line."""
    path, line = _line_of(config.inipath, pattern) or ("-o kedi_min_scores", 1)
    # One call, compiled as if written at that line of that file: the frame the warning
    # names (`stacklevel=2` from `issue_config_time_warning`) is the configuration line.
    code = compile("\n" * (line - 1) + "issue(warning, 2)", path, "exec")
    exec(code, {"issue": config.issue_config_time_warning, "warning": warning})


def _line_of(inipath: Path | None, pattern: str) -> tuple[str, int] | None:
    """The configuration file and the 1-based number of its first line holding ``pattern``
    (or, failing that, naming ``kedi_min_scores``)."""
    if inipath is None:
        return None
    try:
        lines = inipath.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for wanted in (pattern, "kedi_min_scores"):
        for number, text in enumerate(lines, 1):
            if wanted in text:
                return str(inipath), number
    return None
