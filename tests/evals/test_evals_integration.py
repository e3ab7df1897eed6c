"""End to end: real .kedi sources loaded by `pytest_kedi.runtime.load`, scored by `run_suite`."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_kedi.evals import EvalOptions, SuiteResult, format_suite_line, run_suite
from pytest_kedi.runtime import load


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # error locations are shown relative to the working directory
    monkeypatch.chdir(tmp_path)


def fields_model(
    answer: Any, delay: float = 0.0, fail: str | None = None, *, hang: bool = False
) -> FunctionModel:
    """Answers every output field with ``answer(prompt, field)``; raises `fail` if set;
    with `hang`, never answers (the request waits until it is cancelled)."""

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if hang:
            await asyncio.Event().wait()
        if delay:
            await asyncio.sleep(delay)
        if fail:
            raise RuntimeError(fail)
        prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        if info.output_tools:
            tool = info.output_tools[0]
            names = tool.parameters_json_schema.get("properties", {})
            args = {name: answer(prompt, name) for name in names}
            return ModelResponse(parts=[ToolCallPart(tool.name, args)])
        return ModelResponse(parts=[TextPart(str(answer(prompt, None)))])

    return FunctionModel(respond)


def score(
    tmp_path: Path,
    source: str,
    options: EvalOptions | None = None,
    model: Any = None,
) -> list[SuiteResult]:
    """Score every suite of `source`, written to ``suite.kedi`` in the working directory."""
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    program = load(str(path), mode="validate", model=model)
    return [
        run_suite(program, suite, options or EvalOptions()) for suite in program.module.eval_suites
    ]


WORD_COUNT = """
    @word_count(text: str) -> int:
      = `len(text.split())`

    @eval: word_count:
      > data: samples:
        = `[("training example", 2), ("one", 5)]`
      > test_data: samples:
        = `[("held out example", 3), ("a b", 2), ("x", 9), ("y", 1)]`
      > metric: exact(samples):
        = `word_count(samples) == expected`
