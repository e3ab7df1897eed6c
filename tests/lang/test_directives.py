"""Directive shapes (docs/language.md#directives, docs/language.md#newer-syntax): inline values,
settings, text, names, members,
statement bodies, control flow and tasks."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import KediParseError, parse
from pytest_kedi.lang import nodes as n
from pytest_kedi.lang.syntax import DIRECTIVES, Body, Place

from .conftest import error_of

SOURCE = """\
> adapter: pydantic
> model: `pick()`
> effort: high
> settings:
  temperature: 0.2
  stop: `["\\n"]`
> instructions: Be brief about <topic>.
> system:
  Line one.
  Line <two>.
> profile: reviewer:
    ###
    Reviews things.
    ###
    > model: openai:gpt
    > subagent: helper
    > max_agents: 2
    > workflow: delegate
    > output: list[str]
> import: services/users
> import: labels:
  a
  b
> export:
  tidy
> export: *
> requires:
  structured_output
  settings
> hooks:
  pre_tool_use: `guard`
> budget:
  request_limit: 10
> use: `web`
> profile: remote:
  > agent: a2a:
    endpoint: https://x
    auth:
      scheme: bearer
> mcp:
  name: files
  transport: stdio
> codemode:
  preload_tools:
    read_file
    write_file
"""


def by_name(module: n.Module) -> dict[str, list[n.Directive]]:
    out: dict[str, list[n.Directive]] = {}
    for stmt in module.body:
        assert isinstance(stmt, n.Directive)
        out.setdefault(stmt.name, []).append(stmt)
    return out


def test_directive_shapes() -> None:
    d = by_name(parse(SOURCE))
    assert d["adapter"][0].value == "pydantic" and d["adapter"][0].body_kind == "none"
    model = d["model"][0]
    assert model.code is not None and model.code.source == "pick()"
    settings = d["settings"][0]
    assert settings.body_kind == "settings"
    first = settings.settings[0]
    assert (first.key, first.value) == ("temperature", "0.2")
    assert settings.settings[1].code is not None
    inline = d["instructions"][0]
    assert inline.text is not None and any(isinstance(p, n.Subst) for p in inline.text.parts)
    system = d["system"][0]
    assert system.body_kind == "text" and len(system.rows) == 2
    profile, remote = d["profile"]
    assert profile.arg == "reviewer" and profile.docstring == "Reviews things."
    assert [m.name for m in profile.members] == [
        "model",
        "subagent",
        "max_agents",
        "workflow",
        "output",
    ]
    imports = d["import"]
    assert imports[0].value == "services/users"
    assert imports[1].arg == "labels" and imports[1].names == ("a", "b")
    assert d["export"][0].names == ("tidy",) and d["export"][1].value == "*"
    assert d["requires"][0].names == ("structured_output", "settings")
    assert d["hooks"][0].settings[0].code is not None
    agent = remote.members[0]
    assert agent.arg == "a2a"
    auth = agent.settings[1]
    assert auth.key == "auth" and [(e.key, e.value) for e in auth.entries] == [("scheme", "bearer")]
    assert d["codemode"][0].settings[0].items == ("read_file", "write_file")


def test_procedure_directives_optimize_auto_tool() -> None:
    src = (
        "@tidy(text) -> str:\n"
        "  > tool:\n    name: tidy_tool\n    risk: read_only\n    retries: 2\n"
        "    retry_on:\n      ValueError\n"
        "  > optimize: fields:\n    Read <text> and give [title].\n"
        "  > optimize: other:\n    >> Then [more].\n"
        "  = <title>\n"
        "@spec(x) -> str:\n  > auto:\n    Return x reversed.\n"
        "@legacy(x) -> str:\n  > auto:\n    >> Return x reversed.\n"
    )
    tidy, spec, legacy = parse(src).body
    assert isinstance(tidy, n.Procedure)
    tool, opt, opt2, _ = tidy.body
    assert isinstance(tool, n.Directive) and tool.settings[-1].items == ("ValueError",)
    assert isinstance(opt, n.Directive) and opt.arg == "fields"
    assert opt.body_kind == "statements"
    tpl = opt.body[0]
    assert isinstance(tpl, n.Template) and tpl.bare
    assert isinstance(opt2, n.Directive) and isinstance(opt2.body[0], n.Template)
    assert isinstance(spec, n.Procedure)
    auto = spec.body[0]
    assert isinstance(auto, n.Directive) and auto.body_kind == "text"
    assert isinstance(legacy, n.Procedure)
    legacy_auto = legacy.body[0]
    assert isinstance(legacy_auto, n.Directive) and legacy_auto.body_kind == "statements"


def test_if_else_deterministic_and_claim() -> None:
    src = (
        "> if: `n > 0`:\n  > show: big <n>\n\n# comment\n> else:\n  > show: `n`\n"
        "> if: the user <n> is `happy`\n  [y] = ok\n"
    )
    first, second = parse(src).body
    assert isinstance(first, n.If) and first.condition.code is not None
    assert first.orelse is not None and first.else_span is not None
    show = first.body[0]
    assert isinstance(show, n.Show) and show.value.mode == "text"
    assert isinstance(second, n.If) and second.condition.claim is not None
    assert second.orelse is None


def test_loops_and_map() -> None:
    src = (
        "> loop [item]: `range(3)`:\n  >> Judge <item> as [good: bool].\n> map:\n  `print(good)`\n"
        "> loop: `n < 3`:\n  [n] := `n + 1`\n"
        "> loop: <work> remains unfinished\n  >> Continue.\n"
    )
    it, cond, claim = parse(src).body
    assert isinstance(it, n.Loop) and it.binder == "item" and it.iterable is not None
    assert it.map_body is not None and it.map_span is not None
    assert isinstance(cond, n.Loop) and cond.condition is not None and cond.binder is None
    assert isinstance(claim, n.Loop) and claim.condition is not None
    assert claim.condition.claim is not None


def test_tasks() -> None:
    src = (
        "> task [job]: reviewer:\n  >> Review as [rec: str].\n"
        "> task_group:\n  > await [r]: job\n  > process:\n    > show: done\n"
        "> send: job:\n  >> Hurry.\n> interrupt: job:\n  >> Stop.\n> await: job\n"
    )
    task, group, send, interrupt, wait = parse(src).body
    assert isinstance(task, n.Directive) and (task.binder, task.arg) == ("job", "reviewer")
    assert isinstance(group, n.Directive) and [d.name for d in group.body] == [  # type: ignore[union-attr]
        "await",
        "process",
    ]
    assert isinstance(send, n.Directive) and send.arg == "job"
    assert isinstance(interrupt, n.Directive) and interrupt.body_kind == "statements"
    assert isinstance(wait, n.Directive) and wait.value == "job" and wait.binder is None


def test_package_manifest() -> None:
    src = "> package: reports:\n  version: 0.1.0\n  python_dependencies:\n    pydantic>=2\n"
    (pkg,) = parse(src).body
    assert isinstance(pkg, n.Directive) and pkg.arg == "reports"
    assert pkg.settings[1].items == ("pydantic>=2",)


@pytest.mark.parametrize(
    ("head", "column", "message"),
    [
        # A package's name was never checked: none, an empty one or any text parsed.
        ("> package:", 11, "'> package:' needs a name: '> package: name:'"),
        ("> package: :", 12, "missing '> package:' name: expected a name here"),
        ("> package: my-reports:", 12, "invalid '> package:' name 'my-reports': names must"),
        ("> package: rep)orts:", 12, "invalid '> package:' name 'rep)orts': names must"),
        ("> package: 日本:", 12, "invalid '> package:' name '日本': names must"),
    ],
)
def test_a_package_is_named_by_an_identifier(head: str, column: int, message: str) -> None:
    diag = error_of(f"{head}\n  version: 0.1.0\n")
    assert diag.message.startswith(message), diag.message
    assert (diag.line, diag.column) == (1, column)


@pytest.mark.parametrize(
    ("source", "line", "message"),
    [
        # A header ending in ':' with no body parsed as an empty block: `> history:` passed
        # though a history block requires `enabled`, and a body written at the header's
        # indentation was silently left out of it.
        ("> settings:\n>> Hi [x]\n", 1, "'> settings:' needs a value or an indented body"),
        ("> history:\n= a\n", 1, "'> history:' needs a value or an indented body"),
        ("> skills:\n", 1, "'> skills:' needs a value or an indented body"),
        ("> agent:\n", 1, "'> agent:' needs a value or an indented body"),
        ("> agent: a2a:\n", 1, "'> agent: a2a:' needs an indented body"),
        ("> mcp:\n", 1, "'> mcp:' needs a value or an indented body"),
        ("> artifacts:\n", 1, "'> artifacts:' needs a value or an indented body"),
        ("> codemode:\n", 1, "'> codemode:' needs a value or an indented body"),
        ("> hooks:\n", 1, "'> hooks:' needs a value or an indented body"),
        ("> package: p:\n", 1, "'> package: p:' needs an indented body"),
        ("@f():\n  > settings:\n  = a\n", 2, "'> settings:' needs a value or an indented body"),
        ("> profile: p:\n  > history:\n", 2, "'> history:' needs a value or an indented body"),
    ],
)
def test_a_block_directive_without_its_body_is_an_error(
    source: str, line: int, message: str
) -> None:
    diag = error_of(source)
    assert (diag.line, diag.message) == (line, message)


def test_an_empty_tool_block_is_still_a_tool_with_its_defaults() -> None:
    (proc,) = parse("@f() -> int:\n  > tool:\n  = `1`\n").body
    assert isinstance(proc, n.Procedure)
    assert isinstance(proc.body[0], n.Directive) and proc.body[0].name == "tool"


#: Where each kind of directive may stand, ``{d}`` the directive's header line.
_PLACED = {
    Place.ANYWHERE: "{d}\n",
    Place.TOP: "{d}\n",
    Place.PACKAGE: "{d}\n",
    Place.PROCEDURE: "@f():\n  {d}\n  = a\n",
    Place.PROFILE: "> profile: p:\n  {d}\n",
    Place.TEST_SUITE: "@test: t:\n  {d}\n",
    Place.EVAL_SUITE: "@eval: e:\n  {d}\n",
    Place.EXECUTABLE: "@f():\n  {d}\n  = a\n",
    Place.TASK_GROUP: "@f():\n  > task_group:\n    > await [r]: h\n    {d}\n",
}


@pytest.mark.parametrize(
    "name",
    sorted(d.name for d in DIRECTIVES.values() if d.body is not Body.OWN and d.name != "tool"),
)
def test_every_block_directive_header_needs_its_body(name: str) -> None:
    """Table-driven, so a directive added later is covered: a header ending in ':' with no
    body (and, for a named one, its name) is an error at its line."""
    d = DIRECTIVES[name]
    head = f"> {name}: x:" if d.arg and name not in ("import", "agent") else f"> {name}:"
    template = _PLACED[d.place]
    with pytest.raises(KediParseError) as info:
        parse(template.format(d=head), "h.kedi")
    assert info.value.line == 1 + template.split("{d}")[0].count("\n"), info.value.message


@pytest.mark.parametrize(
    ("source", "what"),
    [
        # A backtick row parsed, and the name exported or imported was the row's text with
        # its backticks: "exports '`g`', which the module does not define" at run time.
        ("> export:\n  g\n  `g`\n", "export"),
        ("> import: lib:\n  `g`\n", "import"),
    ],
)
def test_a_module_name_list_row_is_a_name_not_python(source: str, what: str) -> None:
    diag = error_of(source)
    assert diag.message.startswith(f"invalid name in the '{what}' list '`g`'"), diag.message
    assert (diag.line, diag.column) == (source.count("\n"), 3)


def test_a_use_list_row_may_still_be_python() -> None:
    (use,) = parse("> use:\n  tool_a\n  `pick()`\n").body
    assert isinstance(use, n.Directive) and use.names == ("tool_a", "`pick()`")


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        # A backtick value missing its closing '`' was taken as text: the model named
        # '`"gpt"', the setting the string '`0.3', failing (or not) only when used.
        ('> model: `"gpt"\n', 1, 10),
        ("> settings:\n  temperature: `0.3\n", 2, 16),
        ("> settings:\n  stop_sequences:\n    - a\n    - `b\n", 4, 7),
        ("> model: a` b` `c\n", 1, 16),
    ],
)
def test_an_unclosed_backtick_in_a_directive_value_is_an_error(
    source: str, line: int, column: int
) -> None:
    diag = error_of(source)
    assert diag.message.startswith("unbalanced backtick"), diag.message
    assert (diag.line, diag.column) == (line, column)


def test_a_backtick_in_a_quoted_or_escaped_directive_value_is_the_values_own() -> None:
    settings, model = parse('> settings:\n  stop_sequences: "a ` b"\n> model: a\\` b\n').body
    assert isinstance(model, n.Directive) and model.value == "a` b"
    assert isinstance(settings, n.Directive) and settings.settings is not None
    (entry,) = settings.settings
    assert entry.value == '"a ` b"'
