"""`pytest --kedi-eval examples/` runs offline, exits 0 and gives the documented scores
(issue 4 §11); typed ini options work from pytest 9's native TOML table (§8)."""

from __future__ import annotations

import shutil

import pytest
from kedi_plugin_helpers import REPO_ROOT, Kedi

EXAMPLES = REPO_ROOT / "examples"


@pytest.fixture
def examples(kedi: Kedi) -> Kedi:
    if not EXAMPLES.is_dir():
        pytest.skip("examples/ is not part of this checkout")
    shutil.copytree(EXAMPLES, kedi.pytester.path / "examples")
    return kedi


def test_examples_run_offline_and_exit_zero(examples: Kedi) -> None:
    result = examples.run("--kedi-eval", "examples/", "--kedi-report", "report.json")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=11, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "models: function:example-rules (14 calls; pytest_kedi_model hook)",
            "Tests:",
            "- classify::refund_is_billing: OK",
            "- slugify::title: OK",
            "Evals:",
            "- classify::accuracy: 0.7500  [[]FAILED, min score 0.9000[]]"
            " (xfail: demo: the keyword rules miss the 0.90 gate)",
            "- parse_contact::fields: 0.8333 | name: got 'Dr. Katherine Johnson'*  [[]passed[]]",
            "- extract_invoice::fields: 0.6667 | wrong vendor; error: *  [[]passed[]]",
            "- normalize::exact: 1.0000  [[]passed[]]",
            "- slugify::exact: 1.0000  [[]passed[]]",
        ]
    )
    suites = {s["procedure"]: s for s in examples.json("report.json")["suites"]}
    assert suites["extract_invoice"]["errors_by_class"] == {"model": 1}
    assert suites["classify"]["outcome"] == "failed"
    assert suites["classify"]["threshold"] == 0.9
    assert 0.0 < suites["extract_invoice"]["score"] < 1.0


def test_examples_gate_fails_without_the_xfail_marker(examples: Kedi) -> None:
    conftest = examples.pytester.path / "examples" / "conftest.py"
    text = conftest.read_text(encoding="utf-8")
    conftest.write_text(text.split("def pytest_collection_modifyitems")[0], encoding="utf-8")
    result = examples.run("--kedi-eval", "examples/classifier.kedi")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [  # relative to the working directory, as the stack traces are
            "examples/classifier.kedi:*: @eval: classify failed: "
            "score 0.7500 is below the min score 0.9000"
        ]
    )


def test_native_toml_configuration_accepts_typed_values(kedi: Kedi) -> None:
    kedi.write(
        "scores.kedi",
        "@eval: wc:\n  > data: xs:\n    = `[1, 2, 3, 4]`\n  > test_data: xs:\n    = `[1]`\n"
        "  > metric: m(xs):\n    = `xs / 4`\n",
    )
    kedi.pytester.makepyprojecttoml(
        """
        [tool.pytest]
        kedi_collect = true
        kedi_min_score = 0.9
        kedi_min_scores = ["*::eval:wc = 0.5"]
        kedi_max_errors = 0
        kedi_concurrency = 2
        kedi_timeout = 30
        kedi_rows = "summary"
        kedi_split = "data"
        kedi_model = "test"
        """
    )
    result = kedi.run("--kedi-eval", "--kedi-report", "report.json")
    result.assert_outcomes(passed=1)
    (suite,) = kedi.json("report.json")["suites"]
    assert (suite["split"], suite["score"], suite["threshold"]) == ("data", 0.625, 0.5)


def test_help_lists_options_and_ini_entries(kedi: Kedi) -> None:
    result = kedi.run("--help")
    result.stdout.fnmatch_lines(
        [
            "*Kedi evaluation suites and test cases (pytest-kedi)*",
            "*--kedi-eval*",
            "*--kedi-min-score=F*",
            "*kedi_collect (bool)*",
            "*kedi_min_score (float)*",
            "*kedi_min_scores (linelist)*",
        ]
    )
