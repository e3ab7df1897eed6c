"""`ModelRun`: the session's model policy (cassettes, retries, request budget).

One per pytest process, owned by `KediSession`. It builds the `ModelPolicy` every loaded
program's models are wrapped in (`policy_for`), and at the end of the run writes the
cassettes: an xdist worker hands its recordings and used keys to the controller through
``workeroutput``; the controller (or the only process) merges them into each cassette file
and writes it once, atomically. With ``--kedi-prune-cassettes`` it also removes the entries no
model call of the run used, but only after a complete run (see `incomplete_reason`). Only
then is it registered as a pytest plugin, to watch for what makes a run partial: its hooks
would otherwise run for every collector and every report (each row's sub-result) for
nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_kedi.text import display_path

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.plugin.settings import KediSettings
    from pytest_kedi.runtime.model.budget import RequestBudget
    from pytest_kedi.runtime.model.cassettes import CassetteBook
    from pytest_kedi.runtime.model.policy import ModelPolicy

__all__ = ["CASSETTES_KEY", "HANDOVER", "PARTIAL_KEY", "ModelRun", "cassette_path"]

#: ``workeroutput`` keys: a worker's cassette recordings and why its run was partial
CASSETTES_KEY = "kedi_cassettes"
PARTIAL_KEY = "kedi_partial"
#: the report attribute a worker's hand-over travels on (`ModelRun.hand_over`)
HANDOVER = "kedi_handover"
CASSETTE_SUFFIX = ".cassette.json"
#: what stands for ``..`` in a cassette's place under ``--kedi-cassette-dir`` (`cassette_place`)
OUTSIDE_PART = "__up__"
#: pytest options that run only part of the collected items
_FILTERS = (
    ("collectonly", "--collect-only runs no item"),
    ("keyword", "-k selects part of the items"),
    ("markexpr", "-m selects part of the items"),
    ("deselect", "--deselect selects part of the items"),
    ("lf", "--last-failed selects part of the items"),
    ("stepwise", "--stepwise selects part of the items"),
)


def cassette_path(settings: KediSettings, kedi_file: Path) -> Path:
    """``x.kedi.cassette.json`` beside ``x.kedi``, or under ``--kedi-cassette-dir`` at the
    file's path relative to the rootdir (`cassette_place`)."""
    if settings.cassette_dir is None:
        return kedi_file.with_name(kedi_file.name + CASSETTE_SUFFIX)
    relative = cassette_place(kedi_file, settings.rootdir or Path.cwd())
    return settings.cassette_dir / relative.with_name(relative.name + CASSETTE_SUFFIX)


def cassette_place(kedi_file: Path, rootdir: Path) -> Path:
    """Where under ``--kedi-cassette-dir`` the cassette of ``kedi_file`` goes: its path
    relative to the rootdir, each ``..`` (a file outside the rootdir) written
    `OUTSIDE_PART`, so that same-named files in different folders never share a cassette
    and a checkout elsewhere (or another machine) finds the same one. A file that has no
    path relative to the rootdir (another drive) goes under `OUTSIDE_PART` at its absolute
    path."""
    try:
        relative = Path(os.path.relpath(kedi_file, rootdir))
    except ValueError:  # (Windows: another drive)
        parts = [part.strip(":\\/") or "_" for part in kedi_file.parts]
        return Path(OUTSIDE_PART, *parts)
    return Path(*(OUTSIDE_PART if part == ".." else part for part in relative.parts))


