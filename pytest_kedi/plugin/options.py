"""Command-line options and typed ini entries, declared once in `OPTIONS`.

Every setting is one `Option` (its flag, environment variable, ini entry, parser and
default); `pytest_kedi.plugin.resolution` registers them with pytest and resolves them
command line > environment > ini > default into `KediSettings`. A bad value is a usage
error naming the option and where it came from:
``kedi_min_score (ini file): expected a number, got 'abc'``.

The ini entries are typed (``bool``/``float``/``int``/``linelist``/``string``) so pytest 9's
native TOML table (``[tool.pytest]``) accepts ``kedi_min_score = 0.8`` and friends.
Adding an option: one `Option` in `OPTIONS` (with its README ``meaning``), the matching
`KediSettings` field (`settings.py`) and, if new, its value parser (`optionvalues.py`);
then regenerate the README's options table with
``python -m pytest_kedi.plugin.options_table --write README.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pytest_kedi.constants import (
    DEFAULT_MAX_ROWS,
    ENV_EVAL,
    ENV_MODEL,
    RECORD_MODES,
    SPLITS,
)
from pytest_kedi.plugin.optionvalues import (
    GATES,
    PROGRESS_MODES,
    RERUN_MODES,
    ROWS_MODES,
    MaxErrors,
    parse_bool,
    parse_choice,
    parse_count,
    parse_float,
    parse_interval,
    parse_markdown,
    parse_max_drop,
    parse_max_errors,
    parse_min_scores,
    parse_model,
    parse_path,
    parse_positive_int,
    parse_shard,
    parse_timeout,
)

__all__ = ["ENV_EVAL", "ENV_MODEL", "OPTIONS", "ROWS_MODES", "SPLITS", "MaxErrors", "Option"]


IniType = Literal["string", "linelist", "bool", "int", "float"]

# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: where it can be given, how it is parsed, and its default."""

    field: str  # the `KediSettings` field
    name: str  # argparse dest and ini name; the flag is ``--`` + name with ``-``
    parse: Callable[[object, str], Any]
    default: Any
    help: str  # command-line help ("" = no command-line flag)
    env: str | None = None
    ini_type: IniType | None = None  # None = no ini entry
    ini_help: str = ""
    metavar: str | None = None
    flag_is_switch: bool = False  # ``--kedi-eval`` takes no value
    meaning: str = ""  # the README options table's "Meaning" cell (Markdown)
    shown_default: str = ""  # its "Default" cell (Markdown); "" = derived from `default`

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


