"""Static checks on built nodes: dead code (docs/language.md#dead-code), `> tool:` placement and
the literal/vocabulary checks of docs/language.md#unsupported-directives and
docs/language.md#newer-directives."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.context import BuildContext
from pytest_kedi.lang.heads import check_type
from pytest_kedi.lang.scanner import Item
from pytest_kedi.lang.source import KediSyntaxError
from pytest_kedi.lang.syntax import Place, Runtime, is_identifier, names

__all__ = ["check_body", "check_directive", "check_package", "check_scope"]

EXECUTABLE = (
    n.Assign,
    n.Reassign,
    n.Template,
    n.RawCapture,
    n.Return,
    n.PythonStmt,
    n.PythonBlock,
    n.If,
    n.Loop,
    n.Show,
)
#: Task statements: parsed and checked like statements (never run by pytest-kedi).
_TASKS = names(lambda d: d.place is Place.EXECUTABLE and d.runtime is Runtime.UNSUPPORTED)
_INT = re.compile(r"[0-9]+")
_SOLE_BACKTICK = re.compile(r"`[^`]+`")
_NUMBER = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")

HOOK_EVENTS = frozenset(
    [
        "user_prompt_submit",
        "pre_tool_use",
        "post_tool_use",
        "post_tool_use_failure",
        "post_tool_result_failure",
    ]
)
CAPABILITIES = frozenset(
    [
        "structured_output",
        "tool_registration",
        "mcp",
        "profile_override",
        "model_override",
        "effort",
        "settings",
        "codemode",
        "native_approvals",
        "native_approval_handler",
        "subagents",
        "background_subagents",
        "artifacts",
        "native_artifacts",
        "stateful_history",
        "history_replay",
        "native_compaction",
        "stream_events",
        "hooks",
    ]
)
_CHOICES = {
    "adapter": ("pydantic", "dspy", "langchain"),
    "effort": ("minimal", "low", "medium", "high", "xhigh", "max"),
    "approval": ("allow", "deny"),
    "agent": ("claude", "codex", "acp", "a2a"),
    "history": ("enabled", "disabled"),
    "artifacts": ("enabled", "disabled"),
    "skills": ("enabled", "disabled"),
    "codemode": ("enabled", "disabled"),
    "hooks": ("enabled", "disabled"),
    "workflow": ("delegate", "dynamic"),
}
_KEYS = {
    "history": frozenset(
        ["enabled", "compaction_mode", "compaction_threshold", "processor", "processor_condition"]
    ),
    "skills": frozenset(
        ["enabled", "cwd", "max_skills", "include_registry", "include_all", "exclude_paths"]
    ),
    "mcp": frozenset(["name", "transport", "command", "args", "env", "cwd", "url", "headers"]),
    "agent": frozenset(["acp"]),  # the plain block; `> agent: a2a:` sections are open
    "artifacts": frozenset(
        [
            "enabled",
            "store",
            "path",
            "threshold",
            "ttl",
            "idle_ttl",
            "preview_chars",
            "read_max_chars",
            "session_quota",
            "max_artifacts",
            "cleanup_interval",
            "query_artifacts",
        ]
    ),
    "budget": frozenset({"request_limit", "tool_attempt_limit"}),
    "tool": frozenset({"name", "description", "risk", "retries", "retry_on"}),
}


def _terminal(stmt: n.Stmt) -> bool:
    if isinstance(stmt, n.Return):
        return True
    if isinstance(stmt, n.If) and stmt.orelse is not None:
        return _ends(stmt.body) and _ends(stmt.orelse)
    return False


def _ends(body: tuple[n.Stmt, ...]) -> bool:
    return any(_terminal(s) for s in body)


def _executable(stmt: n.Stmt) -> bool:
    if isinstance(stmt, EXECUTABLE):
        return True
    return isinstance(stmt, n.Directive) and stmt.name in _TASKS


def check_scope(body: Sequence[n.Node]) -> None:
    """Directive conflicts within one scope: `> adapter:` with `> agent:`
    (docs/language.md#model-directives),
    duplicate `> optimize:` span names (docs/language.md#model-directives)."""
    kinds: set[str] = set()
    spans: set[str] = set()
    for stmt in body:
        if not isinstance(stmt, n.Directive):
            continue
        if stmt.name in ("adapter", "agent"):
            other = "agent" if stmt.name == "adapter" else "adapter"
            if other in kinds:
                raise KediSyntaxError(
                    stmt.span.start_offset,
                    "'> adapter:' and '> agent:' cannot be mixed in one scope",
                )
            kinds.add(stmt.name)
        if stmt.name == "optimize" and stmt.arg is not None:
            if stmt.arg in spans:
                raise KediSyntaxError(
                    stmt.span.start_offset, f"duplicate '> optimize:' span name {stmt.arg!r}"
                )
            spans.add(stmt.arg)


def check_body(body: list[n.Stmt], ctx: BuildContext) -> None:
    check_scope(body)
    terminal: n.Stmt | None = None
    tool_seen = False
    executable_seen = False
    for stmt in body:
        if terminal is not None and _executable(stmt):
            raise KediSyntaxError(
                stmt.span.start_offset,
                "unreachable statement: it follows a '=' return in the same block",
            )
        if terminal is None and _terminal(stmt):
            terminal = stmt
        if isinstance(stmt, n.Directive) and stmt.name == "tool" and ctx.kind == "proc":
            if tool_seen:
                raise KediSyntaxError(
                    stmt.span.start_offset, "a procedure has at most one '> tool:'"
                )
            if executable_seen:
                raise KediSyntaxError(
                    stmt.span.start_offset,
                    "'> tool:' must come before the procedure's executable statements "
                    "(only the docstring, comments or directives may precede it)",
                )
            tool_seen = True
        if _executable(stmt) or isinstance(stmt, n.Procedure | n.TypeDecl):
            executable_seen = True


def _fail(offset: int, message: str) -> KediSyntaxError:
    return KediSyntaxError(offset, message)


def _choice(d: n.Directive, at: int) -> None:
    options = _CHOICES.get(d.name)
    value = d.value if d.value is not None else (d.arg if d.name == "agent" else None)
    if options is None or value is None or d.code is not None:
        return
    if d.name == "agent" and value in ("pydantic", "dspy", "langchain"):
        raise _fail(at, f"'> agent: {value}' names a framework; use '> adapter: {value}'")
    if d.name == "adapter" and value in ("claude", "codex", "acp", "a2a"):
        raise _fail(at, f"'> adapter: {value}' names a harness; use '> agent: {value}'")
    if value not in options:
        raise _fail(
            at,
            f"invalid value {value!r} for '> {d.name}:'; expected one of "
            + ", ".join(options)
            + " or a backtick expression",
        )


def _kv_value_at(item: Item, kv: n.KeyValue) -> int:
    """Offset of a ``key: value`` body line's plain value (else of its key)."""
    for kid in item.children:
        if kid.start == kv.span.start_offset:
            colon = kid.text.find(":")
            rest = kid.text[colon + 1 :] if colon >= 0 else ""
            if rest.strip():
                return kid.start + colon + 1 + len(rest) - len(rest.lstrip())
    return kv.span.start_offset


def _setting_checks(d: n.Directive, item: Item) -> None:
    keys = _KEYS.get(d.name) if d.name != "agent" or d.arg is None else None
    seen: set[str] = set()
    for kv in d.settings:
        at = kv.span.start_offset
        if keys is not None and kv.key not in keys:
            raise _fail(
                at,
                f"unknown key {kv.key!r} in '> {d.name}:'; expected one of "
                + ", ".join(sorted(keys)),
            )
        if d.name == "hooks" and kv.key not in HOOK_EVENTS:
            raise _fail(
                at,
                f"unknown hook event {kv.key!r}; expected one of " + ", ".join(sorted(HOOK_EVENTS)),
            )
        if kv.key in seen:  # every `key: value` body (docs/language.md §4.1)
            raise _fail(at, f"duplicate {kv.key!r} in '> {d.name}:'")
        seen.add(kv.key)
        if kv.items or kv.entries:
            _single_value(d, kv)
            continue
        value = kv.value
        if kv.code is not None or value is None:
            continue
        at = _kv_value_at(item, kv)  # a bad value is shown at the value
        if d.name == "hooks":
            raise _fail(at, f"hook {kv.key!r} needs a backtick handler such as `my_handler`")
        if d.name == "budget" and not _INT.fullmatch(value):
            raise _fail(at, f"budget {kv.key!r} must be a nonnegative integer, not {value!r}")
        if d.name == "tool":
            _tool_value(kv, at)
        if (
            d.name == "mcp"
            and kv.key == "transport"
            and value not in ("stdio", "streamable-http", "http", "sse")
        ):
            raise _fail(at, f"invalid mcp transport {value!r}")
        if (
            d.name == "history"
            and kv.key == "compaction_mode"
            and value not in ("native", "disabled")
        ):
            raise _fail(at, f"invalid compaction_mode {value!r}; expected native or disabled")
        if (
            d.name == "history"
            and kv.key == "compaction_threshold"
            and (not _NUMBER.fullmatch(value) or float(value) <= 0)
        ):
            raise _fail(at, "compaction_threshold must be a number greater than 0")
        if (
            d.name == "skills"
            and kv.key == "max_skills"
            and (not _INT.fullmatch(value) or not 1 <= int(value) <= 100)
        ):
            raise _fail(at, "max_skills must be an integer from 1 to 100")
    if d.name == "history" and "compaction_threshold" in seen:
        mode = next((kv.value for kv in d.settings if kv.key == "compaction_mode"), None)
        if mode == "disabled":
            raise _fail(
                next(kv for kv in d.settings if kv.key == "compaction_threshold").span.start_offset,
                "compaction_threshold cannot be set when compaction_mode is disabled",
            )
    if d.name in ("history", "skills") and d.settings and "enabled" not in seen:
        raise _fail(d.span.start_offset, f"a '> {d.name}:' block requires an 'enabled' key")


#: Keys whose value is one literal checked above (or, for hooks, one backtick handler):
#: an indented list under them is not read as that value.
_SINGLE = {
    "tool": frozenset({"name", "risk", "retries"}),
    "budget": frozenset({"request_limit", "tool_attempt_limit"}),
    "mcp": frozenset({"transport"}),
    "history": frozenset({"compaction_mode", "compaction_threshold"}),
    "skills": frozenset({"max_skills"}),
}


def _single_value(d: n.Directive, kv: n.KeyValue) -> None:
    """An indented list under a key that takes one checked value bypassed its check
    (``retries:`` then ``-1`` on the next line); hooks take backtick handlers only."""
    at = kv.span.start_offset
    if d.name == "hooks":
        if kv.entries or not all(_SOLE_BACKTICK.fullmatch(item) for item in kv.items):
            raise _fail(at, f"hook {kv.key!r} needs a backtick handler such as `my_handler`")
    elif kv.key in _SINGLE.get(d.name, ()):
        raise _fail(at, f"{kv.key!r} in '> {d.name}:' takes one value, not an indented list")


def _tool_value(kv: n.KeyValue, at: int) -> None:
    value = kv.value or ""
    if kv.key == "name" and not is_identifier(value):
        raise _fail(at, f"tool name {value!r} must be an identifier")
    if kv.key == "risk" and value not in ("read_only", "mutating", "sensitive"):
        raise _fail(at, f"invalid tool risk {value!r}; expected read_only, mutating or sensitive")
    if kv.key == "retries" and not _INT.fullmatch(value):
        raise _fail(at, f"tool retries must be an integer >= 0, not {value!r}")


def _value_at(item: Item, value: str | None) -> int:
    """Offset of an inline header value (else of the directive)."""
    colon = item.text.find(":")
    idx = item.text.find(value, colon + 1) if value and colon >= 0 else -1
    return item.start + idx if idx >= 0 else item.start


def _name_at(item: Item, name: str, occurrence: int = 1) -> int:
    """Offset of the ``occurrence``-th body line naming ``name`` (else the inline value)."""
    for kid in item.children:
        if kid.text.strip() == name:
            occurrence -= 1
            if occurrence == 0:
                return kid.start
    return _value_at(item, name)


#: Directives whose body is a `key: value` block and that take no one-line value
#: (docs/language.md#newer-directives) -> what the block holds
_BLOCK_ONLY = {
    "budget": "limits",
    "tool": "keys (name, description, risk, retries, retry_on)",
}


def check_directive(d: n.Directive, item: Item) -> None:
    """Literal and vocabulary checks for one directive (raises on the first problem)."""
    at = item.start
    _choice(d, _value_at(item, d.value if d.value is not None else d.arg))
    if d.settings:
        _setting_checks(d, item)
    if d.name in _BLOCK_ONLY and d.value is not None:
        raise _fail(
            _value_at(item, d.value),
            f"'> {d.name}:' takes an indented block of {_BLOCK_ONLY[d.name]}, not an inline value",
        )
    if d.name == "requires":
        values = d.names if d.body_kind == "names" else ((d.value,) if d.value else ())
        for cap in values:
            if cap not in CAPABILITIES:
                raise _fail(_name_at(item, cap), f"unknown capability {cap!r} in '> requires:'")
    if (
        d.name == "max_agents"
        and d.code is None
        and (d.value is None or not _INT.fullmatch(d.value) or int(d.value) <= 0)
    ):
        raise _fail(_value_at(item, d.value), "'> max_agents:' must be an integer greater than 0")
    if d.name == "import" and d.code is None:
        path = d.arg if d.arg is not None else d.value
        _check_import_path(path or "", _value_at(item, path))
    if d.name in ("import", "export", "use", "requires") and len(set(d.names)) != len(d.names):
        dup = next(x for i, x in enumerate(d.names) if x in d.names[:i])
        raise _fail(_name_at(item, dup, 2), f"{dup!r} is listed twice in '> {d.name}:'")
    if d.name == "output" and d.code is None:
        check_type(d.value or "", at + max(item.text.rfind(d.value or ""), 0))
    named = d.name in ("use", "subagent") and d.code is None and d.value is not None
    if named and not is_identifier(d.value or ""):
        raise _fail(
            _value_at(item, d.value),
            f"'> {d.name}:' takes a name; {d.value!r} is not an identifier",
        )
    if d.name == "await" and d.value is not None and not is_identifier(d.value):
        raise _fail(
            _value_at(item, d.value),
            f"'> await:' names a task handle; {d.value!r} is not an identifier",
        )


def _check_import_path(path: str, at: int) -> None:
    if path.endswith(".kedi"):
        raise _fail(at, f"import path {path!r} must not end in '.kedi'")
    if path.startswith("/") or "\\" in path:
        raise _fail(at, f"import path {path!r} must be relative and use '/'")
    for segment in path.split("/"):
        if not is_identifier(segment):
            raise _fail(at, f"invalid import path {path!r}: segments must be identifiers")


def check_package(module_body: tuple[n.Stmt, ...], prelude: n.PythonBlock | None) -> None:
    """A `> package:` manifest lives alone in its package.kedi
    (docs/language.md#directive-inventory)."""
    if not any(isinstance(s, n.Directive) and s.name == "package" for s in module_body):
        return
    others: list[n.Node] = [
        s for s in module_body if not (isinstance(s, n.Directive) and s.name == "package")
    ]
    if prelude is not None:
        others.insert(0, prelude)
    if others or len(module_body) > 1:
        node = others[0] if others else module_body[1]
        raise KediSyntaxError(
            node.span.start_offset,
            "a '> package:' manifest must be alone in its package.kedi file",
        )
