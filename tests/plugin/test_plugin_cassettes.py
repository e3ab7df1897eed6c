"""Record/replay cassettes (``--kedi-record-mode``) under pytest, single-process and -n 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kedi_openai_stub import OpenAIStub, last_user_text
from kedi_plugin_helpers import Kedi

CLASSIFY = """\
@classify(text: str) -> str:
  >> Classify the sentiment of <text> as [label: str]
  = <label>

@eval: classify:
  > data: reviews:
    = `[("great film", "positive"), ("awful film", "negative"), ("fine film", "positive")]`
  > metric: exact(reviews):
    = `classify(reviews) == expected`
"""

SECRET = "sk-test-cassette-secret-0123456789"


def _entries(path: Path) -> dict[str, dict[str, object]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["version"] == 2
    entries: dict[str, dict[str, object]] = document["entries"]
    return entries


def _rows(kedi: Kedi, report: str = "r.json") -> list[dict[str, object]]:
    rows: list[dict[str, object]] = kedi.json(report)["suites"][0]["rows"]
    return rows


def _label(body: dict[str, object]) -> dict[str, str]:
    return {"label": "positive" if "great" in last_user_text(body) else "negative"}


def test_recorded_answers_replay_strictly_without_server_or_key(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    openai_stub.arguments = _label
    kedi.write("classify.kedi", CLASSIFY)
    model = ("--kedi-eval", "--kedi-model", "openai-chat:local")
    recorded = kedi.run(*model, "--kedi-record-mode", "record", "--kedi-report", "a.json")
    recorded.assert_outcomes(passed=1)
    assert len(openai_stub.requests) == 3
    assert any(SECRET in str(headers) for headers, _body in openai_stub.requests)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    text = cassette.read_text(encoding="utf-8")
    assert SECRET not in text and "authorization" not in text.lower()
    entries = _entries(cassette)
    assert len(entries) == 3
    entry = next(iter(entries.values()))
    assert sorted(entry) == ["model", "prompt", "pytest_kedi", "repeat", "response", "usage"]
    assert entry["model"] == "openai-chat:local"  # the name it was given (not openai:)
    assert entry["usage"] == {"requests": 1, "input_tokens": 1, "output_tokens": 1}
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2) + "\n"

    openai_stub.stop()
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")  # as in CI: no key, and the provider's own server
    replayed = kedi.run(*model, "--kedi-record-mode", "strict", "--kedi-report", "b.json")
    replayed.assert_outcomes(passed=1)
    assert len(openai_stub.requests) == 3  # nothing tried the (stopped) server
    assert [row["score"] for row in _rows(kedi, "b.json")] == [1.0, 1.0, 0.0]
    assert _rows(kedi, "b.json") == [
        {**row, "duration_s": new["duration_s"]}
        for row, new in zip(_rows(kedi, "a.json"), _rows(kedi, "b.json"), strict=True)
    ]
    assert cassette.read_text(encoding="utf-8") == text  # a replay leaves the file alone


def test_recording_again_the_same_answers_leaves_the_cassette_alone(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    """Every entry stored when and where it was answered (timestamp, response id, the
    provider URL with any credentials a gateway URL holds) and the provider's tool call id:
    a re-recording rewrote every entry, and a `user:password@` base URL was written."""
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    host = openai_stub.base_url.removeprefix("http://")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://gwuser:gw-password@{host}")
    openai_stub.arguments = _label
    kedi.write("classify.kedi", CLASSIFY)
    model = ("--kedi-eval", "--kedi-model", "openai-chat:local", "--kedi-record-mode", "record")
    kedi.run(*model).assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    text = cassette.read_text(encoding="utf-8")
    for stored in ("gw-password", "gwuser", host, "chatcmpl-", "timestamp"):
        assert stored not in text, stored
    kedi.run(*model).assert_outcomes(passed=1)
    assert len(openai_stub.requests) == 6  # answered again, with other ids
    assert cassette.read_text(encoding="utf-8") == text
    openai_stub.arguments = lambda body: {"label": "positive"}  # one answer changes
    kedi.run(*model).assert_outcomes(passed=1)
    before, after = json.loads(text)["entries"], _entries(cassette)
    assert [key for key in after if after[key] != before[key]] == [
        key for key in after if "great" not in str(after[key]["prompt"])
    ]


@pytest.mark.parametrize("mode", ["replay", "strict"])
def test_a_miss_without_the_providers_key_names_the_missing_key_or_the_miss(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Building the model needs no key when answers come from a cassette; a call that
    would go live (a replay miss) then fails as it would without a cassette."""
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run(
        "--kedi-eval", "--kedi-model", "openai:gpt-4o-mini", "--kedi-record-mode", mode,
        "--kedi-report", "r.json",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    suite = kedi.json("r.json")["suites"][0]
    feedback = str(_rows(kedi)[0]["feedback"])
    if mode == "strict":
        assert suite["errors_by_class"] == {"cassette_miss": 3}
        assert "cassette miss (--kedi-record-mode strict)" in feedback, feedback
    else:
        assert suite["errors_by_class"] == {"model": 3}
        assert "model 'openai:gpt-4o-mini' is not available: UserError:" in feedback
        assert "OPENAI_API_KEY" in feedback
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("mode", ["off", "replay"])
def test_a_replay_miss_without_the_key_calls_no_model_and_spends_no_budget(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A replay miss without the provider's key fails as it would without a cassette (README):
    every row a `model` error naming the key, and no model called. It counted as a model call
    (`models: openai:gpt-4o-mini (1 call)`) and spent `--kedi-max-requests`, so the next row
    was a `budget` error although no request ever left the process."""
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run(
        "--kedi-eval", "--kedi-model", "openai:gpt-4o-mini", "--kedi-record-mode", mode,
        "--kedi-max-requests", "2", "--kedi-report", "r.json",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    report = kedi.json("r.json")
    assert report["suites"][0]["errors_by_class"] == {"model": 3}
    assert report["model_calls"] == {}
    result.stdout.fnmatch_lines(["models: no model calls (default: openai:gpt-4o-mini)"])
    assert not (kedi.pytester.path / "classify.kedi.cassette.json").exists()


def test_strict_miss_is_a_row_error_and_never_a_live_call(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub
) -> None:
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run(
        "--kedi-eval", "--kedi-model", "openai-chat:local", "--kedi-record-mode", "strict",
        "--kedi-report", "r.json",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert openai_stub.requests == []
    suite = kedi.json("r.json")["suites"][0]
    assert suite["errors_by_class"] == {"cassette_miss": 3}
    assert kedi.json("r.json")["model_calls"] == {}  # a miss calls no model
    result.stdout.fnmatch_lines(["models: no model calls (default: openai-chat:local)"])
    feedback = str(_rows(kedi)[0]["feedback"])
    assert "procedure classify" in feedback
    assert "classify.kedi.cassette.json" in feedback
    assert "Classify the sentiment of great film" in feedback
    assert not (kedi.pytester.path / "classify.kedi.cassette.json").exists()


def test_strict_miss_with_the_offline_model_makes_no_call(kedi: Kedi) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    result = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-report", "r.json")
    result.assert_outcomes(passed=1)
    report = kedi.json("r.json")
    assert report["suites"][0]["errors_by_class"] == {"cassette_miss": 3}
    # No model was called (nor answered): the offline model is not flagged as answering.
    assert report["model_calls"] == {}
    result.stdout.fnmatch_lines(["models: no model calls (default: test)"])
    result.stdout.no_fnmatch_line("*synthetic output*")


def test_replay_records_only_the_misses(kedi: Kedi, monkeypatch: pytest.MonkeyPatch) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    monkeypatch.setenv("KEDI_RECORD_MODE", "replay")
    kedi.run("--kedi-eval").assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    first = _entries(cassette)
    assert len(first) == 3
    kedi.write("classify.kedi", CLASSIFY.replace('("fine film", "positive")', '("new", "x")'))
    kedi.run("--kedi-eval").assert_outcomes(passed=1)
    second = _entries(cassette)
    assert len(second) == 4 and set(first) <= set(second)
    assert {entry["prompt"] for entry in second.values()} >= {
        "Classify the sentiment of new as [label]"
    }


def test_changing_the_instructions_misses_only_the_affected_entries(kedi: Kedi) -> None:
    source = CLASSIFY.replace(
        "@eval: classify:",
        "@other(text: str) -> str:\n  >> Other <text> [label: str]\n  = <label>\n\n"
        "@eval: classify:",
    ).replace("classify(reviews) == expected", "classify(reviews) == other(reviews)")
    kedi.write("classify.kedi", source)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    before = _entries(cassette)
    assert len(before) == 6
    changed = source.replace(
        "@classify(text: str) -> str:\n",
        "@classify(text: str) -> str:\n  > instructions: Be brief.\n",
    )
    kedi.write("classify.kedi", changed)
    kedi.run("--kedi-eval", "--kedi-record-mode", "replay").assert_outcomes(passed=1)
    after = _entries(cassette)
    assert len(after) == 9 and set(before) <= set(after)
    new = [entry["prompt"] for key, entry in after.items() if key not in before]
    assert all(str(prompt).startswith("Classify") for prompt in new)


MANY = "\n".join(
    f"""\
@eval: s{n}:
  > data: rows:
    = `[(f"row {n}-{{i}}", "a") for i in range(25)]`
  > metric: m(rows):
    = `ask(rows) == expected`
"""
    for n in range(8)
)


def test_recording_many_rows_across_workers_loses_no_entry(kedi: Kedi) -> None:
    source = "@ask(text: str) -> str:\n  >> Say <text> [label: str]\n  = <label>\n\n" + MANY
    kedi.write("many.kedi", source)
    recorded = kedi.run("--kedi-eval", "--kedi-record-mode", "record")
    recorded.assert_outcomes(passed=8)
    cassette = kedi.pytester.path / "many.kedi.cassette.json"
    entries = _entries(cassette)
    assert len(entries) == 200
    prompts = {entry["prompt"] for entry in entries.values()}
    assert prompts == {f"Say row {n}-{i} [label]" for n in range(8) for i in range(25)}
    replayed = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-report", "r.json")
    replayed.assert_outcomes(passed=8)
    assert all(not suite["errors_by_class"] for suite in kedi.json("r.json")["suites"])


def test_cassette_dir_mirrors_the_kedi_paths(kedi: Kedi) -> None:
    kedi.write("sub/classify.kedi", CLASSIFY)
    kedi.run(
        "--kedi-eval", "--kedi-record-mode", "record", "--kedi-cassette-dir", "tapes"
    ).assert_outcomes(passed=1)
    assert len(_entries(kedi.pytester.path / "tapes/sub/classify.kedi.cassette.json")) == 3
    assert not (kedi.pytester.path / "sub/classify.kedi.cassette.json").exists()


def test_an_ini_cassette_dir_is_relative_to_the_ini_file(kedi: Kedi) -> None:
    """README (Markdown summary for CI): ``kedi_cassette_dir`` from the ini file is relative
    to the ini file's directory, not to where pytest runs."""
    kedi.write("sub/classify.kedi", CLASSIFY)
    kedi.write("conf/pytest.ini", "[pytest]\nkedi_cassette_dir = tapes\n")
    kedi.run(
        "--kedi-eval", "--kedi-record-mode", "record", "-c", "conf/pytest.ini", "--rootdir", "."
    ).assert_outcomes(passed=1)
    assert len(_entries(kedi.pytester.path / "conf/tapes/sub/classify.kedi.cassette.json")) == 3


def test_prune_removes_unused_entries_only_after_a_complete_run(kedi: Kedi) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    assert len(_entries(cassette)) == 3
    kedi.write("classify.kedi", CLASSIFY.replace(', ("fine film", "positive")', ""))
    mode = ("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-prune-cassettes")
    filtered = kedi.run(*mode, "-k", "classify")
    filtered.assert_outcomes(passed=1)
    filtered.stdout.fnmatch_lines(["kedi: cassettes not pruned: -k selects part of the items"])
    node = kedi.run(*mode, "classify.kedi::eval:classify")
    node.stdout.fnmatch_lines(["kedi: cassettes not pruned: node ids select part of the items"])
    collect_only = kedi.run(*mode, "--co")
    collect_only.stdout.fnmatch_lines(["kedi: cassettes not pruned: --collect-only runs no item"])
    assert len(_entries(cassette)) == 3
    complete = kedi.run(*mode)
    complete.assert_outcomes(passed=1)
    complete.stdout.fnmatch_lines(["kedi: cassettes written: classify.kedi.cassette.json"])
    assert len(_entries(cassette)) == 2


def test_prune_is_refused_after_a_run_with_a_skipped_suite(kedi: Kedi) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    kedi.write("conftest.py", "collect_ignore = []\n")
    result = kedi.run(
        "--kedi-record-mode", "strict", "--kedi-prune-cassettes", "-o", "kedi_collect=true"
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["kedi: cassettes not pruned: classify.kedi::eval:classify skipped"]
    )
    assert len(_entries(kedi.pytester.path / "classify.kedi.cassette.json")) == 3


def test_prune_is_refused_after_a_suite_skipped_while_it_ran(kedi: Kedi) -> None:
    """A suite whose dataset calls `pytest.skip` is skipped in its call: its entries were
    not used, and pruning deleted them (only a skip in setup, by a mark, refused it)."""
    kedi.write("classify.kedi", CLASSIFY)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    skipping = CLASSIFY.replace(
        '= `[("great film"', '= `__import__("pytest").skip("no data") or [("great film"'
    )
    kedi.write("classify.kedi", skipping)
    result = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-prune-cassettes")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["kedi: cassettes not pruned: classify.kedi::eval:classify skipped"]
    )
    assert len(_entries(kedi.pytester.path / "classify.kedi.cassette.json")) == 3


def test_bad_record_mode_is_a_usage_error(kedi: Kedi) -> None:
    result = kedi.run("--kedi-eval", "--kedi-record-mode", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--kedi-record-mode (command line): expected one of off, record, replay, strict*"]
    )


def test_prune_empties_the_cassette_of_a_file_that_no_longer_calls_a_model(kedi: Kedi) -> None:
    kedi.write("classify.kedi", CLASSIFY)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    kedi.write("classify.kedi", CLASSIFY.replace("classify(reviews) == expected", "True"))
    pruned = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-prune-cassettes")
    pruned.assert_outcomes(passed=1)
    assert _entries(kedi.pytester.path / "classify.kedi.cassette.json") == {}


def test_prune_is_refused_after_a_rerun_that_carried_rows_over(kedi: Kedi) -> None:
    """Rows carried over by ``--kedi-rerun`` make no model call, so pruning after such a run
    removed their recorded answers, and the next strict replay missed them."""
    kedi.write("classify.kedi", CLASSIFY)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    assert len(_entries(cassette)) == 3
    mode = ("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-prune-cassettes")
    rerun = kedi.run(*mode, "--kedi-rerun", "failures")
    rerun.assert_outcomes(passed=1)
    rerun.stdout.fnmatch_lines(
        ["kedi: cassettes not pruned: --kedi-rerun failures runs part of the rows"]
    )
    assert len(_entries(cassette)) == 3
    replayed = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-report", "r.json")
    replayed.assert_outcomes(passed=1)
    assert not kedi.json("r.json")["suites"][0]["errors_by_class"]


def test_prune_is_refused_after_a_run_whose_request_budget_was_spent(kedi: Kedi) -> None:
    """Calls refused by ``--kedi-max-requests`` were never made: pruning after such a run
    removed the recorded answers of the rows past the budget."""
    kedi.write("classify.kedi", CLASSIFY)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    assert len(_entries(cassette)) == 3
    capped = kedi.run(
        "--kedi-eval", "--kedi-record-mode", "record", "--kedi-prune-cassettes",
        "--kedi-max-requests", "1",
    )  # fmt: skip
    capped.stdout.fnmatch_lines(
        ["kedi: cassettes not pruned: the request budget (--kedi-max-requests 1) was spent"]
    )
    assert len(_entries(cassette)) == 3


FLAKY_PROVIDER = """\
import os

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def respond(messages, info):
    if os.path.exists("down.txt") and "awful" in str(messages[-1].parts[-1].content):
        raise RuntimeError("provider down")
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"label": "negative"})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(respond, model_name="flaky")
"""


def test_prune_keeps_the_recorded_answer_of_a_call_that_failed(kedi: Kedi) -> None:
    """Re-recording while the provider failed one request pruned the answer recorded for
    that request, so the next strict replay missed it."""
    kedi.write("classify.kedi", CLASSIFY)
    kedi.write("conftest.py", FLAKY_PROVIDER)
    kedi.run("--kedi-eval", "--kedi-record-mode", "record").assert_outcomes(passed=1)
    cassette = kedi.pytester.path / "classify.kedi.cassette.json"
    assert len(_entries(cassette)) == 3
    kedi.write("down.txt", "")
    mode = ("--kedi-eval", "--kedi-record-mode", "record", "--kedi-prune-cassettes")
    failing = kedi.run(*mode, "--kedi-report", "r.json")
    assert [row["error_class"] for row in _rows(kedi)] == [None, "model", None]
    assert "cassettes not pruned" not in failing.stdout.str()  # a complete run: it pruned
    assert len(_entries(cassette)) == 3
    (kedi.pytester.path / "down.txt").unlink()
    replayed = kedi.run("--kedi-eval", "--kedi-record-mode", "strict", "--kedi-report", "r.json")
    replayed.assert_outcomes(passed=1)
    assert not kedi.json("r.json")["suites"][0]["errors_by_class"]
