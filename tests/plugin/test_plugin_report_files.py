"""Report files: never replace what is not a regular file, never overwrite a source, one
path per report, normal permissions (issue 10 §1, §2)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from kedi_plugin_helpers import DEMO, Kedi

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_new_report_gets_normal_permissions(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    kept = kedi.write("kept.jsonl", "old\n")
    kept.chmod(0o640)
    kedi.run("--kedi-eval", "--kedi-report", "out/r.json", "--kedi-rows-jsonl", "kept.jsonl")
    created = kedi.pytester.path / "out" / "r.json"
    assert stat.S_IMODE(created.stat().st_mode) == 0o666 & ~_umask()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    assert kept.read_text("utf-8") != "old\n"


def test_symlinked_report_keeps_its_link_and_updates_the_target(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    target = kedi.write("real/r.json", "stale\n")
    link = kedi.pytester.path / "r.json"
    link.symlink_to(Path("real") / "r.json")
    dangling = kedi.pytester.path / "rows.jsonl"
    dangling.symlink_to(Path("real") / "rows.jsonl")
    kedi.run("--kedi-eval", "--kedi-report", "r.json", "--kedi-rows-jsonl", "rows.jsonl")
    assert link.is_symlink() and dangling.is_symlink()
    assert kedi.json("real/r.json")["suites"][0]["procedure"] == "initials"
    assert target.read_text("utf-8") == link.read_text("utf-8")
    assert (kedi.pytester.path / "real" / "rows.jsonl").read_text("utf-8").count("\n") == 3


@needs_fifo
def test_fifo_report_is_written_through(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    fifo = kedi.pytester.path / "r.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is waiting
    try:
        result = kedi.run("--kedi-eval", "--kedi-report", "r.fifo")
        assert result.ret == pytest.ExitCode.OK
        assert stat.S_ISFIFO(fifo.stat().st_mode)
        data = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert b'"procedure": "initials"' in data


@needs_fifo
def test_fifo_without_reader_is_a_write_error_not_a_hang(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    fifo = kedi.pytester.path / "r.fifo"
    os.mkfifo(fifo)
    result = kedi.run("--kedi-eval", "--kedi-report", "r.fifo")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["kedi: cannot write *r.fifo*FIFO has no reader*"])
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="creating a device node needs root"
)
def test_character_device_is_written_through_not_replaced(kedi: Kedi) -> None:
    kedi.write("demo.kedi", DEMO)
    null = kedi.pytester.path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    result = kedi.run("--kedi-eval", "--kedi-report", "null", "--kedi-rows-jsonl", "null2")
    assert result.ret == pytest.ExitCode.OK
    assert stat.S_ISCHR(null.stat().st_mode)
    assert null.read_bytes() == b""


@pytest.mark.parametrize("option", ["--kedi-report", "--kedi-html", "--kedi-markdown"])
@pytest.mark.parametrize("name", ["demo.kedi", "test_x.py", "link.json"])
def test_report_over_a_source_is_a_usage_error(kedi: Kedi, name: str, option: str) -> None:
    """The HTML and Markdown views too: they overwrote a `.kedi` or `.py` file silently."""
    source = kedi.write("demo.kedi", DEMO)
    (kedi.pytester.path / "link.json").symlink_to("demo.kedi")
    result = kedi.run("--kedi-eval", option, name)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option} {name}: refusing to overwrite a source file*"])
    assert source.read_text("utf-8") == DEMO


@pytest.mark.parametrize(
    ("first", "second"),
    [("--kedi-report", "--kedi-html"), ("--kedi-report", "--kedi-markdown"),
     ("--kedi-html", "--kedi-markdown")],
)  # fmt: skip
def test_two_views_on_one_path_are_a_usage_error(kedi: Kedi, first: str, second: str) -> None:
    """The later one replaced the earlier silently (the JSON report ended up as HTML)."""
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", first, "out.txt", second, "./out.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{first} and {second} name the same file (out.txt)*"])
    assert not (kedi.pytester.path / "out.txt").exists()


@pytest.mark.parametrize("option", ["--kedi-report", "--kedi-html", "--kedi-rows-jsonl"])
def test_a_kedi_report_on_junit_xmls_path_is_a_usage_error(kedi: Kedi, option: str) -> None:
    """pytest's JUnit XML and the Kedi report were written to one file: the later won."""
    kedi.write("demo.kedi", DEMO)
    result = kedi.run("--kedi-eval", "--junitxml", "out.xml", option, "./out.xml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option} and --junitxml name the same file (out.xml)*"])
    assert not (kedi.pytester.path / "out.xml").exists()


@pytest.mark.parametrize(
    ("report", "rows"),
    [("r.json", "r.json"), ("r.json", "sub/../r.json"), ("r.json", "alias.json")],
)
def test_one_path_for_both_reports_is_a_usage_error(kedi: Kedi, report: str, rows: str) -> None:
    kedi.write("demo.kedi", DEMO)
    (kedi.pytester.path / "sub").mkdir()
    (kedi.pytester.path / "alias.json").symlink_to("r.json")
    result = kedi.run("--kedi-eval", "--kedi-report", report, "--kedi-rows-jsonl", rows)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kedi-report and --kedi-rows-jsonl name the same file*"])
    assert not (kedi.pytester.path / "r.json").exists()
