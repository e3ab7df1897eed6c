"""The line pre-pass (docs/language.md#lexical-structure): physical lines -> logical items.

It measures indentation (a tab is width 4), strips comments, recognises fences
and ``###`` blocks, and joins the few constructs that span physical lines:
parenthesised ``@proc(``/``~Type(`` headers and ``\\``-continued ``=`` returns.
A line ending in an opening fence (``= `````) takes the fenced block with it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from pytest_kedi.lang.source import KediSyntaxError, Source

__all__ = ["DocBlock", "Fence", "Item", "fence_dedent", "scan"]

FENCE = "```"
_OPAQUE = re.compile(r"```|`[^`]*`|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")
_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")
_TAGGED_FENCE = re.compile(r"```[ \t]*[A-Za-z][A-Za-z0-9_+.-]*")
_LONG_FENCE = re.compile(r"````+")


@dataclass(slots=True)
class Fence:
    """A fenced Python block: ``open_offset`` is the opening backticks."""

    open_offset: int
    body_line: int  # 1-based line of the first body line
    code: str  # dedented body
    close_end: int  # offset just past the closing backticks
    indent: int


@dataclass(slots=True)
class DocBlock:
    line: int
    indent: int
    start: int
    end: int
    text: str


@dataclass(slots=True)
class Item:
    """One logical line. ``text`` equals ``source[start:end]`` with comments
    blanked out (so indexes map 1:1 onto source offsets)."""

    kind: str  # "line" | "fence"
    line: int
    indent: int
    start: int
    end: int
    text: str
    blank_before: bool = False
    fence: Fence | None = None
    children: list[Item] = field(default_factory=list)
    doc: DocBlock | None = None

    @property
    def stop(self) -> int:
        """Offset one past the item's last character (fence included)."""
        return self.fence.close_end if self.fence is not None else self.end


def comment_start(text: str) -> int:
    """Index of the first unescaped ``#`` outside backticks (or ``len(text)``). Inside square
    brackets (a type: ``Literal["#1"]``, ``[x: Annotated[str, "a # b"]]``) a quoted string is
    Python's, so a ``#`` in it starts no comment (docs/language.md#comments)."""
    if "#" not in text:
        return len(text)
    if "`" not in text and "\\" not in text and not ("[" in text and ('"' in text or "'" in text)):
        return text.index("#")
    in_code = False
    depth = 0  # unescaped '[' nesting outside backticks
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "`":
            if text.startswith(FENCE, i):
                i += 3
                continue
            in_code = not in_code
        elif not in_code:
            if ch == "\\":
                i += 1
            elif ch == "#":
                return i
            elif ch == "[":
                depth += 1
            elif ch == "]":
                depth = max(0, depth - 1)
            elif depth and (ch == '"' or ch == "'"):
                string = _STRING.match(text, i)
                if string is not None:
                    i = string.end()
                    continue
        i += 1
    return n


def is_quoted(value: str) -> bool:
    """Whether ``value`` is one quoted Python string and nothing else."""
    return _STRING.fullmatch(value) is not None


def quoted_value(line: str) -> str:
    """``line``, a plain value, up to its comment, a leading quoted string kept whole: the
    string is Python's, so a ``#`` in it starts no comment (docs/language.md#comments)."""
    string = _STRING.match(line)
    if string is None:
        return line[: comment_start(line)].rstrip()
    rest = line[string.end() :]
    return (line[: string.end()] + rest[: comment_start(rest)]).rstrip()


def _indent_width(raw: str) -> tuple[int, int]:
    """(visual width with tab = 4, number of leading whitespace characters)."""
    lead = len(raw) - len(raw.lstrip(" \t"))
    if lead and "\t" in raw[:lead]:
        return lead + 3 * raw.count("\t", 0, lead), lead
    return lead, lead


def _dedent(line: str, width: int) -> str:
    """``line`` without ``width`` columns of indentation (a tab is four). A tab reaching
    past them keeps its other columns, as spaces: the line stays in its block."""
    taken = 0
    i = 0
    while i < len(line) and taken < width and line[i] in " \t":
        taken += 4 if line[i] == "\t" else 1
        i += 1
    if taken > width:
        return " " * (taken - width) + line[i:]
    return line[i:]


def fence_dedent(line: str, col: int) -> int:
    """How many characters the dedent of a fence body takes from ``line``, a body line as
    the `.kedi` file holds it (``col``: the fence's `PyCode.col`, its indentation width + 1).
    A tab is four columns of indentation (docs/language.md#indentation) but one character
    of the line: Python's columns in the dedented text are shifted by this count (negative
    where a tab reaching past the fence's indentation left its other columns as spaces)."""
    return len(line) - len(_dedent(line, col - 1))


def _paren_depth(text: str, depth: int) -> int:
    """``depth`` plus the net parentheses of ``text`` outside backticks and strings."""
    if "`" in text or '"' in text or "'" in text:
        text = _OPAQUE.sub("", text)
    return depth + text.count("(") - text.count(")")


