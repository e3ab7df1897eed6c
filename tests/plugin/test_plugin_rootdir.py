"""An option's path value that would move pytest's rootdir away from the project."""

from __future__ import annotations

from kedi_plugin_helpers import Kedi

GATED = """\
@half(x: int) -> int:
  = `x // 2`

@eval: half:
  > data: xs:
    = `[(2, 1), (4, 2), (6, 2)]`
  > metric: exact(xs):
    = `half(xs) == expected`
"""


def test_a_report_path_outside_the_project_cannot_drop_its_configuration(kedi: Kedi) -> None:
    """``--kedi-report /elsewhere/r.json``: pytest chooses its rootdir before it knows
    plugin options, so once the file exists its path counts as a test path, the rootdir
    moves away from the project and the ini file's gate is lost: the second run of the
    same command passed a suite the first failed. Such a run is a usage error naming the
    ``--opt=PATH`` form; that form, and a path inside the project, run as the first did.
    (Separate interpreters: the plugin loads from its entry point, after the rootdir is
    chosen, as it does for a user.)"""
    kedi.write("suite.kedi", GATED)
    kedi.pytester.makeini("[pytest]\nkedi_min_score = 0.9\n")
    outside = kedi.pytester.path.parent / f"{kedi.pytester.path.name}-out"
    outside.mkdir()
    report = outside / "r.json"
    first = kedi.subprocess("--kedi-eval", "--kedi-report", str(report))
    first.assert_outcomes(failed=1)
    assert report.is_file()
    again = kedi.subprocess("--kedi-eval", "--kedi-report", str(report))
    assert again.ret == 4, again.stdout.str() + again.stderr.str()
    again.stderr.fnmatch_lines(
        [
            f"ERROR: --kedi-report {report}: pytest chooses its rootdir before it knows plugin "
            f"options and read this path as a test path (rootdir *; the command line means "
            f"rootdir {kedi.pytester.path}, configfile {kedi.pytester.path / 'tox.ini'}). "
            f"Write it as --kedi-report={report}."
        ]
    )
    kedi.subprocess("--kedi-eval", f"--kedi-report={report}").assert_outcomes(failed=1)
    kedi.subprocess("--kedi-eval", "--kedi-report", "r.json").assert_outcomes(failed=1)
    kedi.subprocess("--kedi-eval", "--kedi-report", "r.json").assert_outcomes(failed=1)
