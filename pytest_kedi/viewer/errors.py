"""The files a run could not collect (the report's ``errors``), read and rendered.

A report without ``errors`` (older pytest-kedi) has none; an entry of an unexpected shape
is left out rather than failing the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["ErrorView", "error_views", "errors_html", "errors_markdown"]


@dataclass(frozen=True, slots=True)
class ErrorView:
    nodeid: str
    message: str  # one line
    text: str  # the error as pytest printed it
    where: str  # ``path`` or ``path:line:column``

    @classmethod
    def of(cls, data: object) -> ErrorView | None:
        if not isinstance(data, Mapping) or not isinstance(data.get("nodeid"), str):
            return None
        nodeid, message = data["nodeid"], data.get("message")
        message = message if isinstance(message, str) else "collection failed"
        text = data.get("text") if isinstance(data.get("text"), str) else message
        path = data.get("path") if isinstance(data.get("path"), str) else nodeid
        where = str(path)
        for key in ("line", "column"):
            value = data.get(key)
            if not isinstance(value, int) or isinstance(value, bool):
                break
            where += f":{value}"
        return cls(nodeid, message, str(text), where)


def error_views(value: object) -> tuple[ErrorView, ...]:
    found = (ErrorView.of(entry) for entry in value) if isinstance(value, list) else ()
    return tuple(error for error in found if error is not None)


def errors_markdown(errors: Sequence[ErrorView]) -> list[str]:
    """A table of the files that could not be collected (no lines when there is none)."""
    if not errors:
        return []
    from pytest_kedi.viewer.markdown import cell

    files = "file" if len(errors) == 1 else "files"
    lines = [f"**Collection errors: {len(errors)} {files} could not be collected**", ""]
    lines += ["| File | Error |", "| --- | --- |"]
    lines += [f"| {cell(e.where)} | {cell(e.message)} |" for e in errors]
    return [*lines, ""]


def errors_html(errors: Sequence[ErrorView]) -> str:
    """The collection errors section: each file, its one-line message and the full text."""
    if not errors:
        return ""
    rows = "".join(
        f"<tr><td>{escape(e.where)}<div class='nodeid'>{escape(e.nodeid)}</div></td>"
        f"<td class='msg'>{escape(e.message)}<details><summary>Details</summary>"
        f"<pre>{escape(e.text)}</pre></details></td></tr>"
        for e in errors
    )
    return (
        '<section id="collection-errors" aria-labelledby="errors-h">'
        f'<h2 id="errors-h">Collection errors ({len(errors)})</h2>'
        '<p class="note err" role="alert">These files could not be collected: their suites '
        "and cases did not run.</p>"
        '<table class="tests errors"><thead><tr><th scope="col">File</th>'
        f'<th scope="col">Error</th></tr></thead><tbody>{rows}</tbody></table></section>'
    )