class ModelRun:
    """The model policy of one pytest process (see the module docstring)."""

    def __init__(self, config: pytest.Config, settings: KediSettings) -> None:
        self.config = config
        self.settings = settings
        self.worker = hasattr(config, "workerinput")
        self.book: CassetteBook | None = None
        self._policy: ModelPolicy | None = None
        self.partial: list[str] = []  # why this run is not complete (for pruning)
        self.written: list[Path] = []
        self.notes: list[str] = []  # terminal lines (controller)
        self._sent_calls: dict[str, dict[str, int]] = {}  # a worker's, handed over, by file
        self._base()

    # ------------------------------------------------------------------ programs
    def policy_for(self, kedi_file: Path) -> ModelPolicy | None:
        """The policy of the program loaded from ``kedi_file`` (None: models as given)."""
        policy = self._base()
        if policy is None:
            return None
        if self.book is None:
            return policy
        cassette = cassette_path(self.settings, kedi_file)
        self.book.attach(cassette)  # pruned after a complete run, even if no call used it
        return policy.for_cassette(cassette)

    def _base(self) -> ModelPolicy | None:
        settings = self.settings
        wanted = settings.record_mode != "off" or settings.retries or settings.max_requests
        if self._policy is not None or not wanted:
            return self._policy
        from pytest_kedi.runtime.model.policy import ModelPolicy

        retry = None
        if settings.retries:
            from pytest_kedi.runtime.model.retrying import RetryPolicy

            retry = RetryPolicy(settings.retries)
        if settings.record_mode != "off":
            from pytest_kedi.evals.safetext import clean_data
            from pytest_kedi.runtime.model.cassettes import CassetteBook

            self.book = CassetteBook(settings.record_mode, clean=clean_data)
        self._policy = ModelPolicy(cassettes=self.book, retry=retry, budget=self._budget())
        return self._policy

    def _budget(self) -> RequestBudget | None:
        """``--kedi-max-requests``: the run's budget; an xdist worker gets an equal share
        (the first ``N % workers`` workers one more), so the run never issues more than N."""
        limit = self.settings.max_requests
        if limit is None:
            return None
        from pytest_kedi.runtime.model.budget import RequestBudget

        workerinput = getattr(self.config, "workerinput", None)
        if workerinput is None:
            return RequestBudget(limit, f"the run (--kedi-max-requests {limit})")
        workers = max(1, int(workerinput.get("workercount", 1)))
        index = int(str(workerinput.get("workerid", "gw0")).removeprefix("gw") or 0)
        if index >= workers:  # replaces a crashed worker, whose spending was not handed over
            return RequestBudget(
                0,
                f"worker {workerinput.get('workerid')} (it replaces a crashed worker; no share "
                f"of --kedi-max-requests {limit} is known to be left)",
            )
        share = limit // workers + (1 if index < limit % workers else 0)
        return RequestBudget(
            share,
            f"worker {workerinput.get('workerid')} (its share of --kedi-max-requests {limit} "
            f"across {workers} workers)",
        )

    # ------------------------------------------------------------------ partial runs
    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if items:
            self.partial.append(f"{len(items)} item(s) deselected")

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.partial.append(f"collection failed: {report.nodeid or 'session'}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "kedi" not in report.keywords or report.when == "teardown":
            return
        if report.skipped and not hasattr(report, "wasxfail"):  # (xfailed: it ran, and failed)
            self.partial.append(f"{report.nodeid} skipped")  # by a mark, or as it ran
        elif report.failed and report.when == "setup":
            self.partial.append(f"{report.nodeid} errored in setup")

    def _note_budget_spent(self) -> None:
        """A request the budget refused was never made: the entry it would have used is
        kept, so the run is not complete (an xdist worker's own share, reported to the
        controller with its other reasons)."""
        budget = self._policy.budget if self._policy is not None else None
        if budget is not None and budget.refused:
            limit = self.settings.max_requests
            reason = f"the request budget (--kedi-max-requests {limit}) was spent"
            if reason not in self.partial:
                self.partial.append(reason)

    def incomplete_reason(self, session: pytest.Session, exitstatus: int) -> str | None:
        """Why this run is not complete (None when it is): only a complete run, one that
        ran every collected Kedi item to its end, may prune cassettes."""
        self._note_budget_spent()
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return f"the run ended with exit status {int(exitstatus)}"
        if session.shouldstop or session.shouldfail:
            return "the run stopped early"
        option = self.config.option
        for name, reason in _FILTERS:
            if getattr(option, name, None):
                return reason
        if any("::" in arg for arg in self.config.args):
            return "node ids select part of the items"
        if self.settings.rerun is not None:  # carried-over rows made no call, yet used theirs
            return f"--kedi-rerun {self.settings.rerun} runs part of the rows"
        return self.partial[0] if self.partial else None

    # ------------------------------------------------------------------ hand-over
    def hand_over(self, report: pytest.TestReport, path: Path, calls: Mapping[str, int]) -> None:
        """A worker's Kedi item ended: what it recorded and used in cassettes, and its
        file's model calls since the last hand-over, travel on its teardown report, so a
        worker that dies later loses none of it (`take_over` reads it)."""
        sent = self._sent_calls.setdefault(str(path), {})
        delta = {name: count - sent.get(name, 0) for name, count in calls.items()}
        delta = {name: count for name, count in delta.items() if count}
        sent.update(calls)
        payload: dict[str, object] = {"calls": delta} if delta else {}
        if self.book is not None:
            taken = self.book.take()
            if taken:
                payload["cassettes"] = taken
        if payload:  # one JSON text, as a suite's record travels (`transport`)
            setattr(report, HANDOVER, json.dumps(payload, check_circular=False))

    def calls_left(self, calls: Mapping[str, int]) -> dict[str, int]:
        """``calls`` (a worker's own, in every file) less those handed over already."""
        left = dict(calls)
        for sent in self._sent_calls.values():
            for name, count in sent.items():
                left[name] = left.get(name, 0) - count
        return {name: count for name, count in left.items() if count}

    def take_over(self, payload: object) -> dict[str, int]:
        """The controller reads a report's hand-over: its cassette part joins the book; its
        model calls are returned."""
        if isinstance(payload, str):
            payload = json.loads(payload)
        if not isinstance(payload, dict):
            return {}
        cassettes = payload.get("cassettes")
        if isinstance(cassettes, dict) and self.book is not None:
            self.book.absorb(cassettes)
        calls = payload.get("calls")
        return {str(k): int(v) for k, v in calls.items()} if isinstance(calls, dict) else {}

    def worker_crashed(self, nodeid: str) -> None:
        """An xdist worker died running ``nodeid``: what that item recorded and used in
        cassettes was not handed over, so the run is not complete (no pruning)."""
        self.partial.append(f"a worker crashed while running {nodeid}")

    # ------------------------------------------------------------------ end of run
    def worker_finish(self, workeroutput: MutableMapping[str, object]) -> None:
        self._note_budget_spent()
        if self.book is not None:
            workeroutput[CASSETTES_KEY] = self.book.take()
        if self.partial:
            workeroutput[PARTIAL_KEY] = list(self.partial)

    def node_down(self, output: Mapping[str, object]) -> None:
        partial = output.get(PARTIAL_KEY)
        if isinstance(partial, list):
            self.partial.extend(str(reason) for reason in partial)
        exported = output.get(CASSETTES_KEY)
        if isinstance(exported, dict) and self.book is not None:
            self.book.absorb(exported)

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """Write the cassettes (controller, or the only process)."""
        if self.book is None:
            if self.settings.prune_cassettes and self.settings.collect:
                self.notes.append("cassettes not pruned: --kedi-record-mode is off")
            return
        prune = False
        if self.settings.prune_cassettes:
            reason = self.incomplete_reason(session, exitstatus)
            prune = reason is None
            if reason is not None:
                self.notes.append(f"cassettes not pruned: {reason}")
        failed: list[str] = []  # (each file on its own: one that fails stops no other)
        self.written = self.book.save(prune=prune, failed=failed)
        for error in failed:
            self.notes.append(f"cannot write cassettes: {error}")
        if failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.written:
            names = ", ".join(display_path(str(path)) for path in self.written)
            self.notes.append(f"cassettes written: {names}")

    def terminal_lines(self, tr: pytest.TerminalReporter) -> None:
        for note in self.notes:
            tr.write_line(f"kedi: {note}")
