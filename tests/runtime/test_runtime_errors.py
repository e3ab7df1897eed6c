"""The error model (docs/language.md#errors, docs/language.md#diagnostics)."""

from __future__ import annotations

import pickle

import pytest

from pytest_kedi.lang.nodes import Span
from pytest_kedi.runtime.errors import (
    KediExecutionError,
    KediKeyExecutionError,
    KediNameError,
    KediPythonTrace,
    KediTraceFrame,
    KediTypeExecutionError,
    KediUnsupportedError,
    KediValueExecutionError,
    LoopIterationLimitError,
)

SPAN = Span("suite.kedi", 3, 1, 3, 10, 20, 29)


def test_subclasses_are_also_python_exceptions():
    assert issubclass(KediTypeExecutionError, TypeError)
    assert issubclass(KediValueExecutionError, ValueError)
    assert issubclass(KediKeyExecutionError, KeyError)
    assert issubclass(KediNameError, NameError)
    assert issubclass(KediUnsupportedError, KediExecutionError)
    assert issubclass(LoopIterationLimitError, KediExecutionError)


def test_render_has_header_frames_python_line_and_final_line():
    frame = KediTraceFrame("procedure", "score", SPAN, "score", "@score(x):")
    inner = Span("suite.kedi", 4, 1, 4, 6, 30, 35)
    trace = KediPythonTrace("1/0", "<v>", 1, None, inner, 4, "  1/0", "score")
    err = KediExecutionError(
        "division by zero",
        frames=(frame,),
        python_traces=(trace,),
        original=ZeroDivisionError("division by zero"),
    )
    lines = str(err).splitlines()
    assert lines[0] == "Kedi stack trace:"
    assert lines[1] == '  File "suite.kedi", line 3, in score'
    assert lines[2] == "    @score(x):"
    assert lines[3] == '  File "suite.kedi", line 4, in score (Python)'
    assert "1/0" in lines[4]
    assert lines[-1] == "ZeroDivisionError: division by zero"
    assert err.render() == str(err)
    assert str(err) in repr(err)
    assert err.kind_name == "ZeroDivisionError"


def test_without_original_the_final_line_names_the_kedi_class():
    err = KediTypeExecutionError("bad value")
    assert str(err).splitlines()[-1] == "KediTypeExecutionError: bad value"
    assert err.kind_name == "KediTypeExecutionError"
    assert err.original is None


def test_message_is_one_line():
    assert KediExecutionError("a\n  b\n").message == "a b"


def test_unsupported_message_names_construct_and_line():
    err = KediUnsupportedError("> mcp:", 7)
    assert err.message == "`> mcp:` is not supported by pytest-kedi (line 7)"
    assert str(err).splitlines()[-1].startswith("KediUnsupportedError: `> mcp:`")


def test_color_rendering_only_adds_escapes():
    err = KediValueExecutionError("nope")
    assert "\x1b[" in err.render(use_color=True)
    assert "\x1b[" not in err.render()


@pytest.mark.parametrize(
    "err",
    [
        KediTypeExecutionError("t", frames=(KediTraceFrame("type", "x", SPAN),)),
        KediUnsupportedError("> task", 2),
        KediExecutionError("z", original=ZeroDivisionError("z")),
    ],
)
def test_errors_pickle(err):
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err)
    assert clone.render() == err.render()


def test_an_error_a_procedure_raised_is_caught_by_the_raised_class(tmp_path):
    """An exception raised in a procedure reached the calling Python as a Kedi error that
    ``except ZeroDivisionError`` (or ``pytest.raises(MyError)``) did not catch."""
    from pytest_kedi.runtime import load

    source = (
        "```\nclass Boom(Exception):\n    def __init__(self, code, text):\n"
        "        super().__init__(text)\n        self.code = code\n"
        "def boom():\n    raise Boom(7, 'custom')\n```\n\n"
        "@div(x: int) -> int:\n  = `1 // x`\n\n@fail() -> int:\n  = `boom()`\n"
    )
    program = load(tmp_path / "c.kedi", source=source, mode="validate")
    with pytest.raises(ZeroDivisionError) as divided:
        program.procedures["div"](0)
    assert isinstance(divided.value, KediExecutionError)
    assert divided.value.render().splitlines()[-1] == (
        "ZeroDivisionError: integer division or modulo by zero"
    )
    with pytest.raises(Exception) as failed:
        program.procedures["fail"]()
    error = failed.value
    assert type(error).__name__ == "KediExecutionError[Boom]"
    assert [c.__name__ for c in type(error).__mro__[1:3]] == ["KediExecutionError", "KediError"]
    assert "Boom" in [c.__name__ for c in type(error).__mro__]
    assert error.code == 7  # the user's exception's own attributes
    clone = pickle.loads(pickle.dumps(divided.value))
    assert type(clone) is type(divided.value)


