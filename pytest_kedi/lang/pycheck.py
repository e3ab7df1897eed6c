"""Syntax checks of the embedded Python (backtick expressions and statements, fences,
the prelude, backtick types), reported as located Kedi diagnostics.

The parser itself treats embedded Python as opaque text (so parsing stays fast);
`check_python` runs Python's own parser over every snippet, then its compiler
(`pycompile.compile_error`), exactly as the runtime will compile it, and is used where
diagnostics are shown: ``python -m pytest_kedi parse``, pytest collection and `load`.

`parse_snippet` is how a snippet is parsed here and by the runtime: placed at its `.kedi`
line, so that the warnings Python's parser gives (an invalid escape sequence, say) name
the `.kedi` file and line, as they do for a ``.py`` module.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.diagnostics import Diagnostic, KediParseError
from pytest_kedi.lang.freshstack import reached_limit, stack_limited
from pytest_kedi.lang.pycompile import compile_error
from pytest_kedi.lang.scanner import fence_dedent

__all__ = [
    "Parsed",
    "check_python",
    "locate_syntax_error",
    "may_warn",
    "parse_snippet",
    "python_diagnostics",
    "snippets",
]


#: Per node class, how `snippets` treats its instances: ``"code"`` (a `PyCode`), ``"type"``
#: (a `TypeRef`), ``"items"`` (a tuple or list), else the names of the fields to search
#: (none for a `Span`, a string or any other leaf).
_WALK: dict[type, str | tuple[str, ...]] = {}


def _walk_kind(cls: type) -> str | tuple[str, ...]:
    kind: str | tuple[str, ...]
    if issubclass(cls, n.PyCode):
        kind = "code"
    elif issubclass(cls, n.TypeRef):
        kind = "type"
    elif issubclass(cls, tuple | list):
        kind = "items"
    elif dataclasses.is_dataclass(cls) and not issubclass(cls, n.Span):
        kind = tuple(reversed([f.name for f in dataclasses.fields(cls)]))
    else:
        kind = ()
    _WALK[cls] = kind
    return kind


def snippets(node: Any, valued: set[int] | None = None) -> Iterator[n.PyCode | n.TypeRef]:
    """Every embedded Python snippet under ``node``, in source order, each once (a call
    that is a whole right-hand side is both its text and its ``call``). ``valued``: where to
    add the `id` of each fence whose ``return`` gives a binding's value."""
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    seen: set[int] = set()
    while stack:
        current = pop()
        kind = _WALK.get(type(current))
        if kind is None:
            kind = _walk_kind(type(current))
        if valued is not None and type(current) in _BINDINGS and current.value.mode == "fence":
            valued.add(id(current.value.code))
        if kind == "code" or kind == "type":
            if (kind == "code" or current.backtick) and id(current) not in seen:
                seen.add(id(current))
                yield current
        elif kind == "items":
            extend(reversed(current))
        else:
            for name in kind:
                push(getattr(current, name))


def locate_syntax_error(
    snippet: n.PyCode | n.TypeRef, exc: SyntaxError, lines: Sequence[str]
) -> tuple[int, int]:
    """The `.kedi` (line, column) of a syntax error in ``snippet``, the column counted in
    characters as every diagnostic counts it (a tab is one); ``lines``: the `.kedi` file's
    lines (a fence's body lines were dedented by their own leading characters)."""
    py_line = max(exc.lineno or 1, 1)
    offset = max(exc.offset or 1, 1)
    if isinstance(snippet, n.TypeRef):
        source, kind = snippet.source, "expr"
        line, col = snippet.span.start_line, snippet.span.start_col + 1
    else:
        source, kind, line, col = snippet.source, snippet.kind, snippet.line, snippet.col
    if kind == "expr":
        # The runtime compiles the stripped text: count what the strip removed.
        skipped = source[: len(source) - len(source.lstrip())]
        line += skipped.count("\n")
        if "\n" in skipped:
            col = 1
        col += len(skipped.rsplit("\n", 1)[-1])
    if kind == "block":
        # Each fence line lost the characters of the fence's indentation: a tab is one
        # character but four columns of indentation (docs/language.md#indentation).
        line += py_line - 1
        raw = lines[line - 1] if 1 <= line <= len(lines) else ""
        return line, fence_dedent(raw, col) + offset
    if py_line == 1:
        return line, col + offset - 1
    return line + py_line - 1, offset


#: A parsed snippet: its tree and the number of lines to add to the tree's line numbers to
#: make them `.kedi` lines (0 when it was parsed at its `.kedi` lines).
Parsed = tuple[ast.AST, int]

