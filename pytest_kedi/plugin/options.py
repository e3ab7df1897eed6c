"""Command-line options, typed ini entries and their resolution into `KediSettings`.

Every setting is declared once, in `OPTIONS` (its flag, environment variable, ini entry,
parser and default), and resolves command line > environment > ini > default. Only the
value in effect is parsed, once, and a bad value is a usage error naming the option and
where it came from: ``kedi_min_score (ini file): expected a number, got 'abc'``.

The ini entries are typed (``bool``/``float``/``int``/``linelist``/``string``) so pytest 9's
native TOML table (``[tool.pytest]``) accepts ``kedi_min_score = 0.8`` and friends.
Adding an option: one `Option` in `OPTIONS` (with its README ``meaning``) and the matching
`KediSettings` field; then regenerate the README's options table with
``python -m pytest_kedi.plugin.options_table --write README.md``.
"""

from __future__ import annotations

import fnmatch
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_kedi.constants import (
    DEFAULT_MAX_ROWS,
    ENV_EVAL,
    ENV_MODEL,
    ENV_STEP_SUMMARY,
    SPLITS,
)

__all__ = [
    "ENV_EVAL",
    "ENV_MODEL",
    "OPTIONS",
    "ROWS_MODES",
    "SPLITS",
    "KediSettings",
    "MaxErrors",
    "Option",
    "register",
    "resolve",
]


ROWS_MODES = ("auto", "subtests", "summary")

#: The longest row timeout a thread (and so the row pool) can wait for.
TIMEOUT_MAX = threading.TIMEOUT_MAX

IniType = Literal["string", "linelist", "bool", "int", "float"]

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
    max_rows: int = DEFAULT_MAX_ROWS
    html_path: Path | None = None
    markdown_path: Path | None = None
    markdown_append: bool = False  # GITHUB_STEP_SUMMARY: append, and only when Kedi items ran
    rows_reason: str | None = None  # why rows_mode is what it is, when not chosen explicitly
    rootdir: Path | None = None
    ini_dir: Path | None = None  # the directory of the ini file (kedi_min_scores patterns)
    debug: bool = False  # show the traceback of an internal parser error

    def suite_ids(self, nodeid: str) -> tuple[str, ...]:
        """``nodeid`` (rootdir-relative) and, if different, relative to the ini file's directory.

        IDEs pass their own ``--rootdir`` (VS Code: the workspace), so a pattern written next
        to the ini file keeps matching whichever directory pytest reports node ids from.
        """
        if self.rootdir is None or self.ini_dir is None:
            return (nodeid,)
        file, sep, rest = nodeid.partition("::")
        try:
            relative = (self.rootdir / file).relative_to(self.ini_dir).as_posix()
        except ValueError:  # the file is outside the ini file's directory
            return (nodeid,)
        return (nodeid,) if relative == file else (nodeid, relative + sep + rest)

    def pattern_matches(self, pattern: str, nodeid: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for name in self.suite_ids(nodeid))

    def threshold_for(self, nodeid: str) -> float | None:
        """The first matching ``kedi_min_scores`` pattern wins over the global min score."""
        for pattern, value in self.min_scores:
            if self.pattern_matches(pattern, nodeid):
                return value
        return self.min_score


# --------------------------------------------------------------------------- value parsers
# Each takes the raw value (a string from the command line or environment, a typed value
# from the ini file) and the source label, and returns the setting or raises a UsageError.


def _bad(source: str, expected: str, value: object) -> pytest.UsageError:
    shown = f"{value:g}" if isinstance(value, float) else repr(value)  # typed ini values
    return pytest.UsageError(f"{source}: expected {expected}, got {shown}")


def _parse_bool(value: object, source: str) -> bool:
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _bad(source, "a boolean (1/0, true/false)", value)


def _parse_float(value: object, source: str) -> float:
    if isinstance(value, bool):
        raise _bad(source, "a number", value)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise _bad(source, "a number", value) from None
    if not math.isfinite(number):
        raise _bad(source, "a finite number", value)
    return number


def _parse_max_errors(value: object, source: str) -> MaxErrors:
    number = _parse_float(value, source)
    if number < 0:
        raise _bad(source, "a count or a fraction >= 0", value)
    if 0 < number < 1:
        return MaxErrors(fraction=number)
    if number != int(number):
        raise _bad(source, "a whole row count (or a fraction below 1)", value)
    return MaxErrors(count=int(number))