def test_a_mapped_error_of_a_subclass_is_caught_by_that_subclass(tmp_path):
    from pytest_kedi.runtime import load

    source = (
        "```\nclass BadInput(ValueError):\n    pass\n```\n\n"
        "@check(x: int) -> int:\n  = `(_ for _ in ()).throw(BadInput(x))`\n"
    )
    program = load(tmp_path / "v.kedi", source=source, mode="validate")
    with pytest.raises(KediValueExecutionError) as caught:
        program.procedures["check"](3)
    assert [c.__name__ for c in type(caught.value).__mro__].count("BadInput") == 1


@pytest.mark.parametrize("raised", [SystemExit(3), KediValueExecutionError("own")])
def test_exits_and_kedi_errors_are_not_combined(raised):
    from pytest_kedi.catchable import catchable

    assert catchable(KediExecutionError, type(raised)) is KediExecutionError


def test_bare_assert_ends_the_trace_with_class_and_empty_message(tmp_path):
    """docs/language.md#scoring: the last line is `<ExceptionClass>: <message>`, the message
    empty here (it was the class alone)."""
    from pytest_kedi.runtime import load

    path = tmp_path / "t.kedi"
    path.write_text("@test: t:\n  > case: c:\n    `assert 1 == 2`\n", encoding="utf-8")
    program = load(path, mode="validate")
    suite = program.module.test_suites[0]
    with pytest.raises(KediExecutionError) as info:
        program.run_case(suite, suite.cases[0])
    assert str(info.value).splitlines()[-1] == "AssertionError: "
    assert str(info.value).splitlines()[-2].strip() == "`assert 1 == 2`"


BAD_STR = """
```
class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("str failed")
```

@badstr() -> int:
  `raise BadStr("x")`
  = `1`

[r: object] = `badstr()`
= <r>
"""


def test_an_exception_whose_str_raises_is_still_the_one_reported(run):
    """User code's ``__str__`` raising replaced the error (``RuntimeError: str failed``,
    located in ``__str__``, the procedure's frames lost); Python prints ``<exception str()
    failed>`` for it, and so does Kedi."""
    with pytest.raises(KediExecutionError) as caught:
        run(BAD_STR)
    err = caught.value
    assert type(err.original).__name__ == "BadStr"
    lines = str(err).splitlines()
    assert lines[-1] == "BadStr: <exception str() failed>"
    assert any(line.endswith('prog.kedi", line 8, in badstr') for line in lines), lines
    assert '    `raise BadStr("x")`' in lines


@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
def test_snippets_follow_kedi_lines_past_characters_python_splits_at(kedi, odd: str):
    """`str.splitlines` also breaks at these; the snippet under `line N` was another line."""
    source = f'# page{odd}break\n@f(x):\n  = ```\n  s = "a{odd}b"\n  return 1/0\n  ```\n'
    program = kedi(source, mode="validate")
    with pytest.raises(KediExecutionError) as caught:
        program.procedures["f"]("1")
    lines = str(caught.value).splitlines()
    assert lines[-2:] == ["    return 1/0", "ZeroDivisionError: division by zero"]
    assert lines[1:3] == [lines[1], "    @f(x):"]


@pytest.mark.parametrize("odd", ["\x0c", "\x85", "\u2028"])
def test_case_code_keeps_characters_python_splits_at(kedi, odd: str):
    """A case holding one in a string failed with a spurious SyntaxError under `--test`."""
    program = kedi(
        f'@test: t:\n  > case: c:\n    `s = "a{odd}b"`\n    `assert len(s) == 3`\n',
        mode="validate",
    )
    suite = program.module.test_suites[0]
    program.run_case(suite, suite.cases[0])