#: What Python's parser may warn of (3.11 to 3.13): a backslash escape that is not one of
#: the escapes every string literal knows (``\d``; also ``\u``, ``\U`` and ``\N``, which
#: bytes do not know, and an octal escape above ``\377``), backslash pairs read first; or
#: a number written against a keyword (``1if``, ``0x1for``, ``.5or``). Text that matches
#: may still parse silently (a raw string's ``\d``): the look never misses a warning
#: (tests/lang/test_pycheck.py checks it against Python's own), and is cheap.
_MAY_WARN = re.compile(
    r"(?<!\\)(?:\\\\)*\\(?:[^\n\\'\"abfnrtv0-7x]|[4-7][0-7][0-7])"
    r"|(?<!\w)\d[\w.]*?(?:and|else|for|if|in|is|not|or)"
)
#: Up to this line a snippet is always parsed at its `.kedi` line: the blank lines put
#: before it cost Python's tokenizer less than looking for what may warn (each costs about
#: 50 ns; the look about 1 us for a line of code).
_ALWAYS_AT_LINE = 64


def may_warn(text: str) -> bool:
    """Whether Python's parser may warn about ``text`` (each time it parses it)."""
    return _MAY_WARN.search(text) is not None


def parse_snippet(source: str, expr: bool, line: int, path: str) -> Parsed:
    """Parse embedded Python from ``path`` whose text ``source`` starts on `.kedi` line
    ``line``: an expression (``expr``: its text stripped, as it is compiled) or statements.

    Text Python may warn of is parsed at its own `.kedi` lines (blank lines before it), so
    the warnings Python gives while parsing it name the `.kedi` file and line where it is
    written, as for a ``.py`` module (Python then warns again each time the text is parsed:
    parse it once). Other text far down the file is parsed alone (its tree's line numbers
    start at 1): the blank lines would cost more than its parse. A `SyntaxError`'s line
    numbers are in the text (line 1 is its first line), as `locate_syntax_error` reads them;
    its message names `.kedi` lines ("on line 12").
    """
    text, pad = _text(source, expr, line)
    mode = "eval" if expr else "exec"
    if "\r" in text:
        _lone_carriage_return(text)
    if pad >= _ALWAYS_AT_LINE and _MAY_WARN.search(text) is None:
        try:
            return ast.parse(text, path, mode=mode), pad
        except SyntaxError:
            pass  # parsed at its lines below, for a message naming `.kedi` lines
    try:
        return ast.parse("\n" * pad + text if pad else text, path, mode=mode), 0
    except SyntaxError as exc:
        if pad:
            if exc.lineno is not None:
                exc.lineno = max(exc.lineno - pad, 1)
            if exc.end_lineno is not None:
                exc.end_lineno = max(exc.end_lineno - pad, 1)
        if expr and exc.offset == 0:
            _at_end(exc, text)
        _in_its_line(exc)
        raise


def _in_its_line(exc: SyntaxError) -> None:
    """Python gives the error of a character after a line-continuation backslash on a
    continued line (``x = 1 \\`` then ``+ 2 \\.``) a column counted from the start of
    the first line joined (its ``text`` holds them all), where every other error's column is
    in its own line: count it in its own line."""
    text, offset = exc.text, exc.offset
    if not text or not offset or "\n" not in text[: offset - 1]:
        return
    if not exc.msg.startswith("unexpected character after line continuation"):
        return
    exc.offset = offset - (text.rfind("\n", 0, offset - 1) + 1)
    if exc.end_offset is not None and exc.end_offset >= offset:
        exc.end_offset -= offset - exc.offset


def _at_end(exc: SyntaxError, text: str) -> None:
    """Python gives an expression's error at its end (`` `a +` ``, `` `f(x) and` ``) the
    column 0 in "eval" mode: put it after the line's last character, where "exec" mode and
    a ``.py`` file put it, not at the expression's start."""
    lines = text.split("\n")
    line = min(max(exc.lineno or len(lines), 1), len(lines))
    exc.lineno = exc.end_lineno = line
    exc.offset = exc.end_offset = len(lines[line - 1]) + 1


def _text(source: str, expr: bool, line: int) -> tuple[str, int]:
    """The text `parse_snippet` parses (an expression's stripped) and the number of lines
    before it in the `.kedi` file."""
    if not expr:
        return source, line - 1
    if source[:1].isspace():  # the stripped text starts on a later line?
        line += source[: len(source) - len(source.lstrip())].count("\n")
    return source.strip(), line - 1


#: A carriage return that does not end a line (``\r\n`` does).
_LONE_CR = re.compile(r"\r(?!\n)")


