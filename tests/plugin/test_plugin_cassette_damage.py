"""Cassettes edited by hand or damaged: each fault is a row error naming the cassette and
the entry, single-process and -n 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kedi_plugin_helpers import CLASSIFY, Kedi


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda entry: entry.pop("response"), "no 'response'"),
        (lambda entry: entry["response"].pop("parts"), "response.parts: Field required"),
        (lambda entry: entry.__setitem__("response", []), "response: *"),
        (
            lambda entry: entry["response"]["usage"].__setitem__("input_tokens", -5),
            "response.usage.input_tokens: -5 is not a count (0 or more)",
        ),
        (
            lambda entry: entry["response"]["usage"].__setitem__("output_tokens", True),
            "response.usage.output_tokens: true is not a count",
        ),
        (
            lambda entry: entry["response"]["usage"].__setitem__("details", {"reasoning": -1}),
            "response.usage.details.reasoning: -1 is not a count (0 or more)",
        ),
    ],
    ids=[
        "no-response",
        "no-parts",
        "response-not-an-object",
        "negative-tokens",
        "boolean-tokens",
        "negative-details",
    ],
)
def test_an_entry_missing_a_field_is_a_located_row_error(
    kedi: Kedi, damage: object, says: str
) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    document = json.loads(cassette.read_text(encoding="utf-8"))
    (key,) = [k for k, e in document["entries"].items() if "great" in e["prompt"]]
    damage(document["entries"][key])  # type: ignore[operator]
    cassette.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    result = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    rows = kedi.json("r.json")["suites"][0]["rows"]
    assert rows[1]["error"] is None  # the other rows still run
    error = rows[0]["error"]
    assert rows[0]["score"] == 0.0 and rows[0]["feedback"] == f"error: {error}"
    assert error.startswith(
        f"KediModelError: classify.kedi:2: cassette classify.kedi.cassette.json is not a "
        f"pytest-kedi cassette: entry {key[:12]}: "
    ), error
    assert "KeyError" not in error and "model call failed" not in error
    result.stdout.fnmatch_lines([f"*entry {key[:12]}: {says}*"])
    # the damaged entry's call reached no model: only the other row's counts
    assert kedi.json("r.json")["model_calls"] == {"test": 1}


@pytest.mark.parametrize("mode", ["strict", "replay"])
def test_an_unreadable_cassette_calls_no_model(kedi: Kedi, mode: str) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    kedi.write("classify.kedi.cassette.json", '{"entries": {"ab')
    result = kedi.run("--kedi-eval", "--kedi-record-mode", mode, "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    report = kedi.json("r.json")
    rows = report["suites"][0]["rows"]
    assert [row["error"] for row in rows] == [
        "KediModelError: classify.kedi:2: cassette classify.kedi.cassette.json is not a "
        "pytest-kedi cassette: Unterminated string starting at: line 1 column 14 (char 13)"
    ] * 2
    # no model was called: the offline model is not counted nor flagged as answering
    assert report["model_calls"] == {}
    result.stdout.fnmatch_lines(["models: no model calls (default: test)"])
    result.stdout.no_fnmatch_line("*synthetic output*")


def test_a_cassette_that_cannot_be_written_does_not_stop_the_others(kedi: Kedi) -> None:
    kedi.write("a/classify.kedi", CLASSIFY)
    kedi.write("b/classify.kedi", CLASSIFY)
    kedi.write("a/classify.kedi.cassette.json", "{bad")
    result = kedi.run("--kedi-eval", "--kedi-record-mode", "record")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "kedi: cannot write cassettes: cassette a/classify.kedi.cassette.json is not a "
            "pytest-kedi cassette: *",
            "kedi: cassettes written: b/classify.kedi.cassette.json",
        ]
    )
    assert (kedi.pytester.path / "a/classify.kedi.cassette.json").read_text() == "{bad"
    assert (
        len(
            json.loads((kedi.pytester.path / "b/classify.kedi.cassette.json").read_text())[
                "entries"
            ]
        )
        == 2
    )
    # the recordings of b replay
    strict = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "b", "--kedi-report", "r.json")
    assert kedi.json("r.json")["suites"][0]["errors_by_class"] == {}
    strict.assert_outcomes(passed=1)


def _unwritable_dir(root: Path) -> str:
    """A directory no file can be created in, as pytest-kedi's runs see it (relative to
    ``root``, where they run, or absolute); the test is skipped if there is none."""
    folder = root / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate, shown in ((folder, "read-only"), (Path("/sys"), "/sys")):
        try:
            (candidate / ".kedi-probe").touch()
        except OSError:
            return shown
        (candidate / ".kedi-probe").unlink()
    pytest.skip("no directory here refuses new files")


def test_an_unwritable_cassette_dir_is_named_not_the_temporary_file(kedi: Kedi) -> None:
    """It said ``[Errno 13] Permission denied: '<dir>/.classify.kedi.cassette.json.x1y2.tmp'``."""
    kedi.write("classify.kedi", CLASSIFY)
    folder = _unwritable_dir(kedi.pytester.path)
    result = kedi.run(
        "--kedi-eval", "--kedi-record-mode", "record", f"--kedi-cassette-dir={folder}"
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [f"kedi: cannot write cassettes: {folder}/classify.kedi.cassette.json: Permission denied"]
    )
    result.stdout.no_fnmatch_line("*.tmp*")


def test_a_cassette_dir_that_is_a_file_is_named_without_errno(kedi: Kedi) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    kedi.write("blocker", "")
    result = kedi.run("--kedi-eval", "--kedi-record-mode", "record", "--kedi-cassette-dir=blocker")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "kedi: cannot write cassettes: cannot read cassette "
            "blocker/classify.kedi.cassette.json: Not a directory"
        ]
    )
    result.stdout.no_fnmatch_line("*Errno*")
