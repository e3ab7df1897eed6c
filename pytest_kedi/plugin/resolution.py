"""Registering the `OPTIONS` with pytest and resolving them into `KediSettings`.

Each option resolves command line > environment > ini > default; only the value in effect
is parsed, once, and a bad value is a usage error naming the option and where it came
from. The declarations themselves live in `pytest_kedi.plugin.options`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_kedi.constants import ENV_STEP_SUMMARY
from pytest_kedi.plugin.options import OPTIONS, Option
from pytest_kedi.plugin.optionvalues import OFF
from pytest_kedi.plugin.settings import KediSettings

__all__ = ["register", "resolve"]


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
    if values["markdown_path"] == OFF:
        values["markdown_path"] = None
    elif values["markdown_path"] is None and os.environ.get(ENV_STEP_SUMMARY, "").strip():
        values["markdown_path"] = Path(os.environ[ENV_STEP_SUMMARY].strip())
        values["markdown_append"] = True
    values["collect"] = values["eval_enabled"] or values["collect"]
    if values["max_drop"] is not None and values["baseline_path"] is None:
        raise pytest.UsageError(
            "kedi_max_drop needs a baseline to compare with: pass --kedi-baseline PATH "
            "(env KEDI_BASELINE, ini kedi_baseline)"
        )
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