def _lone_carriage_return(text: str) -> None:
    """Refuse a lone carriage return in ``text``, located in it (as `locate_syntax_error`
    reads a syntax error): Python ends a line there, Kedi does not (docs/language.md#lines),
    so Python's lines and columns would not be the `.kedi` file's, and a string holding
    one would change."""
    found = _LONE_CR.search(text)
    if found is None:
        return
    message = (
        "a carriage return (U+000D) not followed by a line feed is not allowed in Python "
        "code: Python would end the line there (write '\\r' in a string)"
    )
    raise _error_at(text, found.start(), message)


def _compile(
    snippet: n.PyCode | n.TypeRef, path: str, trees: dict[int, Parsed] | None, prelude: bool
) -> Parsed | SyntaxError:
    """The syntax error of ``snippet`` (located in the text parsed, as `locate_syntax_error`
    reads it), from parsing it, else from compiling it as the runtime does: an expression
    in ``"eval"`` mode, the prelude as a module, a block as a function's body; its tree
    when it has none."""
    if isinstance(snippet, n.TypeRef):
        expr, line = True, snippet.span.start_line
    else:
        expr, line = snippet.kind == "expr", snippet.line
    try:
        parsed = parse_snippet(snippet.source, expr, line, path)
    except SyntaxError as exc:  # Python 3.12 and later: a NUL is a SyntaxError too
        return _null_byte(snippet.source, expr) or exc
    except ValueError as exc:  # null bytes
        return _null_byte(snippet.source, expr) or SyntaxError(str(exc), ("", 1, 1, "", 1, 1))
    except (MemoryError, RecursionError) as exc:  # too deep or too large: no position given
        if isinstance(exc, RecursionError):
            reached_limit()  # on the caller's stack: again on a fresh one
        return _null_byte(snippet.source, expr) or _too_complex(snippet.source, expr, exc)
    kind = "expr" if expr else "prelude" if prelude else "block"
    tree, delta = parsed
    try:
        error = compile_error(tree, kind, path)
    except (MemoryError, RecursionError) as exc:  # as the parser's, above
        if isinstance(exc, RecursionError):
            reached_limit()
        return _too_complex(snippet.source, expr, exc, "compiler")
    if error is not None:
        text, pad = _text(snippet.source, expr, line)
        return _in_text(error, text, pad - delta)
    if trees is not None:
        trees[id(snippet)] = parsed
    return parsed


def _in_text(exc: SyntaxError, text: str, shift: int) -> SyntaxError:
    """A compile error ``exc`` (its column a UTF-8 byte offset, plus one) of a tree whose
    line ``k`` is line ``k - shift`` of ``text``, located in ``text`` as a parse error is
    (its column in characters), as `locate_syntax_error` reads it."""
    line = max((exc.lineno or 1) - shift, 1)
    lines = text.split("\n")
    raw = lines[line - 1].encode() if line <= len(lines) else b""
    column = len(raw[: max((exc.offset or 1) - 1, 0)].decode(errors="ignore")) + 1
    return SyntaxError(exc.msg, ("", line, column, "", line, column))


def _too_complex(source: str, expr: bool, exc: BaseException, by: str = "parser") -> SyntaxError:
    """Python's parser (or compiler: ``by``) gave up on ``source`` (a `MemoryError` or
    `RecursionError`, with no position): located at the one line that makes it give up
    alone, else at the snippet's first line (in the text parsed, as `locate_syntax_error`
    reads a syntax error)."""
    text = source.strip() if expr else source
    lines = text.split("\n")
    at, what = 1, "this code"  # the whole snippet, when no one line is at fault
    if len(lines) > 1:
        for number, line in enumerate(lines, 1):
            try:
                ast.parse(line.strip())
            except (MemoryError, RecursionError) as error:
                if isinstance(error, RecursionError):
                    reached_limit()
                at, what = number, "this line"
                break
            except (SyntaxError, ValueError):
                continue
    column = len(lines[at - 1]) - len(lines[at - 1].lstrip()) + 1
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    message = f"{what} is too deeply nested or too large for Python's {by} ({detail})"
    return SyntaxError(message, ("", at, column, "", at, column))


def _null_byte(source: str, expr: bool) -> SyntaxError | None:
    """Python refuses a NUL character without saying where it is: locate it (in the text
    parsed, as `locate_syntax_error` reads a syntax error)."""
    text = source.strip() if expr else source
    at = text.find("\0")
    if at < 0:
        return None
    return _error_at(text, at, "a NUL character (U+0000) is not allowed in Python code")


def _error_at(text: str, at: int, message: str) -> SyntaxError:
    """A syntax error at offset ``at`` of ``text`` (its line and column in it, as
    `locate_syntax_error` reads a syntax error)."""
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return SyntaxError(message, ("", line, column, "", line, column))


