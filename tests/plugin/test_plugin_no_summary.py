"""``--no-summary`` hides the ``kedi`` terminal section, like pytest's own summary sections."""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import DEMO, Kedi


def test_no_summary_hides_the_kedi_section(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    shown = kedi.run("--kedi-eval", "-q")
    assert any(line.startswith("=") and " kedi " in line for line in shown.outlines)
    hidden = kedi.run("--kedi-eval", "-q", "--no-summary")
    assert hidden.ret == pytest.ExitCode.OK
    assert not any(" kedi " in line for line in hidden.outlines)
    assert not any(line.startswith(("model:", "Tests:", "Evals:")) for line in hidden.outlines)


def test_no_summary_still_reports_a_report_write_error(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kedi.write("blocker", "a file, not a directory\n")
    result = kedi.run("--kedi-eval", "--no-summary", "--kedi-report", "blocker/report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not any(line.startswith("Evals:") for line in result.outlines)
    if pytest.version_tuple >= (9, 2):  # older pytest skips every plugin summary here
        result.stdout.fnmatch_lines(["kedi: cannot write *blocker/report.json*"])