def test_a_message_over_several_lines_keeps_them_in_the_stack_trace(kedi):
    """They were folded onto one line (`ValueError: line one line two indented three`):
    Python shows a message as it is, and so does the Kedi stack trace."""
    program = kedi(
        '@newlines() -> int:\n  `raise ValueError("line one\\nline two\\n  indented three")`\n'
        "  = `1`\n",
        mode="validate",
    )
    with pytest.raises(KediExecutionError) as caught:
        program.procedures["newlines"]()
    err = caught.value
    assert str(err).splitlines()[-3:] == ["ValueError: line one", "line two", "  indented three"]
    assert err.final_text == "ValueError: line one\nline two\n  indented three"
    assert err.message == "line one line two indented three"  # one line, for summaries


BAD_REPR = """\
```
class BadRepr:
    def __repr__(self):
        raise RuntimeError("repr failed")
    def __hash__(self):
        return 1
```

@typed() -> str:
  = `BadRepr()`

@lookup() -> str:
  = `{}[BadRepr()]`

= <{which}()>
"""


def test_a_type_error_about_a_value_whose_repr_raises_is_still_a_type_error(run):
    """The strict check's message made ``repr(value)``, whose error replaced the type
    error: a row failed with ``RuntimeError: repr failed`` (class ``metric``) instead of
    a ``KediTypeExecutionError`` (class ``type``)."""
    with pytest.raises(KediTypeExecutionError) as caught:
        run(BAD_REPR.replace("{which}", "typed"))
    message = caught.value.message
    shown = "<unrepresentable BadRepr: RuntimeError> (BadRepr)"
    assert message.endswith(f"return value of typed expects str, got {shown}"), message


def test_a_key_error_about_a_key_whose_repr_raises_is_still_the_key_error(run):
    """The message of a ``KeyError`` escaping Python, and the last line of its rendering,
    were ``repr(key)``, whose error replaced the ``KeyError`` the user's code raised;
    Python shows ``KeyError: <exception str() failed>``, and so does Kedi."""
    with pytest.raises(KediExecutionError) as caught:
        run(BAD_REPR.replace("{which}", "lookup"))
    err = caught.value
    assert type(err.original) is KeyError
    assert err.message == "<exception str() failed>"
    assert str(err).splitlines()[-1] == "KeyError: <exception str() failed>"


RAISING_CHECK = """\
```
class Meta(type):
    def __instancecheck__(cls, value):
        raise RuntimeError("check broke")
class W(metaclass=Meta):
    pass
```

"""


@pytest.mark.parametrize(
    ("body", "frame"),
    [
        # an argument, checked by the interpreter (text body) and by generated code
        ("@g(a: `W`) -> str:\n  = done\n\n= <g(`1`)>\n", "@g(a: `W`) -> str:"),
        ("@g(a: `W`) -> str:\n  = `str(a)`\n\n@h() -> str:\n  = `g(1)`\n\n= <h()>\n", "= `g(1)`"),
        ("@g() -> str:\n  [x: `W`] = `1`\n  = done\n\n= <g()>\n", "[x: `W`] = `1`"),
        ("@g() -> `W`:\n  = `1`\n\n= `str(g())`\n", "= `1`"),
        ("@g() -> str:\n  [x: `int | W`] = `1`\n  [x] := `'a'`\n  = done\n\n= <g()>\n", "@g"),
    ],
    ids=["argument", "argument-generated", "assignment", "return", "rebinding"],
)
def test_an_error_raised_by_user_code_a_type_check_runs_is_located(
    run, body: str, frame: str
) -> None:
    """A metaclass ``__instancecheck__`` (or a validator) that raised while Kedi checked a
    value escaped as the bare Python exception, out of pytest-kedi's internals: the CLI
    said ``pytest-kedi internal error: RuntimeError`` with no location."""
    with pytest.raises(KediExecutionError) as caught:
        run(RAISING_CHECK + body)
    err = caught.value
    assert type(err.original) is RuntimeError
    lines = str(err).splitlines()
    assert lines[-3].endswith('prog.kedi", line 4, in <prelude> (Python)'), lines
    assert lines[-2:] == ['    raise RuntimeError("check broke")', "RuntimeError: check broke"]
    assert any(line.strip().startswith(frame) for line in lines), lines


