"""A pytest-kedi option value that pytest took for a test path when it chose its rootdir.

pytest decides its rootdir and configuration file before it knows any plugin's options:
in ``--kedi-report /tmp/out/r.json`` the value is then a free argument, and once that file
exists it counts as a test path, which can move the rootdir away from the project (its
ini file is not read: gates, models and ``addopts`` are lost, node ids change). The run
would then not be the one the user asked for, and only once the file exists, so a second
run gave a different verdict. `check_rootdir` refuses such a run with the remedy (the
``--opt=PATH`` form) when, and only when, the rootdir or the configuration file differs
from the one the command line chooses with the option values read as values.
"""

from __future__ import annotations

import os
import shlex
from itertools import pairwise
from pathlib import Path

import pytest

from pytest_kedi.plugin.options import OPTIONS

__all__ = ["check_rootdir"]

#: The flags whose value is a separate argument (``--kedi-report PATH``).
_VALUED = frozenset(option.flag for option in OPTIONS if option.help and not option.flag_is_switch)


def _suspects(args: list[str], invocation_dir: Path) -> list[str]:
    """``--flag value`` pairs of ours whose value names an existing path."""
    found = []
    for flag, value in pairwise(args):
        if flag in _VALUED and not value.startswith("-"):
            path = Path(invocation_dir, value.split("::")[0])
            try:
                exists = path.exists()
            except (OSError, ValueError):
                exists = False
            if exists:
                found.append(f"{flag} {value}")
    return found


def check_rootdir(config: pytest.Config) -> None:
    """Raise `pytest.UsageError` when one of our options' values moved pytest's rootdir or
    configuration file (controller only: workers get the controller's)."""
    if hasattr(config, "workerinput"):
        return
    invocation = config.invocation_params
    args = [str(arg) for arg in invocation.args]
    env_args = os.environ.get("PYTEST_ADDOPTS", "")
    if env_args.strip():
        try:
            args = shlex.split(env_args) + args
        except ValueError:
            pass  # pytest has refused it already
    suspects = _suspects(args, invocation.dir)
    if not suspects:
        return
    try:
        from _pytest.config.findpaths import determine_setup

        ns = config._parser.parse_known_args(args)
        rootpath, inipath, *_ = determine_setup(
            inifile=ns.inifilename,
            override_ini=ns.override_ini,
            args=ns.file_or_dir,
            rootdir_cmd_arg=ns.rootdir or None,
            invocation_dir=invocation.dir,
        )
    except Exception:  # a pytest whose internals differ, or an argument it refuses later
        return
    if (rootpath, inipath) == (config.rootpath, config.inipath):
        return
    chose = f"rootdir {config.rootpath}, " + (
        f"configfile {config.inipath}" if config.inipath else "no configfile"
    )
    meant = f"rootdir {rootpath}, " + (f"configfile {inipath}" if inipath else "no configfile")
    given = ", ".join(suspects)
    equals = ", ".join(suspect.replace(" ", "=", 1) for suspect in suspects)
    raise pytest.UsageError(
        f"{given}: pytest chooses its rootdir before it knows plugin options and read this "
        f"path as a test path ({chose}; the command line means {meant}). "
        f"Write it as {equals}."
    )