def python_diagnostics(
    module: n.Module, trees: dict[int, Parsed] | None = None
) -> list[Diagnostic]:
    """A located diagnostic for each embedded Python snippet that does not parse.
    ``trees``: where to keep each snippet that parses (`Parsed`), by the snippet's `id`:
    code compiled from ``module`` right after its check need not parse it again, which
    would give Python's warnings a second time (see `parse_snippet`). Past the recursion
    limit, Python's parser runs again on a fresh stack: how deeply a snippet may nest does
    not depend on the caller."""
    return stack_limited(lambda: _diagnostics(module, trees))


def _diagnostics(module: n.Module, trees: dict[int, Parsed] | None) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    path = module.path
    prelude = None if module.prelude is None else module.prelude.code
    failed: set[int] = set()
    valued: set[int] = set()
    # One syntax error a line, its first: a long line of broken snippets (`a`b`c`...)
    # repeated itself once per snippet, its output growing with the square of its length.
    lines: set[int] = set()
    for snippet in snippets((module.prelude, module.body), valued):
        exc = _compile(snippet, path, trees, snippet is prelude)
        if not isinstance(exc, SyntaxError):
            if id(snippet) in valued and not _returns(exc[0]):
                found.append(_no_return(module, snippet))
            continue
        failed.add(id(snippet))
        diagnostic = _diagnostic(module, snippet, exc)
        if diagnostic.line not in lines:
            lines.add(diagnostic.line)
            found.append(diagnostic)
    for node in module.body:
        if isinstance(node, n.TestSuite):
            for case in node.cases:
                located = _case_error(case, path, failed)
                if located is not None:
                    found.append(_diagnostic(module, *located))
                    found.sort(key=lambda diagnostic: diagnostic.line)
    return found


#: Bindings whose right-hand side may be a fence that must ``return`` the value.
_BINDINGS = frozenset({n.Assign, n.Reassign})
#: docs/language.md#assignment; a `return` that is not reached gives None (checked as usual)
_NO_RETURN = "a fenced right-hand side must return its value: the block has no 'return' statement"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _returns(tree: ast.AST) -> bool:
    """Whether a fence's own code (not a function or class it defines) has a ``return``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return True
        stack.extend(kid for kid in ast.iter_child_nodes(node) if not isinstance(kid, _SCOPES))
    return False


def _no_return(module: n.Module, snippet: n.PyCode | n.TypeRef) -> Diagnostic:
    line, col = snippet.span.start_line, snippet.span.start_col
    lines = module.lines
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    return Diagnostic(module.path, line, col, _NO_RETURN, text)


def _diagnostic(module: n.Module, snippet: n.PyCode | n.TypeRef, exc: SyntaxError) -> Diagnostic:
    lines = module.lines
    line, col = locate_syntax_error(snippet, exc, lines)
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    return Diagnostic(module.path, line, col, f"Python syntax error: {exc.msg}", text)


def _case_error(case: n.Case, path: str, failed: set[int]) -> tuple[n.PyCode, SyntaxError] | None:
    """The error of a case body whose lines each compile alone, but not together, as the
    runtime compiles them (one function's body): a ``global`` declaration after a line
    that binds or uses the name. Located in the item (line) where it is."""
    items = [item.code for item in case.body]
    if len(items) < 2 or not any("global" in item.source for item in items[1:]):
        return None
    if any(id(item) in failed for item in items):
        return None
    joined: list[str] = []
    for item in items:  # as `runtime.casecode.case_code` joins them
        joined.extend("" for _ in range(item.line - items[0].line - len(joined)))
        joined.extend(item.source.split("\n"))
    with warnings.catch_warnings():  # each line parsed and warned of already
        warnings.simplefilter("ignore")
        tree = ast.parse("\n".join(joined), path)
    exc = compile_error(tree, "block", path)
    if exc is None:
        return None
    line = items[0].line + max(exc.lineno or 1, 1) - 1
    item = next(i for i in reversed(items) if i.line <= line)
    return item, _in_text(exc, item.source, item.line - items[0].line)


def check_python(module: n.Module, trees: dict[int, Parsed] | None = None) -> n.Module:
    """``module`` unchanged; raise `KediParseError` when its embedded Python is invalid.
    ``trees``: as for `python_diagnostics`."""
    if not isinstance(module, n.Module):
        kind = type(module).__name__
        raise TypeError(f"check_python() takes a module from parse or parse_file, not {kind}")
    found = python_diagnostics(module, trees)
    if found:
        raise KediParseError(found)
    return module
