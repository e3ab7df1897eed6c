"""The README's sample terminal outputs are real: every ``console`` block whose command is
``$ pytest ...`` is run (in a fresh directory holding the README's named ``.kedi`` files and,
when the command names it, a copy of ``examples/``), and its lines must appear, in order and
contiguously, in the real output. Timings are ignored. When pytest-kedi's output changes, the
failure message shows the real output to paste into the README.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass

import pytest
from kedi_plugin_helpers import REPO_ROOT, Kedi

README = REPO_ROOT / "README.md"
_FILE_LABEL = re.compile(r"`([\w.-]+\.kedi)`:\s*$")
_TIMING = re.compile(r" in \d+(\.\d+)?s( \(\d+:\d\d:\d\d\))?")
_SEPARATOR = re.compile(r"^=+ (.*?) =+$")


@dataclass(frozen=True)
class Block:
    lang: str
    label: str  # the last non-blank line before the fence
    lines: tuple[str, ...]
    line_no: int


def _blocks() -> list[Block]:
    blocks: list[Block] = []
    lines = README.read_text(encoding="utf-8").splitlines()
    label = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            start = i
            body: list[str] = []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append(Block(line[3:].strip(), label, tuple(body), start + 1))
            label = ""
        elif line.strip():
            label = line
        i += 1
    return blocks


def _named_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for block in _blocks():
        match = _FILE_LABEL.search(block.label)
        if block.lang == "kedi" and match:
            files[match[1]] = "\n".join(block.lines) + "\n"
    return files


def _samples() -> list[Block]:
    return [b for b in _blocks() if b.lang == "console" and b.lines[0].startswith("$ pytest ")]


def _normal(line: str) -> str:
    line = _TIMING.sub(" in <T>", line.rstrip())
    if line.startswith("usage: "):  # a FunctionModel's token counts are pydantic-ai's estimates
        line = re.sub(r"\d+ (input|output) tokens", r"<N> \1 tokens", line)
    separator = _SEPARATOR.match(line)
    return f"== {separator[1]} ==" if separator else line


def test_readme_names_its_sample_files() -> None:
    assert {"counts.kedi", "scores.kedi", "demo.kedi"} <= set(_named_files())
    assert len(_samples()) >= 5


@pytest.mark.single_process("the README's samples are runs without -n")
@pytest.mark.parametrize("sample", _samples(), ids=lambda b: b.lines[0][2:])
def test_readme_sample_output_is_real(kedi: Kedi, sample: Block) -> None:
    for name, text in _named_files().items():
        kedi.write(name, text)
    args = shlex.split(sample.lines[0][2:])[1:]
    if any(arg.startswith("examples") for arg in args):
        shutil.copytree(REPO_ROOT / "examples", kedi.pytester.path / "examples")
    result = kedi.run(*args)
    expected = [_normal(line) for line in sample.lines[1:]]
    real = [_normal(line) for line in result.outlines]
    assert len(expected) >= 3
    windows = (real[i : i + len(expected)] for i in range(len(real) - len(expected) + 1))
    assert expected in windows, (
        f"README.md line {sample.line_no}: the sample for `{sample.lines[0][2:]}` is not what "
        "pytest prints; the real output is:\n" + "\n".join(result.outlines)
    )


def test_readme_counts_the_modules_loading_the_plugin_imports() -> None:
    """The README's Performance section said loading the plugin imports 28 of pytest-kedi's
    modules while it imported 34: the number is the one a process importing pytest and then
    the plugin has."""
    import subprocess
    import sys

    claimed = re.search(r"\((\d+) of its modules", README.read_text(encoding="utf-8"))
    assert claimed, "README.md no longer says how many modules loading the plugin imports"
    code = (
        "import sys, pytest, pytest_kedi.plugin\n"
        "print(sum(1 for m in sys.modules if m.split('.')[0] == 'pytest_kedi'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert int(out) == int(claimed[1])


_CONFTEST = """
import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def rules(messages, info):
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"answer": "4"})])


@pytest.hookimpl(optionalhook=True)
def pytest_kedi_model(config):
    return FunctionModel(rules, model_name="rules")
"""

_QA = """\
@answer(q: str) -> str:
  >> <q> [answer]
  = <answer>

@eval: answer:
  > data: questions:
    = `[("What is 2 + 2?", "4"), ("2 + 3?", "5")]`
  > metric: exact_match(questions):
    = `answer(questions) == expected`

@test: answer:
  > case: two_words:
    `assert answer("x") == "4"`
"""


def _readme_json(after: str) -> object:
    import json

    block = next(b for b in _blocks() if b.lang == "json" and after in b.label)
    return json.loads("\n".join(block.lines))


def _paths(value: object, prefix: str = "") -> list[str]:
    """Every key's path, in order, recursively (a list by its first item); the keys of
    `model_calls` and `errors_by_class` are data (model names, error classes), not format."""
    if isinstance(value, dict) and not prefix.endswith(("model_calls.", "errors_by_class.")):
        return [
            p
            for key, item in value.items()
            for p in [prefix + key, *_paths(item, prefix + key + ".")]
        ]
    if isinstance(value, list) and value:
        return _paths(value[0], prefix.rstrip(".") + "[]." if prefix else "[].")
    return []


@pytest.mark.single_process("a report's shape, not how it was made")
def test_readme_json_report_example_has_the_real_keys(kedi: Kedi) -> None:
    """The README's JSON report example has every key of a real `--kedi-report`, in the same
    order and nesting (the `errors` list, a suite's `failure`, a row's `calls` ...)."""
    import json

    kedi.write("conftest.py", _CONFTEST)
    kedi.write("evals/qa.kedi", _QA)
    kedi.write("evals/broken.kedi", "@f(x) -> int:\n  = `(x`\n")
    kedi.run("--kedi-eval", "--kedi-trace", "--kedi-report=r.json", "--kedi-rows-jsonl=r.jsonl",
             "evals")  # fmt: skip
    real = json.loads((kedi.pytester.path / "r.json").read_text(encoding="utf-8"))
    readme = _readme_json("refuse a version-1 report in one line")
    assert isinstance(readme, dict)
    assert _paths(readme) == _paths(real), (
        "README.md's JSON report example drifted from a real report:\n" + json.dumps(real, indent=2)
    )
    # "Each rows-JSONL object has the row keys above plus nodeid, procedure, metric and split."
    line = (kedi.pytester.path / "r.jsonl").read_text(encoding="utf-8").splitlines()[0]
    row_keys = list(readme["suites"][0]["rows"][0])
    assert list(json.loads(line)) == ["nodeid", "procedure", "metric", "split", *row_keys]
