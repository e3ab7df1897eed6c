"""Hooks that pytest-kedi adds to pytest (registered through ``pytest_addhooks``).

Implement them in a ``conftest.py`` or a plugin. Hooks called for an item go through
``item.ihook``, so a ``conftest.py`` only affects the ``.kedi`` files below its directory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.evals import RowResult, SuiteResult


@pytest.hookspec(firstresult=True)
def pytest_kedi_model(config: pytest.Config) -> Any:
    """Return the model used for **every** template of the ``.kedi`` files in scope.

    The result may be a pydantic-ai ``Model`` instance (for example a ``FunctionModel``
    answering from rules, as tests and CI do) or a model name such as
    ``"openai:gpt-4o"``. It overrides ``> model:`` directives in the source and the
    ``--kedi-model`` default (docs/language.md#model-selection). Return ``None`` to keep the
    default.
    Called once per ``.kedi`` file and process, before the file's program is loaded.
    """


def pytest_kedi_row_result(item: pytest.Item, row: RowResult) -> None:
    """Called with each scored row of an ``@eval:`` suite as soon as it finishes.

    ``row`` is a ``pytest_kedi.evals.RowResult`` (index, input, expected, score,
    feedback, error, error_class, duration_s; output: the short reprs of what the suite's
    procedure returned during the row; calls: its model calls under ``--kedi-trace``). It
    is always called in the thread running the item and in dataset order, also with
    ``--kedi-concurrency`` above 1 (a row is delivered as soon as it and every earlier row
    have finished). With ``--kedi-repeat`` it is called once per row, after its last
    repeat (``row.scores`` holds each repeat's score); under ``--kedi-rerun`` carried-over
    rows are delivered too (``row.carried_over``). As pytest does for
    ``pytest_assertion_pass``, the rows are handed out only when some plugin or
    ``conftest.py`` implements this hook when the suite starts (a hook-call recorder
    alone sees no call).
    """


def pytest_kedi_suite_result(item: pytest.Item, result: SuiteResult) -> None:
    """Called once per ``@eval:`` suite after it was scored (or failed before scoring).

    ``result`` is a ``pytest_kedi.evals.SuiteResult``; the call happens before the
    item's verdict (min score, error budget) is applied.
    """