"""


def test_test_data_replaces_data(tmp_path: Path) -> None:
    (result,) = score(tmp_path, WORD_COUNT)
    assert format_suite_line(result) == "- word_count::exact: 0.7500"
    assert (result.split, result.rows_total) == ("test_data", 4)
    (forced,) = score(tmp_path, WORD_COUNT, EvalOptions(split="data"))
    assert format_suite_line(forced) == "- word_count::exact: 0.5000"


def test_mapping_dataset_and_feedback_tuples(tmp_path: Path) -> None:
    (result,) = score(
        tmp_path,
        """
        @split_words(text: str) -> list[str]:
          = `text.split()`

        @eval: split_words:
          > data: cases:
            = `{"short": ["short"], "two words": ["two", "words"], "x y": {"n": 2}}`
          > metric: exact(cases):
            = ```
            if isinstance(cases, tuple):
                return split_words(cases[0]) == cases[1]
            n = len(split_words(cases))
            return (n == expected["n"] and 0.5), f"{n} words"
            ```
        """,
    )
    assert [r.score for r in result.rows] == [1.0, 1.0, 0.5]
    assert [r.expected for r in result.rows] == [None, None, "{'n': 2}"]
    assert format_suite_line(result) == "- split_words::exact: 0.8333 | 2 words"


def test_row_errors_and_their_classes(tmp_path: Path) -> None:
    (result,) = score(
        tmp_path,
        """
        @to_int(text: str) -> int:
          = `int(text)`

        @wrong(text: str) -> int:
          = `text`

        @eval: to_int:
          > data: rows:
            = `[("1", 1), ("abc", 1), ("w", {"k": 1}), ("t", "type"), ("n", "nan"), ("v", None)]`
          > metric: exact(rows):
            = ```
            if rows == "w":
                return expected["missing"]
            if rows == "t":
                return wrong(rows) == 1
            if rows == "n":
                return float("nan")
            if rows == "v":
                return expected
            return to_int(rows) == expected
            ```
        """,
    )
    rows = result.rows
    assert [r.score for r in rows] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert [r.error_class for r in rows] == [
        None, "procedure", "metric", "type", "invalid_score", "metric",
    ]  # fmt: skip
    assert rows[1].feedback == "error: ValueError: invalid literal for int() with base 10: 'abc'"
    assert rows[2].feedback == "error: KeyError: 'missing'"
    assert rows[4].feedback == "error: invalid score: nan"
    assert rows[5].feedback is not None and rows[5].feedback.startswith("error: NameError:")
    assert rows[2].error is not None and rows[2].error.endswith("suite.kedi:13)")
    assert result.errors_by_class == {"invalid_score": 1, "metric": 2, "procedure": 1, "type": 1}
    assert result.completed and result.score == pytest.approx(1 / 6)


def test_a_metric_value_that_is_no_score_is_located_at_the_metric(tmp_path: Path) -> None:
    """The error of a row whose metric gave no score (None, a string, NaN) named no `.kedi`
    line, while every other row error does (``rows[].error``, a failed suite's worst rows)."""
    (result,) = score(
        tmp_path,
        """
        @eval: e:
          > data: rows:
            = `[None, "s", float("nan"), 1.0, 0]`
          > metric: m(rows):
            # a comment line
            = `rows if rows != 0 else 1 / rows`
        """,
    )
    assert [r.error for r in result.rows] == [
        "TypeError: metric must return a bool, a number or a (score, feedback) tuple, "
        "not NoneType (at suite.kedi:4)",
        "TypeError: metric must return a bool, a number or a (score, feedback) tuple, "
        "not str (at suite.kedi:4)",
        "invalid score: nan (at suite.kedi:4)",
        None,
        "ZeroDivisionError: division by zero (at suite.kedi:6)",  # its own line
    ]
    assert result.rows[2].feedback == "error: invalid score: nan"  # Kedi's text


def test_an_exception_message_keeps_its_spaces(tmp_path: Path) -> None:
    """The reading is ``f"error: {type(e).__name__}: {e}"``: `ValueError("  x ")` read
    `error: ValueError: x` (stripped); a message of several lines is still put on one."""
    (result,) = score(
        tmp_path,
        """
        @same(x: int) -> int:
          = `x`

        @eval: same:
          > data: rows:
            = `[(0, 0), (1, 1), (2, 2)]`
          > metric: exact(rows):
            = ```
            if rows == 0:
                raise ValueError("  x ")
            if rows == 1:
                raise Exception(" ")
            raise KeyError  # KeyError's str is its repr: ''
            ```
        """,
    )
    assert [r.feedback for r in result.rows] == [
        "error: ValueError:   x ",
        "error: Exception:  ",
        "error: KeyError: ",
    ]


def test_exceptions_without_a_message_are_named_once(tmp_path: Path) -> None:
    """``raise ValueError()`` in a row reads ``error: ValueError: `` (the form of every row
    error, docs/language.md#scoring), not the type twice; in a dataset too."""
    result, failed = score(
        tmp_path,
        """
        @same(x: int) -> int:
          = `x`

        @bare(x: int) -> int:
          = ```
          raise KeyError()
          ```

        @eval: same:
          > data: rows:
            = `[(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]`
          > metric: exact(rows):
            = ```
            import sys
            if rows == 0:
                raise ValueError()
            if rows == 1:
                sys.exit()
            if rows == 2:
                assert same(rows) == 5
            if rows == 3:
                return bare(rows) == 3
            sys.exit(4)
            ```

        @eval: bare:
          > data: broken:
            = ```
            raise RuntimeError()
            ```
          > metric: exact(broken):
            = `True`
        """,
    )
    assert [r.feedback for r in result.rows] == [
        "error: ValueError: ",
        "error: SystemExit: ",
        "error: AssertionError: ",
        "error: KeyError: ",
        "error: SystemExit: 4",
    ]
    assert [r.error_class for r in result.rows] == [
        "metric", "metric", "metric", "procedure", "metric",
    ]  # fmt: skip
    assert all(
        r.error is not None and r.error.startswith(r.feedback.removeprefix("error: ").rstrip())
        for r in result.rows
    )
    assert failed.error == "data-loading failed for data 'broken' at suite.kedi:29: RuntimeError: "


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "= `[1 / 0]`",
            "data-loading failed for data 'rows' at suite.kedi:6: "
            "ZeroDivisionError: division by zero",
        ),
        (
            '= `"abc"`',
            "data-loading failed for data 'rows' at suite.kedi:5: the dataset is str; it must be a "
            "non-string iterable (list, tuple, generator, set, dict, ...)",
        ),
    ],
)
def test_data_loading_failures_are_suite_errors(tmp_path: Path, body: str, message: str) -> None:
    (result,) = score(
        tmp_path,
        f"""
        @ident(text: str) -> str:
          = `text`

        @eval: ident:
          > data: rows:
            {body}
          > metric: same(rows):
            = `ident(rows) == rows`
        """,
    )
    assert result.error == message
    assert format_suite_line(result) == f"- ident::same: ERROR | {message}"


