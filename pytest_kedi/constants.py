"""Names and values every layer agrees on (standard library only).

The per-option environment variables of the pytest plugin (``KEDI_ROWS``, ``KEDI_SPLIT``,
...) are declared with their option in ``pytest_kedi.plugin.options.OPTIONS``; the ones
here are read by more than one layer or outside that table.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "DEFAULT_MAX_ROWS",
    "ENV_ADAPTER",
    "ENV_DEBUG_OPTIMIZED",
    "ENV_EVAL",
    "ENV_HOME",
    "ENV_MODEL",
    "ENV_STEP_SUMMARY",
    "EVAL_SKIP_REASON",
    "RECORD_MODES",
    "REPORT_CASE",
    "REPORT_MODEL",
    "REPORT_SUITE",
    "SECRET_ENV_SUFFIX",
    "SPLITS",
    "HOOK_NOTE",
    "TEST_MODEL",
    "Split",
]

#: The offline default model: pydantic-ai's `TestModel`, which answers without a network.
TEST_MODEL: Final = "test"

#: How a model named by a `pytest_kedi_model` hook is labelled in the header and summary.
HOOK_NOTE: Final = "pytest_kedi_model hook"

#: The attributes of a Kedi item's report that carry its record and its file's default
#: model from an xdist worker to the controller (`pytest_kedi.plugin.transport`); the
#: reports of other items have none of them.
REPORT_SUITE: Final = "kedi_suite"
REPORT_CASE: Final = "kedi_case"
REPORT_MODEL: Final = "kedi_model"

#: Which dataset an eval suite scores: ``auto`` (``test_data: N`` when the suite defines
#: it, else ``data: N``), or one kind forced.
Split = Literal["auto", "data", "test_data"]
SPLITS: Final[tuple[Split, ...]] = ("auto", "data", "test_data")

#: The most rows a dataset may have unless configured otherwise.
DEFAULT_MAX_ROWS: Final = 1_000_000

#: The default model (``provider:model``) when neither a flag nor a `> model:` names one.
ENV_MODEL: Final = "KEDI_ADAPTER_MODEL"
#: The adapter the CLI runs programs with (only ``pydantic`` exists).
ENV_ADAPTER: Final = "KEDI_ADAPTER"
#: Set to run the eval suites (the plugin's ``--kedi-eval``).
ENV_EVAL: Final = "KEDI_EVAL"
#: Why a collected ``@eval:`` suite is skipped without ``--kedi-eval`` (said once a run).
EVAL_SKIP_REASON: Final = "Kedi @eval: suites run only with --kedi-eval (or KEDI_EVAL=1)"
#: The Kedi home directory (its ``registry/`` holds installable modules).
ENV_HOME: Final = "KEDI_HOME"
#: ``1`` prints why a ``.kedi.optimized.json`` artifact was or was not applied.
ENV_DEBUG_OPTIMIZED: Final = "KEDI_DEBUG_OPTIMIZED"
#: GitHub Actions' job summary file (the Markdown report goes there when set).
ENV_STEP_SUMMARY: Final = "GITHUB_STEP_SUMMARY"
#: Environment variables ending so hold credentials (redacted from reports).
SECRET_ENV_SUFFIX: Final = "_API_KEY"
#: ``--kedi-record-mode`` values: model answers from cassettes (off: never)
RECORD_MODES: Final = ("off", "record", "replay", "strict")
