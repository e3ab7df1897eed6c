"""Merging the JSON reports of a sharded run into one report and one verdict.

Suites and test cases are merged by node id. A node id in several reports must carry the
same result in each (durations aside); otherwise the merge is refused, naming the node id
and the files. The verdict re-applies the gates the reports recorded: a suite fails when
its shard said so (``outcome``), when its score (or, with ``gate`` ``lower``, its interval's
lower bound ``ci.low``) is below its ``threshold``, or when more rows errored than its
``max_errors`` allows; a test case fails when its outcome is ``failed``. A shard that
``-x``/``--maxfail`` stopped (``stopped``) is named, and the merged report's ``stopped``
names the first such shard. Collection errors
(``errors``: the files a shard could not collect) are merged by node id, once each however
many shards collected the file, and fail the run. The merged exit status is what one
unsharded pytest run would have ended with.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_kedi.evals.scoring import below
from pytest_kedi.plugin.gating import score_digits, threshold_text
from pytest_kedi.plugin.optionvalues import MaxErrors
from pytest_kedi.plugin.records import (
    CaseRecord,
    CollectErrorRecord,
    RunRecord,
    SuiteRecord,
    source_order,
)

__all__ = ["MergeError", "Merged", "Shard", "merge"]

_INTERRUPTED = 2
_NO_TESTS = 5


class MergeError(Exception):
    """Reports that cannot be merged; the message is one line."""


@dataclass(frozen=True, slots=True)
class Shard:
    """One shard's report and the file it came from."""

    path: str
    run: RunRecord


@dataclass(frozen=True, slots=True)
class Merged:
    """The merged run (suites' outcomes re-judged), why each failed suite failed, and the
    exit status one pytest run would have had."""

    run: RunRecord
    failures: tuple[tuple[str, str], ...]  # (node id, reason), in source order
    notes: tuple[str, ...]  # shards that ended badly for reasons outside Kedi items
    exitstatus: int