def test_missing_dataset_reference(tmp_path: Path) -> None:
    (result,) = score(
        tmp_path,
        """
        @ident(text: str) -> str:
          = `text`

        @eval: ident:
          > data: rows:
            = `["a"]`
          > metric: same(samples):
            = `True`
        """,
    )
    assert result.error == (
        "missing dataset reference at suite.kedi:7: metric 'same' names dataset 'samples', "
        "which this suite does not define"
    )


def test_legacy_metric_and_empty_dataset(tmp_path: Path) -> None:
    legacy, empty = score(
        tmp_path,
        """
        @ident(text: str) -> str:
          = `text`

        @eval: ident:
          > metric: sanity:
            = `(0.25, "legacy")`

        @eval: ident:
          > data: rows:
            = `[]`
          > metric: same(rows):
            = `True`
        """,
    )
    assert format_suite_line(legacy) == "- ident::sanity: 0.2500 | legacy"
    assert legacy.split is None and legacy.rows_total == 1
    assert format_suite_line(empty) == "- ident::same: 0.0000 | no examples"


CLASSIFIER = """
    @sentiment(text: str) -> str:
      >> The sentiment of <text> is [label: str]
      = `label`

    @eval: sentiment:
      > data: examples:
        = `[(f"review {i} {'good' if i % 3 else 'bad'}", "positive") for i in range(9)]`
      > metric: accuracy(examples):
        = `sentiment(examples) == expected`
"""


def label(prompt: str, field: str | None) -> str:
    return "positive" if "good" in prompt else "negative"


def test_model_rows_concurrent_equal_sequential(tmp_path: Path) -> None:
    (sequential,) = score(tmp_path, CLASSIFIER, model=fields_model(label, delay=0.01))
    (concurrent,) = score(
        tmp_path, CLASSIFIER, EvalOptions(concurrency=4), model=fields_model(label, delay=0.01)
    )
    assert sequential.score == pytest.approx(6 / 9)
    assert [r.to_json() | {"duration_s": 0} for r in sequential.rows] == [
        r.to_json() | {"duration_s": 0} for r in concurrent.rows
    ]


