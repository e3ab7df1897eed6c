"""Kedi wording for text that the text grammar rejects: which bracket, backtick or call is
left open, located at the character a user must fix."""

from __future__ import annotations

__all__ = ["MISSING_ARGUMENT", "explain"]

MISSING_ARGUMENT = "missing argument in a call: each ',' separates two arguments"


def explain(text: str, pos: int, at_end: bool) -> tuple[int, str]:
    """Turn a text-grammar failure at ``pos`` into (offset in text, Kedi message)."""
    stack: list[tuple[str, int]] = []
    i = 0
    in_code = -1
    while i < min(pos, len(text)):
        ch = text[i]
        if in_code >= 0:
            if ch == "`":
                in_code = -1
        elif ch == "\\":
            i += 1
        elif ch == "`":
            in_code = i
        elif ch in "<[" or (ch == "(" and stack and stack[-1][0] in "<("):
            stack.append((ch, i))
        elif stack and (ch, stack[-1][0]) in ((">", "<"), ("]", "["), (")", "(")):
            stack.pop()
        i += 1
    if in_code >= 0 or (pos < len(text) and text[pos] == "`" and "`" not in text[pos + 1 :]):
        where = in_code if in_code >= 0 else pos
        return where, "unbalanced backtick: inline Python must be closed with '`' on the same line"
    if pos < len(text) and text[pos] == "\\" and pos == len(text) - 1:
        return pos, (
            "a trailing '\\' continues only rendered '=' returns; "
            "write '\\\\' for a literal backslash"
        )
    if stack:
        kind, where = stack[-1]
        if kind == "(" and text[pos : pos + 1] in (",", ")") and text[:pos].rstrip()[-1:] in "(,":
            return pos, MISSING_ARGUMENT
        if kind == "(":
            return where, "unbalanced '(' in a call: the argument list is never closed with ')'"
        if kind == "<":
            if at_end:
                return where, "unbalanced '<': the substitution is never closed with '>'"
            return where, (
                "a substitution must be <name>, <proc(args)> or <`expr`>; "
                "write `<a.b>`-style Python as <`a.b`>, or '\\<' for a literal '<'"
            )
        if at_end:
            return where, "unbalanced '[': the output field is never closed with ']'"
        return where, (
            "an output field must be [name], [name: Type] or [name: `Type`]; "
            "write '\\[' for a literal '['"
        )
    ch = text[pos] if pos < len(text) else "end of line"
    return pos, f"unexpected {ch!r} in text"
