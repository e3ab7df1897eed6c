"""Command-line options, typed ini entries and their resolution into `KediSettings`.

Every setting resolves command line > environment > ini > default. The ini entries are
typed (``bool``/``float``/``int``/``linelist``/``string``) so pytest 9's native TOML
table (``[tool.pytest]``) accepts ``kedi_min_score = 0.8`` and friends.
"""

from __future__ import annotations

import fnmatch
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "ENV_EVAL",
    "ENV_MODEL",
    "ROWS_MODES",
    "SPLITS",
    "KediSettings",
    "MaxErrors",
    "register",
    "resolve",
]

ENV_EVAL = "KEDI_EVAL"
ENV_MODEL = "KEDI_ADAPTER_MODEL"
ENV_ROWS = "KEDI_ROWS"
ENV_MIN_SCORE = "KEDI_MIN_SCORE"
ENV_MAX_ERRORS = "KEDI_MAX_ERRORS"
ENV_SPLIT = "KEDI_SPLIT"
ENV_CONCURRENCY = "KEDI_CONCURRENCY"
ENV_TIMEOUT = "KEDI_TIMEOUT"
ENV_HTML = "KEDI_HTML"
ENV_MARKDOWN = "KEDI_MARKDOWN"
ENV_STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
ENV_MAX_ROWS = "KEDI_MAX_ROWS"
DEFAULT_MAX_ROWS = 1_000_000

ROWS_MODES = ("auto", "subtests", "summary")
SPLITS = ("auto", "data", "test_data")

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class MaxErrors:
    """An error budget: a row count (``3``) or a fraction of the rows (``0.1``)."""

    count: int | None = None
    fraction: float | None = None

    def exceeded(self, errored: int, total: int) -> bool:
        if self.count is not None:
            return errored > self.count
        assert self.fraction is not None
        return total > 0 and errored / total > self.fraction

    def describe(self) -> str:
        if self.count is not None:
            return f"at most {self.count} errored row{'s' if self.count != 1 else ''}"
        return f"at most {self.fraction:g} of the rows errored"


@dataclass(frozen=True, slots=True)
class KediSettings:
    """The plugin's resolved configuration (one per pytest process)."""

    eval_enabled: bool
    collect: bool
    rows_mode: str  # "subtests" or "summary" ("auto" is resolved away)
    min_score: float | None
    min_scores: tuple[tuple[str, float], ...]
    max_errors: MaxErrors | None
    model: str | None
    split: str
    concurrency: int
    timeout: float | None
    report_path: Path | None
    rows_jsonl_path: Path | None
    html_path: Path | None = None
    markdown_path: Path | None = None
    markdown_append: bool = False  # GITHUB_STEP_SUMMARY: append, and only when Kedi items ran
    max_rows: int = DEFAULT_MAX_ROWS

    def threshold_for(self, nodeid: str) -> float | None:
        """The first matching ``kedi_min_scores`` pattern wins over the global min score."""
        for pattern, value in self.min_scores:
            if fnmatch.fnmatchcase(nodeid, pattern):
                return value
        return self.min_score