def _parse_positive_int(value: object, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _bad(source, "a positive integer", value)
    try:
        number = value if isinstance(value, int) else int(value.strip())
    except ValueError:
        raise _bad(source, "a positive integer", value) from None
    if number < 1:
        raise _bad(source, "a positive integer", value)
    return number


def _parse_timeout(value: object, source: str) -> float:
    number = _parse_float(value, source)
    if not 0 < number <= TIMEOUT_MAX:
        raise _bad(source, f"a positive number of seconds up to {TIMEOUT_MAX:g}", value)
    return number


def _parse_choice(choices: tuple[str, ...]) -> Callable[[object, str], str]:
    def parse(value: object, source: str) -> str:
        if not isinstance(value, str) or value.strip() not in choices:
            raise _bad(source, f"one of {', '.join(choices)}", value)
        return value.strip()

    return parse


def _parse_model(value: object, source: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _bad(source, "a model name", value)
    return value.strip()


def _parse_path(value: object, source: str) -> Path:
    """A path, relative to the invocation directory (joined in `resolve`)."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(source, "a file path", value)
    return Path(value)


_OFF = "off"


def _parse_markdown(value: object, source: str) -> Path | str:
    """A path, or ``off`` (also an empty ``--kedi-markdown=``): no summary at all."""
    if not isinstance(value, str):
        raise _bad(source, "a file path or 'off'", value)
    text = value.strip()
    return _OFF if text.lower() in ("", _OFF) else Path(text)


def _parse_min_scores(value: object, source: str) -> tuple[tuple[str, float], ...]:
    lines = value.splitlines() if isinstance(value, str) else value
    if not isinstance(lines, list):
        raise _bad(source, "lines of 'NODEID-PATTERN = F'", value)
    entries: list[tuple[str, float]] = []
    for line in lines:
        text = str(line).strip()
        if not text or text.startswith("#"):
            continue
        pattern, sep, number = text.rpartition("=")
        if not sep or not pattern.strip():
            raise _bad(source, "'NODEID-PATTERN = F'", line)
        entries.append((pattern.strip(), _parse_float(number.strip(), source)))
    return tuple(entries)


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
        "eval_enabled", "kedi_eval", _parse_bool, False,
        "collect .kedi files and run their @eval: suites (env KEDI_EVAL=1 does the same).",
        env=ENV_EVAL, flag_is_switch=True,
        meaning="collect `.kedi` files and run their test cases and eval suites",
        shown_default="off",
    ),
    Option(
        "collect", "kedi_collect", _parse_bool, False, "",
        ini_type="bool",
        ini_help="collect .kedi files (test cases run; eval suites are skipped without "
        "--kedi-eval).",
        meaning="collect `.kedi` files; run their test cases, skip their eval suites",
        shown_default="`false`",
    ),
    Option(
        "rows_mode", "kedi_rows", _parse_choice(ROWS_MODES), "auto",
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
        "min_score", "kedi_min_score", _parse_float, None,
        "fail an eval suite whose score is below F (env KEDI_MIN_SCORE, ini kedi_min_score; "
        "per-suite overrides in ini kedi_min_scores).",
        env="KEDI_MIN_SCORE", ini_type="float", ini_help="minimum score of every eval suite.",
        metavar="F",
        meaning="fail an eval suite whose score is below F",
    ),
    Option(
        "min_scores", "kedi_min_scores", _parse_min_scores, (), "",
        ini_type="linelist",
        ini_help="per-suite minimum scores, one 'NODEID-PATTERN = F' per line (fnmatch, node "
        "ids relative to the rootdir or to this file's directory); the first matching line "
        "wins over kedi_min_score.",
        meaning="per-suite `NODEID-PATTERN = F` lines (fnmatch); the first match wins over "
        "`kedi_min_score`",
    ),
    Option(
        "max_errors", "kedi_max_errors", _parse_max_errors, None,
        "fail an eval suite with more than N errored rows; a value below 1 (e.g. 0.1) is a "
        "fraction of the rows (env KEDI_MAX_ERRORS, ini kedi_max_errors).",
        env="KEDI_MAX_ERRORS", ini_type="float",
        ini_help="errored rows allowed per suite: a count, or a fraction below 1.", metavar="N",
        meaning="fail an eval suite with more errored rows (a whole N: a count; 0 < N < 1: a "
        "fraction of the rows)",
    ),
    Option(
        "model", "kedi_model", _parse_model, None,
        "default pydantic-ai model for templates, e.g. openai:gpt-4o "
        "(env KEDI_ADAPTER_MODEL, ini kedi_model; default: the offline 'test' model).",
        env=ENV_MODEL, ini_type="string", ini_help="default pydantic-ai model for templates.",
        metavar="MODEL",
        meaning="default pydantic-ai model for templates (a source `> model:` still wins)",
        shown_default="`test` (offline)",
    ),
    Option(
        "split", "kedi_split", _parse_choice(SPLITS), "auto",
        "dataset to score: auto (test_data when present, else data), data or test_data "
        "(env KEDI_SPLIT, ini kedi_split).",
        env="KEDI_SPLIT", ini_type="string", ini_help="dataset to score: auto, data or test_data.",
        metavar="{" + ",".join(SPLITS) + "}",
        meaning="dataset scored: `auto` (`test_data` when present, else `data`), `data` or "
        "`test_data`",
    ),
    Option(
        "concurrency", "kedi_concurrency", _parse_positive_int, 1,
        "run up to N rows of a suite at once (env KEDI_CONCURRENCY, ini kedi_concurrency; "
        "default 1 = sequential, Kedi's semantics).",
        env="KEDI_CONCURRENCY", ini_type="int", ini_help="rows run at once per suite.",
        metavar="N",
        meaning="rows of a suite run at once (`1`: sequential)",
    ),
    Option(
        "timeout", "kedi_timeout", _parse_timeout, None,
        "time limit per row; an overrunning row scores 0.0 (env KEDI_TIMEOUT, "
        "ini kedi_timeout). Loading a suite's dataset gets the same number of seconds.",
        env="KEDI_TIMEOUT", ini_type="float", ini_help="time limit per row, in seconds.",
        metavar="SECONDS",
        meaning="seconds per row (an overrunning row scores 0.0) and for loading a dataset",
    ),
    Option(
        "max_rows", "kedi_max_rows", _parse_positive_int, DEFAULT_MAX_ROWS,
        "fail a suite whose dataset has more than N rows (env KEDI_MAX_ROWS, "
        "ini kedi_max_rows; default 1000000).",
        env="KEDI_MAX_ROWS", ini_type="int", ini_help="most rows a dataset may have.",
        metavar="N",
        meaning="fail a suite whose dataset has more rows",
    ),
    Option(
        "report_path", "kedi_report", _parse_path, None,
        "write the eval and test results as one JSON document (schema version 2).",
        metavar="PATH",
        meaning="write the results as one JSON document (schema version 2)",
    ),
    Option(
        "rows_jsonl_path", "kedi_rows_jsonl", _parse_path, None,
        "write one JSON object per eval row.", metavar="PATH",
        meaning="write one JSON object per eval row",
    ),
    Option(
        "html_path", "kedi_html", _parse_path, None,
        "write a self-contained HTML report of the eval suites (env KEDI_HTML, "
        "ini kedi_html).",
        env="KEDI_HTML", ini_type="string", ini_help="path of the HTML report.", metavar="PATH",
        meaning="write a self-contained HTML report of the eval suites",
    ),
    Option(
        "markdown_path", "kedi_markdown", _parse_markdown, None,
        "write a Markdown summary of the eval suites (env KEDI_MARKDOWN, ini "
        "kedi_markdown). Without it, the summary is appended to $GITHUB_STEP_SUMMARY when "
        "set; 'off' disables both.",
        env="KEDI_MARKDOWN", ini_type="string",
        ini_help="path of the Markdown summary, or 'off'.", metavar="PATH",
        meaning="write a Markdown summary of the eval suites; without it, the summary is appended "
        "to `$GITHUB_STEP_SUMMARY` when set; `off` disables both",
    ),
    Option(
        "debug", "kedi_debug", _parse_bool, False,
        "show the traceback of an internal error in the Kedi parser, for a bug report "
        "(env KEDI_DEBUG=1 does the same).",
        env="KEDI_DEBUG", flag_is_switch=True,
        meaning="show the traceback of an internal error in the Kedi parser (for a bug report)",
    ),
)  # fmt: skip


def register(parser: pytest.Parser) -> None:
    group = parser.getgroup("kedi", "Kedi evaluation suites and test cases (pytest-kedi)")
    for option in OPTIONS:
        if option.help and option.flag_is_switch:
            group.addoption(
                option.flag, action="store_true", default=None, dest=option.name, help=option.help
            )
        elif option.help:
            group.addoption(
                option.flag,
                dest=option.name,
                metavar=option.metavar,
                default=None,
                help=option.help,
            )
        if option.ini_type is not None:
            default = {"linelist": [], "string": "", "bool": False}.get(option.ini_type)
            parser.addini(option.name, option.ini_help, type=option.ini_type, default=default)


# --------------------------------------------------------------------------- resolution


def _override(config: pytest.Config, name: str) -> str | None:
    """The raw value of the last ``-o name=value`` for ``name``, if any."""
    found = None
    for item in config.getoption("override_ini", default=None) or []:
        key, sep, value = str(item).partition("=")
        if sep and key.strip() == name:
            found = value
    return found


def _raw_ini(config: pytest.Config, name: str) -> object:
    """The value pytest refused to convert, so that our message can quote it."""
    override = _override(config, name)
    if override is not None:
        return override
    # pytest keeps no public accessor for an unconvertible value: read its ini table.
    table = getattr(config, "_inicfg", None)
    entry = table.get(name) if isinstance(table, dict) else None
    return getattr(entry, "value", entry)


def _ini_value(config: pytest.Config, option: Option) -> tuple[object, str] | None:
    assert option.ini_type is not None
    where = "-o override" if _override(config, option.name) is not None else "ini file"
    source = f"{option.name} ({where})"
    try:
        value = config.getini(option.name)
    except pytest.UsageError as exc:
        raw = _raw_ini(config, option.name)
        if raw is None:
            raise pytest.UsageError(f"{source}: {exc}") from None
        return raw, source  # our parser accepts it or says what was expected
    if value is None or value == "" or value == []:
        return None
    return value, source


def _value(config: pytest.Config, option: Option) -> tuple[object, str] | None:
    """The first set value among command line, environment and ini, with its source."""
    if option.help:
        value = config.getoption(option.name, default=None)
        if value is not None:
            return value, f"{option.flag} (command line)"
    if option.env is not None:
        text = os.environ.get(option.env)
        if text is not None and text.strip() != "":
            return text.strip(), f"{option.env} (environment)"
    if option.ini_type is not None:
        return _ini_value(config, option)
    return None


def resolve(config: pytest.Config, *, subtests_available: bool = True) -> KediSettings:
    """Resolve and validate every setting (command line > environment > ini > default)."""
    from pytest_kedi.plugin.rows import summary_reason

    values: dict[str, Any] = {}
    for option in OPTIONS:
        found = _value(config, option)
        value = option.default if found is None else option.parse(*found)
        if isinstance(value, Path):  # an ini path is relative to the ini file's directory
            in_ini = found is not None and found[1].endswith("(ini file)")
            base = config.inipath.parent if in_ini and config.inipath else None
            value = Path(base or config.invocation_params.dir, value)
        values[option.field] = value
    if values["markdown_path"] == _OFF:
        values["markdown_path"] = None
    elif values["markdown_path"] is None and os.environ.get(ENV_STEP_SUMMARY, "").strip():
        values["markdown_path"] = Path(os.environ[ENV_STEP_SUMMARY].strip())
        values["markdown_append"] = True
    values["collect"] = values["eval_enabled"] or values["collect"]
    reason = None
    if values["rows_mode"] == "auto":
        reason = summary_reason(config)
        values["rows_mode"] = "subtests" if reason is None else "summary"
        reason = f"auto: {reason}" if reason else None
    if not subtests_available and values["rows_mode"] != "summary":
        values["rows_mode"], reason = "summary", "subtests plugin disabled"
    inipath = config.inipath
    return KediSettings(
        **values,
        rows_reason=reason,
        rootdir=config.rootpath,
        ini_dir=inipath.parent if inipath is not None else None,
    )
