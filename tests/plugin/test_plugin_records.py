"""The plugin's typed records (issue 8 §1, §2): one to_json/from_json pair each, the schema
keys of the JSON report, and no module-level mutable state or dict result shapes in plugin/."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from pytest_kedi.evals import RowResult, SuiteResult
from pytest_kedi.plugin.records import (
    REPORT_VERSION,
    ROW_KEYS,
    SUITE_KEYS,
    TEST_KEYS,
    CaseRecord,
    RunRecord,
    SuiteRecord,
    source_order,
)

PLUGIN = Path(__file__).resolve().parents[2] / "pytest_kedi" / "plugin"


def _suite(nodeid: str = "evals/a.kedi::eval:answer", line: int = 4) -> SuiteRecord:
    rows = [
        RowResult(1, "'q1'", "'yes'", 1.0, None, None, None, 0.01),
        RowResult(2, "'q2'", None, 0.0, "error: KeyError: 'x'", "KeyError: 'x'", "metric", 0.02),
    ]
    result = SuiteResult(
        suite="answer",
        metric="exact",
        dataset="questions",
        split="test",
        score=0.5,
        rows=rows,
        rows_total=2,
        rows_errored=1,
        errors_by_class={"metric": 1},
        feedback="error: KeyError: 'x'",
        error=None,
        duration_s=0.03,
    )
    return SuiteRecord(nodeid, line, result, threshold=0.8, outcome="failed")


def test_suite_record_round_trips_through_json_text() -> None:
    record = _suite()
    data = json.loads(json.dumps(record.to_json()))
    assert tuple(data) == SUITE_KEYS
    assert all(tuple(row) == ROW_KEYS for row in data["rows"])
    assert data["path"] == "evals/a.kedi" and data["procedure"] == "answer"
    assert SuiteRecord.from_json(data) == record


def test_unscored_suite_record_has_every_key() -> None:
    record = SuiteRecord.unscored(
        "a.kedi::eval:s",
        line=2,
        procedure="s",
        metric=None,
        dataset=None,
        threshold=None,
        outcome="skipped",
        error=None,
    )
    data = record.to_json()
    assert tuple(data) == SUITE_KEYS
    assert (data["score"], data["rows"], data["error"]) == (0.0, [], None)
    assert SuiteRecord.from_json(data) == record


def test_case_record_round_trips() -> None:
    record = CaseRecord("t.kedi::test:s::c", 3, "s", "c", "failed", "AssertionError: 1 == 2")
    data = json.loads(json.dumps(record.to_json()))
    assert tuple(data) == TEST_KEYS
    assert CaseRecord.from_json(data) == record


def test_row_lines_carry_their_suite() -> None:
    lines = list(_suite().row_lines())
    assert [line["index"] for line in lines] == [1, 2]
    assert tuple(lines[0])[:4] == ("nodeid", "procedure", "metric", "split")
    assert lines[1]["error_class"] == "metric" and lines[1]["split"] == "test"


def test_run_record_is_the_report_document_in_source_order() -> None:
    late, early = _suite(line=9), _suite("evals/a.kedi::eval:first", line=1)
    run = RunRecord(
        exitstatus=1,
        interrupted=False,
        model_calls=(("test", 3),),
        suites=(late, early),
        tests=(CaseRecord("a.kedi::test:s::c", 3, "s", "c", "passed", None),),
    )
    document = json.loads(json.dumps(run.to_json()))
    assert document["version"] == REPORT_VERSION
    assert [suite["line"] for suite in document["suites"]] == [1, 9]
    assert document["model_calls"] == {"test": 3}
    back = RunRecord.from_json(document)
    assert back.to_json() == run.to_json()
    assert source_order([late, early]) == [early, late]


def _module_level_mutables(tree: ast.Module) -> list[str]:
    mutable_calls = {"dict", "list", "set", "Counter", "defaultdict", "OrderedDict"}
    found = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue  # the export list, never changed
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            value = node.value
            literal = isinstance(value, ast.Dict | ast.List | ast.Set | ast.ListComp | ast.DictComp)
            call = (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in mutable_calls
            )
            if literal or call:
                found.append(ast.unparse(node).splitlines()[0])
    return found


def test_no_module_level_mutable_state_in_plugin() -> None:
    offenders = {
        path.name: found
        for path in sorted(PLUGIN.glob("*.py"))
        if (found := _module_level_mutables(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert offenders == {}


def test_no_dict_result_shapes_in_plugin() -> None:
    """Only the records' JSON forms (`records.Json`, ``from_json`` input) and the settings
    resolution's keyword arguments are dicts of Any."""
    shapes = []
    for path in sorted(PLUGIN.glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "dict[str, Any]" in line or "Mapping[str, Any]" in line:
                shapes.append(f"{path.name}:{number}: {line.strip()}")
    allowed = {
        "records.py": ("Json = dict[str, Any]", "def from_json(cls, data: Mapping[str, Any])"),
        "resolution.py": ("values: dict[str, Any] = {}",),
    }
    unexpected = [
        shape
        for shape in shapes
        if not any(text in shape for text in allowed.get(shape.split(":", 1)[0], ()))
    ]
    assert unexpected == []