def register(parser: pytest.Parser) -> None:
    group = parser.getgroup("kedi", "Kedi evaluation suites and test cases (pytest-kedi)")
    group.addoption(
        "--kedi-eval",
        action="store_true",
        default=None,
        dest="kedi_eval",
        help="collect .kedi files and run their @eval: suites (env KEDI_EVAL=1 does the same).",
    )
    group.addoption(
        "--kedi-rows",
        dest="kedi_rows",
        choices=ROWS_MODES,
        default=None,
        help="how eval rows are reported: as sub-results (subtests), only in the summary "
        "(summary), or auto: summary under VS Code and PyCharm, else subtests. "
        "Env KEDI_ROWS, ini kedi_rows; default auto.",
    )
    group.addoption(
        "--kedi-min-score",
        dest="kedi_min_score",
        metavar="F",
        default=None,
        help="fail an eval suite whose score is below F (env KEDI_MIN_SCORE, ini kedi_min_score; "
        "per-suite overrides in ini kedi_min_scores).",
    )
    group.addoption(
        "--kedi-max-errors",
        dest="kedi_max_errors",
        metavar="N",
        default=None,
        help="fail an eval suite with more than N errored rows; a value below 1 (e.g. 0.1) is a "
        "fraction of the rows (env KEDI_MAX_ERRORS, ini kedi_max_errors).",
    )
    group.addoption(
        "--kedi-model",
        dest="kedi_model",
        metavar="MODEL",
        default=None,
        help="default pydantic-ai model for templates, e.g. openai:gpt-4o "
        "(env KEDI_ADAPTER_MODEL, ini kedi_model; default: the offline 'test' model).",
    )
    group.addoption(
        "--kedi-split",
        dest="kedi_split",
        choices=SPLITS,
        default=None,
        help="dataset to score: auto (test_data when present, else data), data or test_data "
        "(env KEDI_SPLIT, ini kedi_split).",
    )
    group.addoption(
        "--kedi-concurrency",
        dest="kedi_concurrency",
        metavar="N",
        default=None,
        help="run up to N rows of a suite at once (env KEDI_CONCURRENCY, ini kedi_concurrency; "
        "default 1 = sequential, Kedi's semantics).",
    )
    group.addoption(
        "--kedi-timeout",
        dest="kedi_timeout",
        metavar="SECONDS",
        default=None,
        help="time limit per row; an overrunning row scores 0.0 (env KEDI_TIMEOUT, "
        "ini kedi_timeout). Loading a suite's dataset gets the same number of seconds.",
    )
    group.addoption(
        "--kedi-max-rows",
        dest="kedi_max_rows",
        metavar="N",
        default=None,
        help="fail a suite whose dataset has more than N rows (env KEDI_MAX_ROWS, "
        "ini kedi_max_rows; default 1000000).",
    )
    group.addoption(
        "--kedi-report",
        dest="kedi_report",
        metavar="PATH",
        default=None,
        help="write the eval and test results as one JSON document (schema version 2).",
    )
    group.addoption(
        "--kedi-rows-jsonl",
        dest="kedi_rows_jsonl",
        metavar="PATH",
        default=None,
        help="write one JSON object per eval row.",
    )
    group.addoption(
        "--kedi-html",
        dest="kedi_html",
        metavar="PATH",
        default=None,
        help="write a self-contained HTML report of the eval suites (env KEDI_HTML, "
        "ini kedi_html).",
    )
    group.addoption(
        "--kedi-markdown",
        dest="kedi_markdown",
        metavar="PATH",
        default=None,
        help="write a Markdown summary of the eval suites (env KEDI_MARKDOWN, ini "
        "kedi_markdown). Without it, the summary is appended to $GITHUB_STEP_SUMMARY when set; "
        "'off' disables both.",
    )

    parser.addini(
        "kedi_collect",
        "collect .kedi files (test cases run; eval suites are skipped without --kedi-eval).",
        type="bool",
        default=False,
    )
    parser.addini(
        "kedi_rows", "row reporting: auto, subtests or summary.", type="string", default=""
    )
    parser.addini(
        "kedi_min_score", "minimum score of every eval suite.", type="float", default=None
    )
    parser.addini(
        "kedi_min_scores",
        "per-suite minimum scores, one 'NODEID-PATTERN = F' per line (fnmatch); "
        "the first matching line wins over kedi_min_score.",
        type="linelist",
        default=[],
    )
    parser.addini(
        "kedi_max_errors",
        "errored rows allowed per suite: a count, or a fraction below 1.",
        type="float",
        default=None,
    )
    parser.addini(
        "kedi_model", "default pydantic-ai model for templates.", type="string", default=""
    )
    parser.addini(
        "kedi_split", "dataset to score: auto, data or test_data.", type="string", default=""
    )
    parser.addini("kedi_concurrency", "rows run at once per suite.", type="int", default=None)
    parser.addini("kedi_timeout", "time limit per row, in seconds.", type="float", default=None)
    parser.addini("kedi_html", "path of the HTML report.", type="string", default="")
    parser.addini(
        "kedi_markdown", "path of the Markdown summary, or 'off'.", type="string", default=""
    )
    parser.addini("kedi_max_rows", "most rows a dataset may have.", type="int", default=None)