OPTIONS: tuple[Option, ...] = (
    Option(
        "eval_enabled", "kedi_eval", parse_bool, False,
        "collect .kedi files and run their test cases and @eval: suites (env KEDI_EVAL=1 does "
        "the same).",
        env=ENV_EVAL, flag_is_switch=True,
        meaning="collect `.kedi` files and run their test cases and eval suites",
        shown_default="off",
    ),
    Option(
        "collect", "kedi_collect", parse_bool, False, "",
        ini_type="bool",
        ini_help="collect .kedi files (test cases run; eval suites are skipped without "
        "--kedi-eval).",
        meaning="collect `.kedi` files; run their test cases, skip their eval suites",
        shown_default="`false`",
    ),
    Option(
        "rows_mode", "kedi_rows", parse_choice(ROWS_MODES), "auto",
        "how eval rows are reported: as sub-results (subtests), only in the summary "
        "(summary), or auto: summary under VS Code, PyCharm/TeamCity and report plugins "
        "that mishandle sub-results (--html, --json-report, --alluredir), else subtests. "
        "Env KEDI_ROWS, ini kedi_rows; default auto.",
        env="KEDI_ROWS", ini_type="string", ini_help="row reporting: auto, subtests or summary.",
        metavar="{" + ",".join(ROWS_MODES) + "}",
        meaning="how eval rows are reported: `subtests` (sub-results), `summary` (only in the "
        "summary) or `auto` (`summary` under IDEs and report plugins that mishandle "
        "sub-results)",
    ),
    Option(
        "min_score", "kedi_min_score", parse_float, None,
        "fail an eval suite whose score is below F (env KEDI_MIN_SCORE, ini kedi_min_score; "
        "per-suite overrides in ini kedi_min_scores).",
        env="KEDI_MIN_SCORE", ini_type="float", ini_help="minimum score of every eval suite.",
        metavar="F",
        meaning="fail an eval suite whose score is below F",
    ),
    Option(
        "min_scores", "kedi_min_scores", parse_min_scores, (), "",
        ini_type="linelist",
        ini_help="per-suite minimum scores, one 'NODEID-PATTERN = F' per line (fnmatch, node "
        "ids relative to the rootdir or to this file's directory); the first matching line "
        "wins over kedi_min_score.",
        meaning="per-suite `NODEID-PATTERN = F` lines (fnmatch); the first match wins over "
        "`kedi_min_score`",
    ),
    Option(
        "gate", "kedi_gate", parse_choice(GATES), "mean",
        "what the min score applies to: the suite's mean score, or the lower bound of its 95%% "
        "confidence interval (env KEDI_GATE, ini kedi_gate; default mean).",
        env="KEDI_GATE", ini_type="string", ini_help="min score applies to: mean or lower.",
        metavar="{" + ",".join(GATES) + "}",
        meaning="what the min score applies to: the suite's `mean`, or the `lower` bound of its "
        "95% confidence interval",
    ),
    Option(
        "max_errors", "kedi_max_errors", parse_max_errors, None,
        "fail an eval suite with more than N errored rows: a whole N is a count (0: no "
        "errored row), 0 < N < 1 a fraction of the rows (env KEDI_MAX_ERRORS, ini "
        "kedi_max_errors).",
        env="KEDI_MAX_ERRORS", ini_type="float",
        ini_help="errored rows allowed per suite: a whole count (0: none), or a fraction "
        "between 0 and 1.",
        metavar="N",
        meaning="fail an eval suite with more errored rows (a whole N: a count; 0 < N < 1: a "
        "fraction of the rows)",
    ),
    Option(
        "baseline_path", "kedi_baseline", parse_path, None,
        "compare the run with an earlier --kedi-report JSON: per-suite score deltas and the "
        "rows that regressed or improved, in the kedi summary and the report (env "
        "KEDI_BASELINE, ini kedi_baseline).",
        env="KEDI_BASELINE", ini_type="string", ini_help="path of a baseline JSON report.",
        metavar="PATH",
        meaning="compare the run with an earlier `--kedi-report` JSON: score deltas and "
        "regressed/improved rows in the `kedi` summary and the report",
    ),
    Option(
        "max_drop", "kedi_max_drop", parse_max_drop, None,
        "with --kedi-baseline, fail an eval suite whose score fell by more than D "
        "(env KEDI_MAX_DROP, ini kedi_max_drop).",
        env="KEDI_MAX_DROP", ini_type="float",
        ini_help="largest score drop allowed against the baseline.", metavar="D",
        meaning="with `--kedi-baseline`: fail an eval suite whose score fell by more than D",
    ),
    Option(
        "shard", "kedi_shard", parse_shard, None,
        "run only the K-th of N shares of the Kedi items (suites and cases dealt out by node "
        "id), for a CI matrix whose reports `pytest-kedi merge` joins (env KEDI_SHARD).",
        env="KEDI_SHARD", metavar="K/N",
        meaning="run only the K-th of N shares of the Kedi items (by node id; Python tests "
        "are not sharded); merge the shards' reports with `pytest-kedi merge`",
    ),
    Option(
        "model", "kedi_model", parse_model, None,
        "default pydantic-ai model for templates, e.g. openai:gpt-4o "
        "(env KEDI_ADAPTER_MODEL, ini kedi_model; default: the offline 'test' model).",
        env=ENV_MODEL, ini_type="string", ini_help="default pydantic-ai model for templates.",
        metavar="MODEL",
        meaning="default pydantic-ai model for templates (a source `> model:` still wins)",
        shown_default="`test` (offline)",
    ),
    Option(
        "record_mode", "kedi_record_mode", parse_choice(RECORD_MODES), "off",
        "model answers from cassettes: off (call the model), record (call and store every "
        "answer), replay (answer from the cassette, call and store on a miss) or strict (answer "
        "only from the cassette; a miss is a row error of class cassette_miss) "
        "(env KEDI_RECORD_MODE, ini kedi_record_mode).",
        env="KEDI_RECORD_MODE", ini_type="string",
        ini_help="model answers from cassettes: off, record, replay or strict.",
        metavar="{" + ",".join(RECORD_MODES) + "}",
        meaning="model answers from cassettes: `off`, `record` (call, store every answer), "
        "`replay` (answer from the cassette; call and store on a miss) or `strict` (a miss is a "
        "row error of class `cassette_miss`, never a live call)",
    ),
    Option(
        "cassette_dir", "kedi_cassette_dir", parse_path, None,
        "keep cassettes under DIR (mirroring the .kedi files' paths from the rootdir) instead "
        "of beside each .kedi file (env KEDI_CASSETTE_DIR, ini kedi_cassette_dir).",
        env="KEDI_CASSETTE_DIR", ini_type="string", ini_help="directory of the cassettes.",
        metavar="DIR",
        meaning="keep cassettes under DIR instead of beside each `.kedi` file "
        "(`x.kedi.cassette.json`)",
        shown_default="beside the `.kedi` file",
    ),
    Option(
        "prune_cassettes", "kedi_prune_cassettes", parse_bool, False,
        "after a complete run (nothing deselected, filtered, skipped, interrupted or failing "
        "to collect), remove the cassette entries no model call used (env "
        "KEDI_PRUNE_CASSETTES=1).",
        env="KEDI_PRUNE_CASSETTES", flag_is_switch=True,
        meaning="after a complete run, remove the cassette entries no model call used",
        shown_default="off",
    ),
    Option(
        "retries", "kedi_retries", parse_count, 0,
        "retry a model request that failed transiently (HTTP 408, 429, 5xx, connection "
        "errors, provider timeouts) up to N times, with exponential backoff and jitter or the "
        "provider's Retry-After (env KEDI_RETRIES, ini kedi_retries; default 0).",
        env="KEDI_RETRIES", ini_type="int", ini_help="retries of a transient model failure.",
        metavar="N",
        meaning="retries of a transient model failure (HTTP 408/429/5xx, connection error, "
        "timeout), with exponential backoff and jitter or the provider's `Retry-After`",
    ),
    Option(
        "max_requests", "kedi_max_requests", parse_positive_int, None,
        "issue at most N model requests in the run (retries included; answers replayed from "
        "a cassette are free); the calls after that error with class budget. Under "
        "pytest-xdist each worker gets an equal share of N (env KEDI_MAX_REQUESTS, ini "
        "kedi_max_requests).",
        env="KEDI_MAX_REQUESTS", ini_type="int", ini_help="most model requests per run.",
        metavar="N",
        meaning="most model requests the run issues (retries included); later calls are row "
        "errors of class `budget`; under xdist each worker gets an equal share",
        shown_default="no limit",
    ),
    Option(
        "split", "kedi_split", parse_choice(SPLITS), "auto",
        "dataset to score: auto (test_data when present, else data), data or test_data "
        "(env KEDI_SPLIT, ini kedi_split; default auto).",
        env="KEDI_SPLIT", ini_type="string", ini_help="dataset to score: auto, data or test_data.",
        metavar="{" + ",".join(SPLITS) + "}",
        meaning="dataset scored: `auto` (`test_data` when present, else `data`), `data` or "
        "`test_data`",
    ),
    Option(
        "concurrency", "kedi_concurrency", parse_positive_int, 1,
        "run up to N rows of a suite at once (env KEDI_CONCURRENCY, ini kedi_concurrency; "
        "default 1 = sequential, Kedi's semantics).",
        env="KEDI_CONCURRENCY", ini_type="int", ini_help="rows run at once per suite.",
        metavar="N",
        meaning="rows of a suite run at once (`1`: sequential)",
    ),
    Option(
        "timeout", "kedi_timeout", parse_timeout, None,
        "time limit per row; an overrunning row scores 0.0 (env KEDI_TIMEOUT, "
        "ini kedi_timeout). Loading a suite's dataset gets the same number of seconds.",
        env="KEDI_TIMEOUT", ini_type="float", ini_help="time limit per row, in seconds.",
        metavar="SECONDS",
        meaning="seconds per row (an overrunning row scores 0.0) and for loading a dataset",
    ),
    Option(
        "max_rows", "kedi_max_rows", parse_positive_int, DEFAULT_MAX_ROWS,
        "fail a suite whose dataset has more than N rows (env KEDI_MAX_ROWS, "
        "ini kedi_max_rows; default 1000000).",
        env="KEDI_MAX_ROWS", ini_type="int", ini_help="most rows a dataset may have.",
        metavar="N",
        meaning="fail a suite whose dataset has more rows",
    ),
    Option(
        "repeat", "kedi_repeat", parse_positive_int, 1,
        "run every row N times; a row's score is the mean of its repeats (env KEDI_REPEAT, "
        "ini kedi_repeat; default 1).",
        env="KEDI_REPEAT", ini_type="int", ini_help="runs of every eval row.", metavar="N",
        meaning="runs of every row; a row scores the mean of its repeats, and differing repeats "
        "make it flaky",
    ),
    Option(
        "rerun", "kedi_rerun", parse_choice(RERUN_MODES), None,
        "run again only the rows that errored (errors) or also those that scored below "
        "--kedi-row-min-score (failures) in the previous run of each suite; the other rows' "
        "results are carried over (env KEDI_RERUN).",
        env="KEDI_RERUN", metavar="{" + ",".join(RERUN_MODES) + "}",
        meaning="run again only the rows that errored (`errors`), or errored or scored below "
        "the row min score (`failures`), in the previous run of each suite; carry the others over",
    ),
    Option(
        "row_min_score", "kedi_row_min_score", parse_float, 1.0,
        "a row scoring below F is a failure for --kedi-rerun failures (env KEDI_ROW_MIN_SCORE, "
        "ini kedi_row_min_score; default 1.0).",
        env="KEDI_ROW_MIN_SCORE", ini_type="float",
        ini_help="rows below this score are rerun by --kedi-rerun failures.", metavar="F",
        meaning="a row scoring below F is rerun by `--kedi-rerun failures`",
    ),
    Option(
        "report_path", "kedi_report", parse_path, None,
        "write the eval and test results as one JSON document (schema version 3).",
        metavar="PATH",
        meaning="write the results as one JSON document (schema version 3)",
    ),
    Option(
        "rows_jsonl_path", "kedi_rows_jsonl", parse_path, None,
        "write one JSON object per eval row.", metavar="PATH",
        meaning="write one JSON object per eval row",
    ),
    Option(
        "html_path", "kedi_html", parse_path, None,
        "write a self-contained HTML report of the eval suites (env KEDI_HTML, "
        "ini kedi_html).",
        env="KEDI_HTML", ini_type="string", ini_help="path of the HTML report.", metavar="PATH",
        meaning="write a self-contained HTML report of the eval suites",
    ),
    Option(
        "markdown_path", "kedi_markdown", parse_markdown, None,
        "write a Markdown summary of the eval suites (env KEDI_MARKDOWN, ini "
        "kedi_markdown). Without it, the summary is appended to $GITHUB_STEP_SUMMARY when "
        "set; 'off' disables both.",
        env="KEDI_MARKDOWN", ini_type="string",
        ini_help="path of the Markdown summary, or 'off'.", metavar="PATH",
        meaning="write a Markdown summary of the eval suites; without it, the summary is appended "
        "to `$GITHUB_STEP_SUMMARY` when set; `off` disables both",
    ),
    Option(
        "trace", "kedi_trace", parse_bool, False,
        "record each model call an eval row makes (model, prompt, instructions, answer, "
        "tokens, duration) in the row records (env KEDI_TRACE=1, ini kedi_trace).",
        env="KEDI_TRACE", ini_type="bool", flag_is_switch=True,
        ini_help="record each model call of every eval row in the row records.",
        meaning="record each model call of every eval row (model, rendered prompt, "
        "instructions, answer, tokens, duration) as the row's `calls`",
        shown_default="off",
    ),
    Option(
        "progress", "kedi_progress", parse_choice(PROGRESS_MODES), "auto",
        "show the progress of a running eval suite: auto (unless -q), on or off. On a "
        "terminal one status line updates in place; elsewhere a plain line is printed every "
        "kedi_progress_interval seconds (env KEDI_PROGRESS, ini kedi_progress).",
        env="KEDI_PROGRESS", ini_type="string",
        ini_help="progress of running eval suites: auto, on or off.",
        metavar="{" + ",".join(PROGRESS_MODES) + "}",
        meaning="progress of a running eval suite (rows done, errored, mean score, elapsed, "
        "ETA): one status line updated in place on a terminal, else a plain line every "
        "`kedi_progress_interval` seconds; `auto`: off under `-q`",
    ),
    Option(
        "progress_interval", "kedi_progress_interval", parse_interval, 10.0, "",
        env="KEDI_PROGRESS_INTERVAL", ini_type="float",
        ini_help="seconds between plain progress lines when not on a terminal (env "
        "KEDI_PROGRESS_INTERVAL; default 10).",
        meaning="seconds between plain progress lines when the output is not a terminal "
        "(`0`: after every row); suites that finish sooner print none",
        shown_default="`10`",
    ),
    Option(
        "debug", "kedi_debug", parse_bool, False,
        "show the traceback of an internal error in the Kedi parser, for a bug report "
        "(env KEDI_DEBUG=1 does the same).",
        env="KEDI_DEBUG", flag_is_switch=True,
        meaning="show the traceback of an internal error in the Kedi parser (for a bug report)",
    ),
)  # fmt: skip
