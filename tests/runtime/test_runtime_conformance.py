"""Corpus conformance (issue 3 item 9).

Every corpus program that parses and uses no clear-error construct is loaded in validate
mode, then its `@test:` cases and `@eval:` suites run with a scripted `FunctionModel`.
Each failure must be listed, with a reason, in ``conformance_allowlist.txt``.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from kedi_conformance import corpus_files, run_file

ALLOWLIST = Path(__file__).with_name("conformance_allowlist.txt")


def _allowlist() -> dict[str, str]:
    entries: dict[str, str] = {}
    for line in ALLOWLIST.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        entries[name] = reason.strip()
    return entries


def _expected_failures(allow: dict[str, str]) -> set[str]:
    """Allowlisted files expected to fail here: one that needs a Python package only while
    that package is not importable (a dependency's own dependencies may install it)."""
    expected = set()
    for name, reason in allow.items():
        needed = re.match(r"needs the Python package `([\w.]+)`", reason)
        if needed and importlib.util.find_spec(needed[1]) is not None:
            continue
        expected.add(name)
    return expected


def test_allowlist_entries_have_reasons() -> None:
    assert all(reason for reason in _allowlist().values())


def test_corpus_conformance(capsys: pytest.CaptureFixture[str]) -> None:
    files = corpus_files()
    if not files:
        pytest.skip("corpus not available (../shared/corpus/kedi)")
    allow = _allowlist()
    outcomes = [run_file(path) for path in files]
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    ran = sum(1 for o in outcomes if o.status == "ok" and o.ran)
    with capsys.disabled():
        print(
            f"\nkedi corpus conformance: {len(files)} files; "
            f"{counts.get('ok', 0)} load and run without error "
            f"({ran} of them with tests/evals executed); "
            f"{counts.get('failed', 0)} failed (allowlisted); "
            f"{counts.get('clear-error', 0)} use clear-error constructs; "
            f"{counts.get('parse-error', 0)} do not parse"
        )
    unexpected = [
        f"{o.name}: {o.detail}" for o in outcomes if o.status == "failed" and o.name not in allow
    ]
    assert not unexpected, "\n".join(unexpected)
    stale = sorted(_expected_failures(allow) - {o.name for o in outcomes if o.status == "failed"})
    assert not stale, f"allowlist entries that now pass or are gone: {stale}"
