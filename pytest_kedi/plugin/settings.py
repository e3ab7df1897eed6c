"""`KediSettings`: the plugin's resolved configuration, one per pytest process."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from pytest_kedi.constants import DEFAULT_MAX_ROWS
from pytest_kedi.plugin.optionvalues import MaxErrors

__all__ = ["KediSettings"]


@dataclass(frozen=True, slots=True)
class KediSettings:
    """The plugin's resolved configuration (one per pytest process)."""

    eval_enabled: bool
    collect: bool
    rows_mode: str  # "subtests" or "summary" ("auto" is resolved away)
    min_score: float | None
    min_scores: tuple[tuple[str, float], ...]
    max_errors: MaxErrors | None
    model: str | None
    split: str
    concurrency: int
    timeout: float | None
    report_path: Path | None
    rows_jsonl_path: Path | None
    max_rows: int = DEFAULT_MAX_ROWS
    html_path: Path | None = None
    markdown_path: Path | None = None
    markdown_append: bool = False  # GITHUB_STEP_SUMMARY: append, and only when Kedi items ran
    rows_reason: str | None = None  # why rows_mode is what it is, when not chosen explicitly
    rootdir: Path | None = None
    ini_dir: Path | None = None  # the directory of the ini file (kedi_min_scores patterns)
    trace: bool = False  # record each row's model calls
    progress: str = "auto"  # live progress of running eval suites: auto, on or off
    progress_interval: float = 10.0  # seconds between plain progress lines (not a terminal)
    debug: bool = False  # show the traceback of an internal parser error
    repeat: int = 1  # runs of every row
    gate: str = "mean"  # what the min score applies to: "mean" or "lower" (interval bound)
    rerun: str | None = None  # "errors" or "failures": rerun only those rows of the last run
    row_min_score: float = 1.0  # below it a row is a failure for --kedi-rerun failures
    baseline_path: Path | None = None  # an earlier --kedi-report to compare the run with
    max_drop: float | None = None  # fail a suite whose score fell more than this below it
    shard: tuple[int, int] | None = None  # (K, N): run the K-th of N shares of the Kedi items
    record_mode: str = "off"  # off, record, replay or strict (model answers from cassettes)
    cassette_dir: Path | None = None  # None: each cassette beside its .kedi file
    prune_cassettes: bool = False  # drop unused cassette entries after a complete run
    retries: int = 0  # retries of a transient model failure
    max_requests: int | None = None  # model requests the run may issue (None: no limit)

    def suite_ids(self, nodeid: str) -> tuple[str, ...]:
        """``nodeid`` (rootdir-relative) and, if different, relative to the ini file's directory.

        IDEs pass their own ``--rootdir`` (VS Code: the workspace), so a pattern written next
        to the ini file keeps matching whichever directory pytest reports node ids from.
        """
        if self.rootdir is None or self.ini_dir is None:
            return (nodeid,)
        file, sep, rest = nodeid.partition("::")
        try:
            relative = (self.rootdir / file).relative_to(self.ini_dir).as_posix()
        except ValueError:  # the file is outside the ini file's directory
            return (nodeid,)
        return (nodeid,) if relative == file else (nodeid, relative + sep + rest)

    def pattern_matches(self, pattern: str, nodeid: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for name in self.suite_ids(nodeid))

    def threshold_for(self, nodeid: str) -> float | None:
        """The first matching ``kedi_min_scores`` pattern wins over the global min score."""
        for pattern, value in self.min_scores:
            if self.pattern_matches(pattern, nodeid):
                return value
        return self.min_score