def _timeless(value: Any) -> Any:
    """A JSON value without its ``duration_s`` entries (timings differ run to run)."""
    if isinstance(value, Mapping):
        return {k: _timeless(v) for k, v in value.items() if k != "duration_s"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _difference(first: Mapping[str, Any], second: Mapping[str, Any]) -> str:
    """The first field that differs, as ``field: A vs B``."""
    for key in dict.fromkeys([*first, *second]):
        if first.get(key) != second.get(key):
            shown = [repr(side.get(key)) for side in (first, second)]
            if any(len(text) > 40 for text in shown):
                return key
            return f"{key}: {shown[0]} vs {shown[1]}"
    return "?"  # pragma: no cover - only called when the two differ


def _collect(shards: Sequence[Shard], kind: str) -> dict[str, tuple[str, SuiteRecord | CaseRecord]]:
    found: dict[str, tuple[str, SuiteRecord | CaseRecord]] = {}
    for shard in shards:
        records: Sequence[SuiteRecord | CaseRecord] = getattr(shard.run, kind)
        for record in records:
            prior = found.get(record.nodeid)
            if prior is None:
                found[record.nodeid] = (shard.path, record)
                continue
            before, now = _timeless(prior[1].to_json()), _timeless(record.to_json())
            if before != now:
                raise MergeError(
                    f"{record.nodeid} is in {prior[0]} and {shard.path} with different "
                    f"results ({_difference(before, now)}); merge reports of disjoint shards"
                )
    return found


def _gated_value(suite: SuiteRecord) -> tuple[float, str]:
    """The number the min score applies to: the score, or with ``gate`` ``lower`` the
    confidence interval's lower bound."""
    data = suite.to_json()
    ci = data.get("ci")
    if data.get("gate") == "lower" and isinstance(ci, Mapping):
        low = ci.get("low")
        if isinstance(low, int | float):
            return float(low), "the score's lower confidence bound"
    return suite.result.score, "score"


def suite_reason(suite: SuiteRecord) -> str | None:
    """Why ``suite`` fails the merged run, or ``None``."""
    result = suite.result
    if result.error is not None and suite.outcome != "skipped":
        return "failed before scoring: " + result.error.strip().splitlines()[-1]
    if suite.outcome == "skipped":
        return None
    reasons = []
    if suite.threshold is not None:
        value, what = _gated_value(suite)
        if below(value, suite.threshold):
            digits = score_digits(value, suite.threshold)
            bar = threshold_text(suite.threshold, digits)
            reasons.append(f"{what} {value:.{digits}f} is below the min score {bar}")
    if suite.max_errors is not None:
        budget = MaxErrors.of(suite.max_errors)
        if budget.exceeded(result.rows_errored, result.rows_total):
            reasons.append(
                f"{result.rows_errored} of {result.rows_total} rows errored; "
                f"{budget.describe()} allowed"
            )
    if not reasons and suite.outcome == "failed":
        reasons.append(
            f"failed in its shard: {suite.failure}" if suite.failure else "failed in its shard"
        )
    return "; ".join(reasons) or None


def _status(shards: Sequence[Shard], failed: bool) -> tuple[int, tuple[str, ...]]:
    """pytest's exit status for the whole run, and notes on shards that ended badly
    outside Kedi items (an interrupted shard, failed Python tests, an internal error)."""
    notes = []
    statuses = []
    for shard in shards:
        run = shard.run
        if run.interrupted:
            notes.append(f"{shard.path}: the shard's run was interrupted")
            statuses.append(_INTERRUPTED)
        elif run.exitstatus not in (0, _NO_TESTS):
            statuses.append(run.exitstatus)
    for shard in shards:  # (a failure the merge lists explains a shard's status 1)
        status = shard.run.exitstatus  # (2 without an interrupt: -x under pytest-xdist)
        if shard.run.stopped:  # -x, --maxfail: the shard's items after the stop did not run
            notes.append(
                f"{shard.path}: the shard's pytest run stopped early ({shard.run.stopped}), "
                f"with exit status {status}: not every item ran"
            )
        elif (
            status not in (0, _NO_TESTS)
            and not (failed and status == 1)
            and not shard.run.interrupted
        ):
            notes.append(f"{shard.path}: the shard's pytest run ended with exit status {status}")
    if any(status == _INTERRUPTED for status in statuses):
        return _INTERRUPTED, tuple(notes)
    # an internal (3) or usage (4) error ends the run so, failures or not, as in pytest
    return max(statuses, default=1 if failed else 0), tuple(notes)


def _counted(shards: Sequence[Shard]) -> list[Shard]:
    """The shards whose model calls the merged run counts: not one whose suites and cases
    another, larger shard already holds (a shard uploaded twice, a `-k` selection inside
    another), whose calls that shard counted. Shards that only overlap are all counted."""
    counted: list[Shard] = []
    held: set[str] = set()
    for shard in sorted(shards, key=lambda s: -len(s.run.suites) - len(s.run.tests)):
        run = shard.run
        ids = {suite.nodeid for suite in run.suites} | {case.nodeid for case in run.tests}
        if ids and ids <= held:
            continue
        counted.append(shard)
        held |= ids
    return counted


def merge(shards: Sequence[Shard]) -> Merged:
    """Merge ``shards`` (raises `MergeError` on disagreeing overlaps)."""
    suites = [record for _, record in _collect(shards, "suites").values()]
    tests = [record for _, record in _collect(shards, "tests").values()]
    judged: list[SuiteRecord] = []
    failures: list[tuple[str, str]] = []
    # pytest reported these as expected failures: failing them is what their shard expected
    xfailed = sorted({nodeid for shard in shards for nodeid in shard.run.xfailed})
    expected = set(xfailed)
    for suite in source_order(s for s in suites if isinstance(s, SuiteRecord)):
        reason = suite_reason(suite)
        if reason is not None:
            if suite.nodeid not in expected:
                failures.append((suite.nodeid, reason))
            suite = dataclasses.replace(suite, outcome="failed")
        judged.append(suite)
    cases = source_order(t for t in tests if isinstance(t, CaseRecord))
    failures += [
        (case.nodeid, case.message or "failed")
        for case in cases
        if case.outcome == "failed" and case.nodeid not in expected
    ]
    errors: dict[str, CollectErrorRecord] = {}  # every shard collects the same files
    for shard in shards:
        for error in shard.run.errors:
            errors.setdefault(error.nodeid, error)
    calls: Counter[str] = Counter()
    for shard in _counted(shards):
        calls.update(dict(shard.run.model_calls))
    status, notes = _status(shards, bool(failures or errors))
    run = RunRecord(
        exitstatus=status,
        interrupted=any(shard.run.interrupted for shard in shards),
        stopped=next((f"{s.path}: {s.run.stopped}" for s in shards if s.run.stopped), None),
        model_calls=tuple(sorted(calls.items())),
        suites=tuple(judged),
        tests=tuple(cases),
        xfailed=tuple(xfailed),
        errors=tuple(errors[nodeid] for nodeid in sorted(errors)),
    )
    return Merged(run, tuple(failures), notes, status)
