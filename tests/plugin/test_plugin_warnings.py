"""No warnings of our own under ``-W error`` and ``python -X dev`` (issue 7 item 15).

Model I/O runs on one event loop owned by the session and closed when it ends, so
concurrent rows, timed rows and Kedi procedures called from code that already runs an
event loop leave no unclosed loop, transport or socket behind.
"""

from __future__ import annotations

import pytest
from kedi_plugin_helpers import Kedi

MODEL_SUITE = """\
@label(text: str) -> str:
  >> Label the text.
  Text: <text>
  Label: [label: str]
  = `label`

@test: label:
  > case: answers:
    `assert isinstance(label("hi"), str)`

@eval: label:
  > data: texts:
    = `["a", "b", "c", "d", "e", "f"]`
  > metric: answered(texts):
    = `isinstance(label(texts), str)`
"""

ASYNC_CALLER = """\
import asyncio
from pathlib import Path

from pytest_kedi.runtime import load


def test_procedure_called_inside_a_running_loop():
    program = load(Path(__file__).with_name("labels.kedi"), mode="validate")
    label = program.procedures["label"]

    async def main():
        return label("inside a loop")

    assert isinstance(asyncio.run(main()), str)
"""


@pytest.mark.parametrize(
    "options",
    [
        (),
        ("--kedi-concurrency", "3"),
        ("--kedi-timeout", "30"),
        ("--kedi-concurrency", "3", "--kedi-timeout", "30"),
    ],
    ids=["sequential", "concurrency", "timeout", "both"],
)
def test_a_green_model_run_is_warning_free_under_w_error(
    kedi: Kedi, monkeypatch: pytest.MonkeyPatch, options: tuple[str, ...]
) -> None:
    monkeypatch.setenv("PYTHONDEVMODE", "1")  # python -X dev: ResourceWarnings are shown
    kedi.write("labels.kedi", MODEL_SUITE)
    kedi.write("test_async_caller.py", ASYNC_CALLER)
    result = kedi.subprocess("-W", "error", "--kedi-eval", "-p", "no:cacheprovider", *options)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, output
    result.assert_outcomes(passed=3)
    for marker in ("ResourceWarning", "unclosed", "Unraisable", "Exception ignored"):
        assert marker not in output