ARITY = "@f(a: int) -> int:\n  = `a`\n\n~Box(n: int)\n\n"


@pytest.mark.parametrize(
    ("body", "line", "call", "message"),
    [
        ("@g() -> int:\n  = <f(1, 2)>\n\n= <g()>\n", 7, "= <f(1, 2)>", "f() takes 1 positional"),
        ("@g() -> int:\n  = `f(1, 2)`\n\n= <g()>\n", 7, "= `f(1, 2)`", "f() takes 1 positional"),
        ("@g() -> int:\n  ```\n  return f()\n  ```\n\n= <g()>\n", 8, "return f()", "f() missing"),
        ("@g() -> int:\n  = `f(b=1)`\n\n= <g()>\n", 7, "= `f(b=1)`", "f() got an unexpected"),
        ("= `f(1, a=2)`\n", 6, "= `f(1, a=2)`", "f() got multiple values"),
        ("= `Box(1, 2)`\n", 6, "= `Box(1, 2)`", "Box() takes at most 1 positional"),
        ("= `Box(n='x')`\n", 6, "= `Box(n='x')`", "Box.n expects int, got 'x' (str)"),
    ],
    ids=["kedi-call", "python-call", "generated", "keyword", "top-level", "type", "type-field"],
)
def test_a_call_with_wrong_arguments_is_located_at_the_call(
    run, body: str, line: int, call: str, message: str
) -> None:
    """``f(1, 2)`` for ``@f(a: int)`` failed at ``prog.kedi:1``, the header of ``f`` (its
    innermost frame), with a message naming no file and line, as other type errors do."""
    with pytest.raises(KediTypeExecutionError) as caught:
        run(ARITY + body)
    err = caught.value
    assert err.line == line
    assert f"prog.kedi:{line}: {message}" in err.message
    lines = str(err).splitlines()
    assert lines[-2].strip() == call, lines  # the innermost frame: the call, not `f`
    assert lines[-1] == f"KediTypeExecutionError: {err.message}"


@pytest.mark.parametrize(
    ("body", "line", "shown"),
    [
        ("  >> first\n  second\n  third <missing> [a]\n  = <a>\n", 4, "third <missing> [a]"),
        ("  >> one <missing> [a]\n  two\n  = <a>\n", 2, ">> one <missing> [a]"),
        ("  = first \\\n    then <missing>\n", 3, "then <missing>"),
    ],
)
def test_an_error_on_a_later_line_of_a_statement_is_its_innermost_frame(
    tmp_path, body, line, shown
):
    """docs/language.md#diagnostics: the stack trace's innermost frame is the line the
    error names, not the first line of a multi-line template or continued return."""
    from pytest_kedi.runtime import load

    path = tmp_path / "p.kedi"
    path.write_text(f"@f() -> str:\n{body}", encoding="utf-8")
    program = load(path, mode="validate")
    with pytest.raises(KediNameError) as info:
        program.procedures["f"]()
    error = info.value
    assert error.message.endswith(f":{line}: unknown name 'missing'")
    assert error.line == line
    trace = str(error).splitlines()
    assert trace[-3:-1] == [f'  File "{path}", line {line}, in f', f"    {shown}"]


@pytest.mark.parametrize(
    ("directive", "line", "shown"),
    [
        ("  > instructions: be <tone>\n", 2, "> instructions: be <tone>"),
        ("  > instructions:\n    be nice\n    and <tone>\n", 4, "and <tone>"),
    ],
)
def test_an_unknown_name_in_instructions_is_located_at_the_directive(
    tmp_path, directive, line, shown
):
    """The error names the `> instructions:` line; the stack trace's innermost frame is
    that line, inside the model call's frame (it was the model call's line alone)."""
    from pytest_kedi.runtime import load

    path = tmp_path / "i.kedi"
    path.write_text(f"@f() -> str:\n{directive}  [a] << hi\n  = <a>\n", encoding="utf-8")
    program = load(path, mode="validate")
    with pytest.raises(KediNameError) as info:
        program.procedures["f"]()
    error = info.value
    assert error.message.endswith(f":{line}: unknown name 'tone'")
    assert error.line == line
    trace = str(error).splitlines()
    assert trace[-4].strip() == "[a] << hi"
    assert trace[-3:-1] == [f'  File "{path}", line {line}, in f', f"    {shown}"]
