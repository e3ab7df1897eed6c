"""Entry points: `parse` (source text -> `nodes.Module`) and `parse_file` (cached, from
`pytest_kedi.lang.files`)."""

from __future__ import annotations

import gc

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.blocks import build_tree
from pytest_kedi.lang.builder import Builder
from pytest_kedi.lang.cache import MODULES
from pytest_kedi.lang.checks import check_package
from pytest_kedi.lang.context import BuildContext
from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError, unseen_note
from pytest_kedi.lang.files import parse_data, parse_file, source_text
from pytest_kedi.lang.freshstack import reached_limit, stack_limited
from pytest_kedi.lang.scanner import scan
from pytest_kedi.lang.source import KediSyntaxError, Source

__all__ = ["parse", "parse_data", "parse_file"]

DEFAULT_PATH = "<string>"
_CACHE = MODULES  # the cache `parse_file` keeps (pytest_kedi.lang.files)


def _diagnostic(src: Source, offset: int, message: str) -> Diagnostic:
    offset = max(0, min(offset, len(src.text)))
    line, col = src.position(offset)
    text = src.line_text(line)
    if "U+" not in message:  # else the message names the character already
        message += unseen_note(text, col)
    if message.startswith(("unexpected indentation", "unexpected dedent")):
        message += _tab_note(src, line)
    return Diagnostic(src.path, line, col, message, text)


def _tab_note(src: Source, line: int) -> str:
    """What an indentation error adds when the file indents with tabs and spaces up to
    ``line``: an editor may show a tab narrower or wider than the 4 columns it counts for
    (docs/language.md#indentation), so lines that look aligned are not."""
    kinds = {ch for text in src.lines[:line] for ch in text[: len(text) - len(text.lstrip())]}
    if not {" ", "\t"} <= kinds:
        return ""
    lead = src.line_text(line)
    lead = lead[: len(lead) - len(lead.lstrip(" \t"))]
    width = sum(4 if ch == "\t" else 1 for ch in lead)
    return f" (this line is indented {width} columns: a tab counts as 4, a space as 1)"


def _build(src: Source) -> n.Module:
    root = build_tree(scan(src))
    prelude: n.PythonBlock | None = None
    builder = Builder(src)
    if root and root[0].kind == "fence":
        first = root.pop(0)
        stmt = builder.statement(first, "fence", BuildContext("top"))
        assert isinstance(stmt, n.PythonBlock)
        prelude = stmt
    body = builder.body(root, BuildContext("top"))
    check_package(body, prelude)
    return n.Module(
        src.span(0, len(src.text.rstrip())), src.path, src.text, prelude, body, src.lines
    )


def parse(source: str, path: str | None = None) -> n.Module:
    """Parse Kedi ``source``; raise `KediParseError` (never anything else) when malformed.
    Past the recursion limit it runs again on a fresh stack, so that how deeply a program may
    nest does not depend on the caller (docs/language.md#indentation)."""
    if type(source) is not str:  # a clear TypeError, not one from inside the parser
        source = source_text(source, "parse")
    if source.startswith("\ufeff"):  # a UTF-8 byte-order mark is not program text
        source = source[1:]
    if path is not None and not isinstance(path, str):
        raise TypeError(f"parse() takes the path as str or None, not {type(path).__name__}")
    where = path if path is not None else DEFAULT_PATH
    return stack_limited(lambda: _parse(Source(source, where)))


def _parse(src: Source) -> n.Module:
    # The AST is acyclic and allocated in bulk: cyclic GC passes during the build
    # only cost time (they would roughly halve throughput on large files).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(src)
    except KediSyntaxError as exc:
        raise KediParseError([_diagnostic(src, exc.offset, exc.message)]) from None
    except RecursionError:
        reached_limit()  # on the caller's stack: again on a fresh one
        # Reported at the statement being built when the limit was crossed.
        where = _diagnostic(src, src.reached, "the program is nested too deeply")
        raise KediParseError([where]) from None
    except Exception as exc:
        # A parser bug: keep the original exception chained, so that `render(debug=True)`
        # (``--kedi-debug`` / ``KEDI_DEBUG=1``) can show where it happened.
        message = (
            f"internal error in the Kedi parser ({type(exc).__name__}); "
            "run with --kedi-debug or KEDI_DEBUG=1 to see its traceback"
        )
        raise KediParseError([_diagnostic(src, 0, message)], internal=exc) from exc
    finally:
        if collecting:
            gc.enable()
