"""Corpus conformance driver (issue 3 item 9): load each corpus program in validate mode
and run its tests and evals with a scripted model. Shared by the conformance test."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kedi_scripted_model import ScriptedModel

from pytest_kedi.lang import KediParseError, check_python, nodes, parse
from pytest_kedi.runtime import load
from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediImportError,
    KediUnsupportedError,
)

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "kedi"

#: Directives whose execution is a clear error in pytest-kedi (§8, §9.10, §9.11).
CLEAR_ERROR_DIRECTIVES = frozenset(
    {
        "agent",
        "effort",
        "use",
        "mcp",
        "approval",
        "profile",
        "subagent",
        "max_agents",
        "workflow",
        "skills",
        "codemode",
        "history",
        "artifacts",
        "auto",
        "task",
        "await",
        "send",
        "interrupt",
        "task_group",
        "process",
        "budget",
        "hooks",
    }
)


@dataclass
class Outcome:
    name: str
    status: str  # "ok", "parse-error", "clear-error", "failed"
    detail: str = ""
    ran: list[str] = field(default_factory=list)


def _directive_names(body: Iterable[Any]) -> set[str]:
    found: set[str] = set()
    for stmt in body:
        if isinstance(stmt, nodes.Directive):
            found.add(stmt.name)
            found |= _directive_names(stmt.body)
            found |= {m.name for m in stmt.members}
        for attr in ("body", "orelse", "map_body"):
            inner = getattr(stmt, attr, None)
            if isinstance(inner, tuple):
                found |= _directive_names(inner)
        if isinstance(stmt, nodes.EvalSuite):
            for ds in stmt.datasets:
                found |= _directive_names(ds.body)
            if stmt.metric is not None:
                found |= _directive_names(stmt.metric.body)
    return found


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.kedi")) if CORPUS.is_dir() else []


def _bindings_for(name: str, data: Any) -> list[dict[str, Any]]:
    """Row bindings per the row shapes of §5.4."""
    if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        raise TypeError(f"dataset is not a non-string iterable: {type(data).__name__}")
    mapping = isinstance(data, (dict, type({}.items())))
    items = list(data.items()) if isinstance(data, dict) else list(data)
    out: list[dict[str, Any]] = []
    for row in items:
        if mapping and isinstance(row, tuple) and len(row) == 2:
            key, value = row
            out.append({name: key, "expected": value} if isinstance(value, dict) else {name: row})
        elif isinstance(row, tuple) and len(row) == 2:
            inp, exp = row
            out.append({name: inp} if exp is None else {name: inp, "expected": exp})
        else:
            out.append({name: row})
    return out


def run_file(path: Path) -> Outcome:
    outcome = Outcome(path.name, "ok")
    source = path.read_text(encoding="utf-8")
    try:
        module = check_python(parse(source, str(path)))
    except KediParseError as exc:
        return Outcome(path.name, "parse-error", exc.message)
    used = _directive_names(module.body) & CLEAR_ERROR_DIRECTIVES
    if used:
        return Outcome(path.name, "clear-error", ", ".join(sorted(used)))
    try:
        program = load(path, model=ScriptedModel(), mode="validate")
        for suite in module.test_suites:
            for case in suite.cases:
                program.run_case(suite, case)
                outcome.ran.append(f"{suite.name}::{case.name}")
        for eval_suite in module.eval_suites:
            _run_eval(program, eval_suite)
            outcome.ran.append(f"eval {eval_suite.name}")
    except (KediUnsupportedError, KediImportError) as exc:
        return Outcome(path.name, "clear-error", f"{type(exc).__name__}: {exc.message}")
    except KediExecutionError as exc:
        return Outcome(path.name, "failed", f"{exc.kind_name}: {exc.message}")
    return outcome


def _run_eval(program: Any, suite: nodes.EvalSuite) -> None:
    metric = suite.metric
    if metric is None:
        return
    if metric.dataset is None:
        program.run_metric(suite, metric, {})
        return
    chosen = [d for d in suite.datasets if d.name == metric.dataset and d.kind == "test_data"]
    chosen = chosen or [d for d in suite.datasets if d.name == metric.dataset]
    if not chosen:
        raise KediExecutionError(f"missing dataset {metric.dataset!r}")
    for bindings in _bindings_for(metric.dataset, program.load_dataset(suite, chosen[0])):
        program.run_metric(suite, metric, bindings)


def main() -> None:
    outcomes = [run_file(p) for p in corpus_files()]
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    print(json.dumps(counts))
    for o in outcomes:
        if o.status == "failed":
            print(f"{o.name}: {o.detail}")


if __name__ == "__main__":
    main()