def _opens_fence(text: str) -> bool:
    return text.endswith(FENCE) and text != FENCE and text.count("`") % 2 == 1


def _open_code(text: str, open_at: int = -1) -> int:
    r"""Index of the backtick that leaves a code segment open at the end of ``text``
    (-1 when none). ``open_at >= 0`` means ``text`` starts inside code. ``` runs are
    fences, not code; outside code ``\``` is an escaped (literal) backtick."""
    if text.endswith(FENCE):
        return -1
    if open_at < 0 and text.count("`") % 2 == 0 and "\\" not in text and FENCE not in text:
        return -1  # the common case: balanced, no escapes, no fences
    i = 0
    size = len(text)
    while i < size:
        ch = text[i]
        if ch == "`":
            if text.startswith(FENCE, i):
                i += 3
                continue
            open_at = i if open_at < 0 else -1
        elif ch == "\\" and open_at < 0:
            i += 1
        i += 1
    return open_at


def _ends_with_continuation(text: str) -> bool:
    stripped = text.rstrip("\\")
    return (len(text) - len(stripped)) % 2 == 1


class _Scanner:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.text = src.text
        self.starts = src.line_starts
        self.lines = src.lines
        self.items: list[Item] = []
        self.docs: list[DocBlock] = []

    def line_bounds(self, index: int) -> tuple[int, str]:
        return self.starts[index], self.lines[index]

    def run(self) -> list[Item]:
        lines = self.lines
        total = len(lines)
        if total and lines[-1] == "" and self.text.endswith("\n"):
            total -= 1
        i = 0
        blank = False
        items = self.items
        while i < total:
            raw = lines[i]
            stripped = raw.strip()
            if not stripped:
                blank = True
                i += 1
                continue
            width, lead = _indent_width(raw)
            first = stripped[0]
            if first == "#":
                if stripped == "###":
                    i = self.doc_block(i, total, width, lead)
                else:
                    i += 1
                continue
            base = self.starts[i]
            if first == "`" and _TAGGED_FENCE.fullmatch(stripped):
                raise KediSyntaxError(
                    base + lead, "a fence is ``` alone on its line (no language tag)"
                )
            if first == "`" and _LONG_FENCE.fullmatch(stripped):
                raise KediSyntaxError(
                    base + lead, "a fence is exactly three backticks (```) alone on its line"
                )
            if stripped == FENCE:
                fence, i = self.fence(i + 1, total, width, base + lead, i)
                items.append(
                    Item(
                        "fence",
                        fence.body_line - 1,
                        width,
                        base + lead,
                        base + lead + 3,
                        FENCE,
                        blank,
                        fence,
                    )
                )
                blank = False
                continue
            cut = comment_start(raw)
            body = raw[:cut].rstrip()
            if len(body) <= lead:
                i += 1  # an inline comment alone on its line
                continue
            item = Item("line", i + 1, width, base + lead, base + len(body), body[lead:], blank)
            blank = False
            i += 1
            if (first == "@" or (first == "~" and not stripped.startswith("~~"))) and "(" in body:
                i = self.join_header(item, i, total)
            elif first == "=" and _ends_with_continuation(item.text):
                i = self.join_continuation(item, i, total)
            if (first == "[" or first == "=") and "`" in body:
                open_at = _open_code(item.text)
                if open_at >= 0:
                    i = self.join_code(item, i, total, open_at)
            if _opens_fence(item.text):
                item.fence, i = self.fence(i, total, width, item.end - 3, item.line - 1)
            elif (first == "[" or first == "=") and FENCE in item.text:
                raise KediSyntaxError(
                    item.start + item.text.index(FENCE),
                    "a fence opener '```' must end its line (no language tag or text after it)",
                )
            items.append(item)
        return items

    def join_header(self, item: Item, i: int, total: int) -> int:
        depth = _paren_depth(item.text, 0)
        if depth <= 0:
            return i
        parts = [item.text]
        while depth > 0:
            if i >= total:
                raise KediSyntaxError(
                    item.start + item.text.index("("),
                    "unbalanced '(': this header's parameter list is never closed with ')'",
                )
            raw = self.lines[i]
            if raw.strip() == "###":  # a block comment between parameters or fields
                i = self.comment_end(i, total) + 1
                continue
            cut = comment_start(raw)
            body = raw[:cut].rstrip()
            gap = self.starts[i] - item.end  # newline(s) and blanked tail of the previous line(s)
            parts.append(" " * (gap - 1) + "\n" + body)
            item.end = self.starts[i] + len(body)
            depth = _paren_depth(body, depth)
            i += 1
        item.text = "".join(parts)
        return i

    def join_continuation(self, item: Item, i: int, total: int) -> int:
        parts = [item.text]
        backslash = item.end - 1  # the last continuation's '\\'
        while _ends_with_continuation(parts[-1]) and i < total:
            raw = self.lines[i]
            if not raw.strip() or raw.strip() == "###":
                break
            cut = comment_start(raw)
            body = raw[:cut].rstrip()
            if body.strip():
                backslash = self.starts[i] + len(body) - 1
            else:  # a comment-only line: the return goes on past it (docs/language.md#returns)
                body = "\\"  # (an empty segment, which `TreeBuilder.continued` skips)
            gap = self.starts[i] - item.end
            parts.append(" " * (gap - 1) + "\n" + body)
            item.end = self.starts[i] + len(body)
            i += 1
        if _ends_with_continuation(parts[-1]):
            follows = "the next line is blank" if i < total else "no line follows"
            raise KediSyntaxError(
                backslash,
                f"a trailing '\\' continues the return on the next line, but {follows} "
                "(write '\\\\' for a literal backslash)",
            )
        item.text = "".join(parts)
        return i

    def join_code(self, item: Item, i: int, total: int, open_at: int) -> int:
        """A backtick expression spanning lines (``[x] = `[`` ... ``]` ``)."""
        state = 0
        while i < total:
            state = _open_code(self.lines[i], state)
            i += 1
            if state < 0:
                line_start = self.starts[item.line - 1]
                raw = "\n".join(self.lines[item.line - 1 : i])
                body = raw[: comment_start(raw)].rstrip()
                item.text = body[item.start - line_start :]
                item.end = line_start + len(body)
                return i
        raise KediSyntaxError(
            item.start + open_at,
            "unbalanced backtick: inline Python must be closed with '`'",
        )

    def fence(
        self, i: int, total: int, width: int, open_offset: int, open_index: int
    ) -> tuple[Fence, int]:
        body: list[str] = []
        j = i
        while j < total:
            raw = self.lines[j]
            if raw.strip() == FENCE:
                at = raw.index(FENCE)
                indent = _indent_width(raw)[0]
                if indent != width:  # docs/language.md#python
                    raise KediSyntaxError(
                        self.starts[j] + at,
                        f"a closing fence must be indented as its opening line ({width} "
                        f"columns, not {indent})",
                    )
                close = self.starts[j] + at + 3
                code = "\n".join(_dedent(line, width) for line in body)
                return Fence(open_offset, i + 1, code, close, width), j + 1
            body.append(self.lines[j])
            j += 1
        message = "unterminated fence: no closing ``` line was found"
        raise KediSyntaxError(open_offset, message + self.near_miss(i, total, FENCE))

    def comment_end(self, i: int, total: int) -> int:
        """Index of the ``###`` line closing the block comment that line ``i`` opens."""
        for j in range(i + 1, total):
            if self.lines[j].strip() == "###":
                return j
        lead = len(self.lines[i]) - len(self.lines[i].lstrip(" \t"))
        message = "unterminated `###` block comment: no closing `###` line"
        raise KediSyntaxError(self.starts[i] + lead, message + self.near_miss(i + 1, total, "###"))

    def near_miss(self, i: int, total: int, marker: str) -> str:
        """What an unclosed fence's or block comment's message adds about the first line
        from ``i`` on that looks like its closing line but is not: ``marker`` with text
        after it ("```  # done"), or with a character that does not show (a zero-width
        space pasted with it), which the line, looking right, would never reveal."""
        for k in range(i, total):
            raw = self.lines[k]
            shown = "".join(ch for ch in raw if not _hidden(ch)).strip()
            if not shown.startswith(marker):
                continue
            hidden = next((ch for ch in raw if _hidden(ch)), None)
            if shown == marker and hidden is not None:
                name = unicodedata.name(hidden, "an unnamed character")
                return f" (line {k + 1} would close it but holds U+{ord(hidden):04X}, {name})"
            return f" (line {k + 1} starts with {marker} but is not {marker} alone)"
        return ""

    def doc_block(self, i: int, total: int, width: int, lead: int) -> int:
        j = self.comment_end(i, total)
        # Dedented by the body's common indentation, not the first line's: each line keeps
        # its indentation relative to the others (docs/language.md#comments).
        lines = self.lines[i + 1 : j]
        while lines and not lines[0].strip():
            lines = lines[1:]
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        common = min((_indent_width(line)[0] for line in lines if line.strip()), default=0)
        text = "\n".join(_dedent(line, common) for line in lines).rstrip()
        end = self.starts[j] + len(self.lines[j].rstrip())
        doc = DocBlock(i + 1, width, self.starts[i] + lead, end, text)
        self.docs.append(doc)
        item = Item("doc", i + 1, width, doc.start, doc.end, "###", False, None, [], doc)
        self.items.append(item)
        return j + 1


def _hidden(ch: str) -> bool:
    """A character that does not show (a zero-width space, a byte-order mark)."""
    return unicodedata.category(ch) == "Cf"


def scan(src: Source) -> list[Item]:
    """Return the logical items of ``src`` in order (``kind``: line, fence, doc)."""
    return _Scanner(src).run()