def test_concurrent_first_calls_share_one_boundary_and_are_all_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows making a program's first model calls together made a boundary each, and the
    calls counted by all but the one kept were lost (``models: ... (N calls)``)."""
    import time

    from pytest_kedi.runtime import model as model_package

    made: list[object] = []

    class SlowToMake(model_package.ModelBoundary):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            time.sleep(0.05)  # every row thread asks for the boundary before one exists
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(model_package, "ModelBoundary", SlowToMake)
    path = tmp_path / "suite.kedi"
    path.write_text(textwrap.dedent(CLASSIFIER).lstrip(), encoding="utf-8")
    program = load(str(path), mode="validate", model=fields_model(label))
    (suite,) = program.module.eval_suites
    result = run_suite(program, suite, EvalOptions(concurrency=9))
    assert result.rows_errored == 0
    assert len(made) == 1
    assert sum(program.model_calls().values()) == 9


def test_model_failures_are_model_errors(tmp_path: Path) -> None:
    (result,) = score(tmp_path, CLASSIFIER, model=fields_model(label, fail="provider down"))
    assert result.errors_by_class == {"model": 9}
    assert result.rows[0].feedback is not None
    assert result.rows[0].feedback.startswith("error: ")
    assert "provider down" in result.rows[0].feedback


def test_slow_model_rows_time_out(tmp_path: Path) -> None:
    (result,) = score(
        tmp_path,
        CLASSIFIER,
        EvalOptions(concurrency=3, timeout=0.1),
        model=fields_model(label, hang=True),
    )
    assert result.errors_by_class == {"timeout": 9}
    assert result.feedback is not None
    assert result.feedback.split("; ")[0] == "error: timeout: row exceeded 0.1s"


def test_the_rows_run_with_the_older_heap_left_out_of_full_collections(tmp_path: Path) -> None:
    # A suite's rows make objects enough to trigger full garbage collections; each one
    # walks only what the suite made, not the whole process (issue 9: a pass over a
    # pytest process's heap cost 3-7 us per row of a 20,000-row suite). The process's
    # own freeze is left alone, and everything is unfrozen after the suite. The dataset
    # is loaded inside the same block: a full collection its rows triggered walked the
    # whole heap and cost a bare `run_suite` 2 us per row of 20,000.
    import gc

    path = tmp_path / "frozen.kedi"
    path.write_text(
        textwrap.dedent(
            """\
            @echo(x: int) -> int:
              = `x`

            @eval: echo:
              > data: rows:
                = `[(i, __import__("gc").get_freeze_count() > 0) for i in range(3)]`
              > metric: frozen(rows):
                = `__import__("gc").get_freeze_count() > 0 and echo(rows) == rows and expected`
            """
        ),
        encoding="utf-8",
    )
    program = load(path, mode="validate")
    (suite,) = program.module.eval_suites
    assert gc.get_freeze_count() == 0
    result = run_suite(program, suite)
    assert result.score == 1.0, result
    assert gc.get_freeze_count() == 0


def test_freezing_new_objects_only_inside_a_block_that_froze_the_heap() -> None:
    # A suite's row reports join the objects its item's block froze (no young-generation
    # collection walks them), and return to the oldest generation with them at its end.
    import gc

    class Made:
        pass

    gc.disable()  # no collection moves an object between generations but the ones below
    try:
        _freeze_new_objects_checks(Made)
    finally:
        gc.enable()


def _freeze_new_objects_checks(made_type: type) -> None:
    import gc

    from pytest_kedi.runtime.heap import freeze_new_objects, older_objects_frozen

    Made = made_type
    freeze_new_objects()  # outside a block: nothing happens
    assert gc.get_freeze_count() == 0
    with older_objects_frozen():
        frozen = gc.get_freeze_count()
        made = Made()
        assert any(obj is made for obj in gc.get_objects(generation=0))
        freeze_new_objects()
        assert gc.get_freeze_count() > frozen
        assert not any(obj is made for obj in gc.get_objects(generation=0))
    assert gc.get_freeze_count() == 0
    assert any(obj is made for obj in gc.get_objects(generation=2))
    # a heap someone else froze: the block leaves it alone, and so does this
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with older_objects_frozen():
            other = Made()
            freeze_new_objects()
            assert gc.get_freeze_count() == frozen
            assert any(obj is other for obj in gc.get_objects(generation=0))
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_nested_frozen_blocks_freeze_once_without_walking_the_heap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An eval item loads its program and scores its suite inside its own frozen block:
    # the inner blocks must not ask for the freeze count, which walks every frozen object
    # (a 1,000-file run took 65 s instead of 6 when each did).
    import gc

    from pytest_kedi.runtime.heap import older_objects_frozen

    asked: list[int] = []
    count = gc.get_freeze_count

    def counted() -> int:
        asked.append(1)
        return count()

    monkeypatch.setattr(gc, "get_freeze_count", counted)
    with older_objects_frozen():
        assert count() > 0
        with older_objects_frozen(), older_objects_frozen():
            assert count() > 0
        assert count() > 0
    assert count() == 0
    assert len(asked) == 1


LAZY_PROCEDURE_FAILURE = """
@mk(i: int) -> int:
  = `10 // i`

