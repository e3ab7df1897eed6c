"""The Kedi vocabulary, declared once: the identifier rule and the table of directives.

Every other module derives what it needs from here: the parser's placement rules and body
readers (`lang.directives`, `lang.bodies`, `lang.checks`), the runtime's directive handlers
(`runtime.directive_effects`, which maps each `Runtime` kind to one function) and the lazy-binding
scan. Adding a directive is one `Directive` row in `DIRECTIVES` (and, if it needs a new
runtime behaviour, one handler for its `Runtime` kind).
See docs/language.md#directives for what each directive means.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

__all__ = [
    "AGENT",
    "DIRECTIVES",
    "IDENT",
    "IDENT_CHAR",
    "IDENT_RE",
    "IDENT_START",
    "NAMES",
    "Body",
    "Directive",
    "Place",
    "Runtime",
    "is_identifier",
    "names",
]

#: The characters a Kedi name starts with and continues with.
IDENT_START = "[A-Za-z_]"
IDENT_CHAR = "[A-Za-z0-9_]"
#: A Kedi name (variables, procedures, parameters, types, fields, binders, directives).
IDENT = rf"{IDENT_START}{IDENT_CHAR}*"
IDENT_RE = re.compile(IDENT)


def is_identifier(text: str) -> bool:
    return IDENT_RE.fullmatch(text) is not None


class Place(Enum):
    """Where a directive may stand (the block it is written in)."""

    ANYWHERE = "anywhere"  # agent directives: any body, profiles and suites included
    TOP = "top"  # top level only
    PACKAGE = "package"  # `package.kedi` only (checked with the package rules)
    TEST_SUITE = "test"  # directly inside an `@test:` suite
    EVAL_SUITE = "eval"  # directly inside an `@eval:` suite
    PROFILE = "profile"  # as a `> profile:` member
    PROCEDURE = "proc"  # directly in a procedure body
    TASK_GROUP = "task_group"  # inside `> task_group:`, after `> await`
    EXECUTABLE = "executable"  # statement positions (top level, procedures, blocks...)


class Body(Enum):
    """What follows the head: its inline value and/or indented body."""

    INLINE = "inline"  # one value on the head line
    SETTINGS = "settings"  # ``key: value`` lines
    TEXT = "text"  # text rows (or one inline text value)
    NAMES = "names"  # one name per row (or an inline list)
    STATEMENTS = "statements"  # a body of statements in its own block context
    OWN = "own"  # built by dedicated code (control flow, profiles)


class Runtime(Enum):
    """What the interpreter does with a `nodes.Directive` of this name."""

    STATE = "state"  # updates the agent state (model, instructions, settings, ...)
    MARKER = "marker"  # recorded; raised as unsupported at the next model call in scope
    INERT = "inert"  # validated by the parser, stored nowhere at run time
    UNSUPPORTED = "unsupported"  # a statement pytest-kedi refuses to run
    MODULES = "modules"  # import / export
    OPTIMIZE = "optimize"  # a model call with an optimization span
    NODE = "node"  # parsed into its own node (if/loop/show) or part of a suite


@dataclass(frozen=True, slots=True)
class Directive:
    name: str
    place: Place
    body: Body
    runtime: Runtime
    agent: bool = False  # an agent directive (allowed in profiles and suites)
    arg: bool = False  # ``> name: arg:`` opens a named body
    binder: bool = False  # ``> name [x]:``
    needs_body: bool = False  # an inline value alone is an error
    singleton: bool = False  # a second one in a profile is a duplicate
    context: str | None = None  # the block context its statement body is built in


_A, _T, _P, _E = Place.ANYWHERE, Place.TOP, Place.PROFILE, Place.EXECUTABLE
_D = Directive

_TABLE: tuple[Directive, ...] = (
    # agent directives
    _D("adapter", _A, Body.INLINE, Runtime.STATE, agent=True, singleton=True),
    _D("model", _A, Body.INLINE, Runtime.STATE, agent=True, singleton=True),
    _D("effort", _A, Body.INLINE, Runtime.MARKER, agent=True, singleton=True),
    _D("approval", _A, Body.INLINE, Runtime.MARKER, agent=True, singleton=True),
    _D("agent", _A, Body.SETTINGS, Runtime.MARKER, agent=True, arg=True, singleton=True),
    _D("instructions", _A, Body.TEXT, Runtime.STATE, agent=True),
    _D("system", _A, Body.TEXT, Runtime.STATE, agent=True),
    _D("settings", _A, Body.SETTINGS, Runtime.STATE, agent=True),
    _D("history", _A, Body.SETTINGS, Runtime.MARKER, agent=True),
    _D("artifacts", _A, Body.SETTINGS, Runtime.MARKER, agent=True),
    _D("mcp", _A, Body.SETTINGS, Runtime.MARKER, agent=True),
    _D("skills", _A, Body.SETTINGS, Runtime.MARKER, agent=True),
    _D("codemode", _A, Body.SETTINGS, Runtime.MARKER, agent=True),
    _D("hooks", _A, Body.SETTINGS, Runtime.MARKER, agent=True),
    _D("budget", _A, Body.SETTINGS, Runtime.MARKER, agent=True),
    _D("use", _A, Body.NAMES, Runtime.MARKER, agent=True),
    _D("requires", _A, Body.NAMES, Runtime.STATE, agent=True),
    # profiles and their members
    _D("profile", _T, Body.OWN, Runtime.INERT, arg=True, needs_body=True),
    _D("subagent", _P, Body.INLINE, Runtime.INERT),
    _D("max_agents", _P, Body.INLINE, Runtime.INERT, singleton=True),
    _D("workflow", _P, Body.INLINE, Runtime.INERT, singleton=True),
    _D("output", _P, Body.INLINE, Runtime.INERT, singleton=True),
    # modules and packages
    _D("import", _T, Body.NAMES, Runtime.MODULES, arg=True),
    _D("export", _T, Body.NAMES, Runtime.MODULES),
    _D("package", Place.PACKAGE, Body.SETTINGS, Runtime.INERT, arg=True, needs_body=True),
    # suites
    _D("case", Place.TEST_SUITE, Body.STATEMENTS, Runtime.NODE, arg=True),
    _D("data", Place.EVAL_SUITE, Body.STATEMENTS, Runtime.NODE, arg=True),
    _D("test_data", Place.EVAL_SUITE, Body.STATEMENTS, Runtime.NODE, arg=True),
    _D("metric", Place.EVAL_SUITE, Body.STATEMENTS, Runtime.NODE, arg=True),
    # procedure bodies
    _D("optimize", Place.PROCEDURE, Body.STATEMENTS, Runtime.OPTIMIZE, arg=True,
       needs_body=True, context="optimize"),
    _D("auto", Place.PROCEDURE, Body.TEXT, Runtime.UNSUPPORTED),
    _D("tool", Place.PROCEDURE, Body.SETTINGS, Runtime.INERT),
    # control flow
    _D("if", _E, Body.OWN, Runtime.NODE),
    _D("else", _E, Body.OWN, Runtime.NODE),
    _D("loop", _E, Body.OWN, Runtime.NODE, binder=True),
    _D("map", _E, Body.OWN, Runtime.NODE),
    _D("show", _E, Body.OWN, Runtime.NODE),
    # tasks (parsed and checked; not run by pytest-kedi)
    _D("task", _E, Body.STATEMENTS, Runtime.UNSUPPORTED, arg=True, binder=True,
       needs_body=True, context="task"),
    _D("await", _E, Body.INLINE, Runtime.UNSUPPORTED, binder=True),
    _D("send", _E, Body.STATEMENTS, Runtime.UNSUPPORTED, arg=True, needs_body=True,
       context="send"),
    _D("interrupt", _E, Body.STATEMENTS, Runtime.UNSUPPORTED, arg=True, needs_body=True,
       context="send"),
    _D("task_group", _E, Body.STATEMENTS, Runtime.UNSUPPORTED, needs_body=True,
       context="task_group"),
    _D("process", Place.TASK_GROUP, Body.STATEMENTS, Runtime.UNSUPPORTED, needs_body=True,
       context="process"),
)  # fmt: skip

#: Every directive by name.
DIRECTIVES: MappingProxyType[str, Directive] = MappingProxyType({d.name: d for d in _TABLE})
NAMES = frozenset(DIRECTIVES)


def names(where: Callable[[Directive], bool]) -> frozenset[str]:
    """The names of the directives for which ``where`` holds."""
    return frozenset(d.name for d in _TABLE if where(d))


#: Agent directives: allowed in every body, in profiles and directly in suites.
AGENT = names(lambda d: d.agent)