# --------------------------------------------------------------------------- resolution


def _layer(config: pytest.Config, dest: str, env: str | None, ini: str | None) -> tuple[Any, str]:
    """The first set value among command line, environment and ini, with its source label."""
    value = config.getoption(dest, default=None) if dest else None
    if value is not None:
        return value, f"--{dest.replace('_', '-')}"
    if env is not None:
        text = os.environ.get(env)
        if text is not None and text.strip() != "":
            return text.strip(), env
    if ini is not None:
        raw = config.getini(ini)
        if raw is not None and raw != "":
            return raw, f"ini {ini}"
    return None, ""


def _parse_bool(text: str, source: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise pytest.UsageError(f"{source}: expected a boolean (1/0, true/false), got {text!r}")


def _parse_float(value: object, source: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{source}: expected a number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number):
        raise pytest.UsageError(f"{source}: expected a finite number, got {value!r}")
    return number


def _parse_max_errors(value: object, source: str) -> MaxErrors:
    number = _parse_float(value, source)
    if number < 0:
        raise pytest.UsageError(f"{source}: expected a count or a fraction >= 0, got {value!r}")
    if 0 < number < 1:
        return MaxErrors(fraction=number)
    if number != int(number):
        raise pytest.UsageError(
            f"{source}: expected a whole row count (or a fraction below 1), got {value!r}"
        )
    return MaxErrors(count=int(number))


def _parse_concurrency(value: object, source: str) -> int:
    try:
        number = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise pytest.UsageError(f"{source}: expected a positive integer, got {value!r}") from None
    if isinstance(value, bool) or number < 1:
        raise pytest.UsageError(f"{source}: expected a positive integer, got {value!r}")
    return number


def _parse_timeout(value: object, source: str) -> float:
    number = _parse_float(value, source)
    if number <= 0:
        raise pytest.UsageError(f"{source}: expected a positive number of seconds, got {value!r}")
    return number


def _parse_choice(choices: tuple[str, ...]) -> Callable[[object, str], str]:
    def parse(value: object, source: str) -> str:
        text = str(value).strip()
        if text not in choices:
            raise pytest.UsageError(f"{source}: expected one of {', '.join(choices)}, got {text!r}")
        return text

    return parse


def _parse_min_scores(lines: list[str]) -> tuple[tuple[str, float], ...]:
    entries: list[tuple[str, float]] = []
    for line in lines:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        pattern, sep, number = text.rpartition("=")
        if not sep or not pattern.strip():
            raise pytest.UsageError(
                f"ini kedi_min_scores: expected 'NODEID-PATTERN = F', got {line!r}"
            )
        entries.append((pattern.strip(), _parse_float(number.strip(), "ini kedi_min_scores")))
    return tuple(entries)


def _detect_ide(config: pytest.Config, environ: Mapping[str, str]) -> bool:
    """True under IDE adapters that mishandle subtest reports (VS Code, PyCharm/TeamCity)."""
    pm = config.pluginmanager
    if pm.hasplugin("vscode_pytest"):
        return True
    if environ.get("TEAMCITY_VERSION"):
        return True
    return any(pm.hasplugin(name) for name in ("teamcity.pytest_plugin", "pytest-teamcity"))


def _report_path(config: pytest.Config, dest: str) -> Path | None:
    value = config.getoption(dest, default=None)
    if not value:
        return None
    return Path(config.invocation_params.dir, str(value))


def _output_path(config: pytest.Config, value: object, source: str) -> Path:
    """A path from the command line or environment is relative to the invocation
    directory; one from the ini file is relative to that file's directory."""
    base = config.invocation_params.dir
    if source.startswith("ini ") and config.inipath is not None:
        base = config.inipath.parent
    return Path(base, str(value).strip())


def _markdown_target(config: pytest.Config, environ: Mapping[str, str]) -> tuple[Path | None, bool]:
    """``(path, append)``: the given path (overwritten), else ``$GITHUB_STEP_SUMMARY``
    (appended to); ``off`` (or an empty ``--kedi-markdown=``) disables both."""
    value, source = _layer(config, "kedi_markdown", ENV_MARKDOWN, "kedi_markdown")
    if value is not None:
        text = str(value).strip()
        if text.lower() in ("", "off"):
            return None, False
        return _output_path(config, text, source), False
    summary = environ.get(ENV_STEP_SUMMARY, "").strip()
    return (Path(summary), True) if summary else (None, False)


def resolve(config: pytest.Config, *, subtests_available: bool = True) -> KediSettings:
    """Resolve every setting (command line > environment > ini > default)."""
    eval_flag = config.getoption("kedi_eval", default=None)
    eval_enabled = True if eval_flag else _parse_bool(os.environ.get(ENV_EVAL, ""), ENV_EVAL)
    collect = eval_enabled or bool(config.getini("kedi_collect"))

    rows_value, rows_source = _layer(config, "kedi_rows", ENV_ROWS, "kedi_rows")
    rows_mode = _parse_choice(ROWS_MODES)(rows_value, rows_source) if rows_value else "auto"
    if rows_mode == "auto":
        rows_mode = "summary" if _detect_ide(config, os.environ) else "subtests"
    if not subtests_available:
        rows_mode = "summary"

    min_value, min_source = _layer(config, "kedi_min_score", ENV_MIN_SCORE, "kedi_min_score")
    max_value, max_source = _layer(config, "kedi_max_errors", ENV_MAX_ERRORS, "kedi_max_errors")
    model_value, _ = _layer(config, "kedi_model", ENV_MODEL, "kedi_model")
    split_value, split_source = _layer(config, "kedi_split", ENV_SPLIT, "kedi_split")
    conc_value, conc_source = _layer(
        config, "kedi_concurrency", ENV_CONCURRENCY, "kedi_concurrency"
    )
    time_value, time_source = _layer(config, "kedi_timeout", ENV_TIMEOUT, "kedi_timeout")
    html_value, html_source = _layer(config, "kedi_html", ENV_HTML, "kedi_html")
    markdown_path, markdown_append = _markdown_target(config, os.environ)
    limit_value, limit_source = _layer(config, "kedi_max_rows", ENV_MAX_ROWS, "kedi_max_rows")

    return KediSettings(
        eval_enabled=eval_enabled,
        collect=collect,
        rows_mode=rows_mode,
        min_score=_parse_float(min_value, min_source) if min_value is not None else None,
        min_scores=_parse_min_scores(list(config.getini("kedi_min_scores") or [])),
        max_errors=_parse_max_errors(max_value, max_source) if max_value is not None else None,
        model=str(model_value).strip() if model_value is not None else None,
        split=_parse_choice(SPLITS)(split_value, split_source) if split_value else "auto",
        concurrency=_parse_concurrency(conc_value, conc_source) if conc_value is not None else 1,
        timeout=_parse_timeout(time_value, time_source) if time_value is not None else None,
        report_path=_report_path(config, "kedi_report"),
        rows_jsonl_path=_report_path(config, "kedi_rows_jsonl"),
        html_path=_output_path(config, html_value, html_source) if html_value else None,
        markdown_path=markdown_path,
        markdown_append=markdown_append,
        max_rows=(
            _parse_concurrency(limit_value, limit_source)
            if limit_value is not None
            else DEFAULT_MAX_ROWS
        ),
    )