@eval: lazy:
  > data: d:
    = ```
    def rows():
        for i in [1, 0]:
            yield (i, mk(i))
    return rows()
    ```
  > metric: m(d):
    = `1`
"""


def test_a_lazy_dataset_whose_procedure_fails_shows_the_dataset_and_its_lines(
    tmp_path: Path,
) -> None:
    """A procedure failing while a dataset's generator was consumed showed only the
    procedure's frames: no dataset frame, no generator line that called it."""
    (result,) = score(tmp_path, LAZY_PROCEDURE_FAILURE)
    assert result.error == (
        "data-loading failed for data 'd' at suite.kedi:2: "
        "ZeroDivisionError: integer division or modulo by zero"
    )
    assert result.exception is not None
    shown = result.exception.render().replace(f"{tmp_path}{os.sep}", "")
    assert shown.splitlines() == [
        "Kedi stack trace:",
        '  File "suite.kedi", line 5, in data d',
        "    > data: d:",
        '  File "suite.kedi", line 9, in data d',
        "    yield (i, mk(i))",
        '  File "suite.kedi", line 1, in mk',
        "    @mk(i: int) -> int:",
        '  File "suite.kedi", line 2, in mk',
        "    = `10 // i`",
        "ZeroDivisionError: integer division or modulo by zero",
    ]


def test_a_datasets_python_lines_that_called_a_failing_procedure_name_the_dataset(
    tmp_path: Path,
) -> None:
    """They read ``in <program>``: a Python line of no procedure took the label of the
    top level, not of the Kedi frame running it (``data d``)."""
    (result,) = score(
        tmp_path,
        """
        @mk(i: int) -> int:
          = `10 // i`

        @eval: eager:
          > data: d:
            = ```
            def f():
                return mk(0)
            return [f()]
            ```
          > metric: m(d):
            = `1`
        """,
    )
    assert result.exception is not None
    shown = result.exception.render().replace(f"{tmp_path}{os.sep}", "").splitlines()
    assert shown[1:9] == [
        '  File "suite.kedi", line 5, in data d',
        "    > data: d:",
        '  File "suite.kedi", line 6, in data d',
        "    = ```",
        '  File "suite.kedi", line 9, in data d',
        "    return [f()]",
        '  File "suite.kedi", line 8, in data d',
        "    return mk(0)",
    ]
    assert "<program>" not in "\n".join(shown)


def test_a_row_raising_an_exception_whose_attribute_reads_raise_is_that_rows_error(
    tmp_path: Path,
) -> None:
    """Its feedback read ``error: RuntimeError: no attr _kedi_call_line``: pytest-kedi's
    own attribute probes of the error ran the class's ``__getattr__``."""
    (result,) = score(
        tmp_path,
        """
        ```
        class Weird(Exception):
            def __getattr__(self, name):
                raise RuntimeError(f"no attr {name}")
        ```

        @eval: e:
          > data: d:
            = `[1]`
          > metric: m(d):
            = `(_ for _ in ()).throw(Weird("row"))`
        """,
    )
    assert [row.feedback for row in result.rows] == ["error: Weird: row"]
    assert result.rows[0].error == "Weird: row (at suite.kedi:11)"
