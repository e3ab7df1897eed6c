"""Every `@eval:` suite of the shared Kedi corpus scores or fails cleanly (never raises).

The corpus lives outside the repository (``../shared/corpus``); the test is skipped when
it is absent. All model calls go to pydantic-ai's offline ``TestModel``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.models.test import TestModel

from pytest_kedi.evals import ERROR_CLASSES, EvalOptions, SuiteResult, run_suite
from pytest_kedi.runtime import load

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "kedi"


def corpus_eval_files() -> list[str]:
    manifest = CORPUS / "MANIFEST.json"
    if not manifest.is_file():
        return []
    entries = json.loads(manifest.read_text(encoding="utf-8"))
    return sorted(e["file"] for e in entries if e.get("has_eval"))


FILES = corpus_eval_files()


def check_result(result: SuiteResult) -> None:
    data = json.loads(json.dumps(result.to_json()))
    assert data["split"] in ("data", "test_data", None)
    if result.error is not None:
        assert "\n" not in result.error and "Traceback" not in result.error
        assert result.rows == [] and result.score == 0.0
        return
    assert result.rows_total == len(result.rows)
    assert set(result.errors_by_class) <= set(ERROR_CLASSES)
    for row in result.rows:
        assert (row.error is None) == (row.error_class is None)
        if row.error is not None:
            assert row.score == 0.0
            assert row.feedback is not None and row.feedback.startswith("error: ")
            assert "\n" not in row.feedback and "Traceback" not in row.feedback


@pytest.mark.skipif(not FILES, reason="shared Kedi corpus not available")
@pytest.mark.parametrize("name", FILES)
def test_corpus_suites_score_or_fail_cleanly(name: str) -> None:
    try:
        program = load(str(CORPUS / name), mode="validate", model=TestModel())
    except Exception as exc:  # parse/compile problems belong to other layers' tests
        pytest.skip(f"does not load: {type(exc).__name__}")
    suites = program.module.eval_suites
    assert suites
    for suite in suites:
        check_result(run_suite(program, suite, EvalOptions(timeout=30)))
