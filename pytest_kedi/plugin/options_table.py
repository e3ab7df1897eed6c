"""The README's options table, generated from `OPTIONS` (one row per option).

``python -m pytest_kedi.plugin.options_table`` prints the table between its markers;
``python -m pytest_kedi.plugin.options_table --write README.md`` replaces the marked table in
that file. A test checks that the README's table is the generated one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_kedi.plugin.options import OPTIONS, Option

__all__ = ["END", "START", "markdown_table", "marked_table", "readme_table", "replace_table"]

START = "<!-- options-table:start -->"
END = "<!-- options-table:end -->"
HEADER = (
    "| Command line | Environment | ini (type) | Default | Meaning |",
    "|---|---|---|---|---|",
)
_NONE = "\u2013"  # an en dash: no such source


def _command_line(option: Option) -> str:
    if not option.help:
        return _NONE
    if option.flag_is_switch or option.metavar is None:
        return f"`{option.flag}`"
    return f"`{option.flag} {option.metavar}`"


def _environment(option: Option) -> str:
    if option.env is None:
        return _NONE
    return f"`{option.env}=1`" if option.flag_is_switch else f"`{option.env}`"


def _ini(option: Option) -> str:
    return _NONE if option.ini_type is None else f"`{option.name}` ({option.ini_type})"


def _default(option: Option) -> str:
    if option.shown_default:
        return option.shown_default
    value = option.default
    if value is None or value == ():
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"`{value}`"


def markdown_table(options: Sequence[Option] = OPTIONS) -> str:
    """The options as a Markdown table (one line per option, newline-terminated)."""
    rows = [
        (_command_line(opt), _environment(opt), _ini(opt), _default(opt), opt.meaning)
        for opt in options
    ]
    for cells in rows:
        if any("|" in cell or "\n" in cell for cell in cells):
            raise ValueError(f"an options table cell cannot hold '|' or a newline: {cells}")
    return "\n".join([*HEADER, *("| " + " | ".join(cells) + " |" for cells in rows)]) + "\n"


def marked_table(options: Sequence[Option] = OPTIONS) -> str:
    """`markdown_table` between the start and end markers, as it appears in the README."""
    return f"{START}\n{markdown_table(options)}{END}\n"


def readme_table(text: str) -> str | None:
    """The text between the markers in ``text`` (None when a marker is missing)."""
    start = text.find(START)
    end = text.find(END, start + len(START)) if start >= 0 else -1
    if start < 0 or end < 0:
        return None
    return text[start + len(START) : end].lstrip("\n")


def replace_table(text: str, options: Sequence[Option] = OPTIONS) -> str:
    """``text`` with the marked table replaced by the generated one."""
    if readme_table(text) is None:
        raise ValueError(f"no {START} ... {END} markers")
    start = text.index(START)
    end = text.index(END, start) + len(END)
    return text[:start] + marked_table(options).rstrip("\n") + text[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_kedi.plugin.options_table",
        description="Print the README's options table (generated from the plugin's options).",
    )
    parser.add_argument("--write", metavar="README.md", help="replace the marked table there")
    args = parser.parse_args(argv)
    if args.write is None:
        sys.stdout.write(marked_table())
        return 0
    path = Path(args.write)
    try:
        path.write_text(replace_table(path.read_text(encoding="utf-8")), encoding="utf-8")
    except (OSError, ValueError) as exc:
        parser.exit(1, f"{parser.prog}: error: {path}: {exc}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
