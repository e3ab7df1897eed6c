"""Python <-> Kedi interop (docs/language.md#python, docs/language.md#python-interop) and Python
error mapping (§7, §10.2)."""

from __future__ import annotations

import pytest

from pytest_kedi.lang import KediParseError
from pytest_kedi.runtime.errors import KediExecutionError, KediNameError


def test_kedi_values_are_python_globals(run):
    src = """
    [name] = ada
    = `(name, globals()["name"], "name" in locals())`
    """
    assert run(src) == ("ada", "ada", False)


def test_kedi_values_are_not_in_dir_either(kedi, monkeypatch):
    """``dir()`` lists the local scope: it listed a procedure's parameters and locals (read
    as locals by a one-expression return, or by a one-fence body's generated function)."""
    from pytest_kedi.runtime import procedures

    monkeypatch.setattr(procedures, "BUILD_AFTER", 1)  # the generated body too
    src = """
    [top] = t
    @expr(x: int) -> list:
      [y] = why
      = `dir()`
    @fence(x: int) -> list:
      = ```
      return dir()
      ```
    @line(x: int) -> list:
      [y] = why
      = `[n for n in dir() if not n.startswith(".")] + sorted(locals())`
    """
    program = kedi(src, mode="validate")
    for name in ("expr", "fence", "line"):
        for _ in range(3):
            assert program.procedures[name](1) == [], name
    assert kedi("[v] = x\n= `dir()`\n").run() == []


def test_rebinding_existing_name_syncs_back(run):
    src = """
    [n: int] = `1`
    `n += 1`
    [value] = "  Ready "
    ```
    value = value.strip()
    ```
    = `(n, value)`
    """
    assert run(src) == (2, '"  Ready "'.strip())


@pytest.mark.parametrize(
    ("case", "value"),
    [
        ("case n:", 5),
        ("case int() as n:", 5),
        ("case [*n]:", [5]),
        ("case {**n}:", {}),
    ],
)
def test_a_match_capture_rebinding_a_kedi_name_syncs_back(run, case, value):
    """A `match` statement's capture patterns rebind a name as `=` does; the Kedi value
    kept its old value (the block took the name for a new one of its own)."""
    subject = {"case n:": "5", "case int() as n:": "5", "case [*n]:": "[5]"}.get(case, "{}")
    src = f"""
    [n: object] = `"old"`
    ```
    match {subject}:
        {case}
            pass
    ```
    = `n`
    """
    assert run(src) == value


@pytest.mark.parametrize("fast", [False, True])
def test_a_match_capture_cannot_rebind_a_parameter(run, monkeypatch, fast):
    """It went unnoticed: the block's own `p` took the value and the parameter kept its
    own, without the read-only error (also in a body that is one fence, generated)."""
    from pytest_kedi.runtime import procedures

    monkeypatch.setattr(procedures, "BUILD_AFTER", 1 if fast else 10**6)
    src = """
    @f(p: int) -> str:
      = ```
      match 5:
          case p:
              pass
      return repr(p)
      ```
    = <f(`1`)>
    """
    with pytest.raises(KediExecutionError, match="parameter 'p' is read-only") as info:
        run(src)
    assert "line 4, in f\n    case p:" in info.value.render()


def test_new_python_names_vanish(run):
    src = """
    `fresh = 1`
    = `"fresh" in globals()`
    """
    assert run(src) is False


@pytest.mark.parametrize("mode", ["run", "validate"])
def test_rebinding_through_globals_or_exec_writes_back(kedi, mode):
    """`globals()["n"] = 5` (or `exec("global n; n = 7")`) in a block rebinds the module
    global `n`, as in a `.py` module; the Kedi binding kept its old value. New names made
    so still vanish, and a parameter stays read-only."""
    src = """
    [n: int] = `1`
    [m: int] = `1`
    @rebind() -> tuple:
      [local: int] = `0`
      ```
      globals()["n"] = 5
      globals()["local"] = 6
      globals()["fresh"] = 1
      exec("global m; m = 7")
      ```
      = `(local, "fresh" in globals())`
    @param(x: int) -> int:
      = ```
      globals()["x"] = 2
      return x
      ```
    @test: t:
      > case: c:
        ```
        assert rebind() == (6, False) and (n, m) == (5, 7), (n, m)
        globals()["n"] = 8
        ```
      > case: d:
        `assert n == 8 and globals().__setitem__("m", 9) is None and m == 9`
    [r: tuple] = `rebind()`
    [z] = `globals().__setitem__("m", 10) or "z"`
    = `(r, n, m)`
    """
    program = kedi(src, mode=mode)
    if mode == "run":
        assert program.run() == ((6, False), 5, 10)
    else:
        suite = program.module.test_suites[0]
        for case in suite.cases:
            program.run_case(suite, case)
        assert (program.get("n"), program.get("m")) == (8, 9)
    with pytest.raises(KediExecutionError, match="parameter 'x' is read-only"):
        program.procedures["param"](1)


def test_write_back_reaches_owning_frame(run):
    src = """
    [count: int] = `0`
    @bump() -> int:
      `count += 1`
      = `count`
    [a: int] = <bump()>
    [b: int] = <bump()>
    = `(a, b, count)`
    """
    assert run(src) == (1, 2, 2)


def test_an_assignment_expression_in_an_expression_writes_back(run):
    """docs/language.md#python-interop: rebinding an existing Kedi name from Python writes
    it back, in an expression too. A `:=` in an expression bound a throwaway local: a loop
    whose condition advanced its counter with `:=` ran into the iteration limit."""
    src = """
    [i: int] = `0`
    [seen: list] = `[]`
    > loop: `(i := i + 1) <= 3`:
      `seen.append(i)`
    [n: int] = `1`
    [s: int] = `(n := 7) + 1`
    [fresh: int] = `(brand_new := 5)`
    = `(i, seen, n, s, "brand_new" in globals())`
    """
    assert run(src) == (4, [1, 2, 3], 7, 8, False)


def test_an_assignment_expression_in_a_comprehension_writes_back(run):
    """A `:=` inside a comprehension binds in the scope around the comprehension (PEP 572):
    in a fence, the Kedi name. It was not seen as an assignment of the block, so it bound a
    throwaway local; in an expression, and from a procedure, as well."""
    src = """
    [n: int] = `0`
    [m: int] = `0`
    [k: int] = `0`
    ```
    _ = [n := i for i in range(3)]
    ```
    [total: int] = `sum([m := j for j in range(5)])`
    @last(xs: list) -> int:
      ```
      _ = [k := x for x in xs]
      ```
      = `k`
    [got: int] = `last([7, 8, 9])`
    = `(n, m, total, k, got)`
    """
    assert run(src) == (2, 4, 10, 9, 9)


def test_an_assignment_expression_cannot_rebind_a_parameter(run):
    src = """
    @f(x: int) -> bool:
      = `(x := x + 1) > 0`
    = <f(`1`)>
    """
    with pytest.raises(KediExecutionError, match="parameter 'x' is read-only"):
        run(src)


def test_nested_function_needs_global(run):
    src = """
    [n: int] = `1`
    ```
    def without():
        n = 5
    def with_global():
        global n
        n = 9
    without()
    with_global()
    ```
    = `n`
    """
    assert run(src) == 9


def test_nonlocal_of_kedi_name_fails_at_its_line(run):
    src = """
    [n: int] = `1`
    ```
    def f():
        nonlocal n
        n = 2
    ```
    """
    with pytest.raises(KediParseError) as parse_info:  # Python's compiler refuses it
        run(src)
    assert parse_info.value.diagnostics[0].line == 4
    with pytest.raises(KediExecutionError) as info:  # unchecked at load: found at run time
        run(src, python_checked=True)
    assert isinstance(info.value.original, SyntaxError)
    assert info.value.line == 4
    assert str(info.value).splitlines()[-1].startswith("SyntaxError: ")


def test_prelude_globals_persist(run):
    src = """
    ```
    import math
    counter = [0]
    def tick():
        counter[0] += 1
        return counter[0]
    ```
    `tick()`
    [a: int] = `tick()`
    = `(a, math.floor(2.5))`
    """
    assert run(src) == (2, 2)


def test_top_level_return_in_fence(run):
    src = """
    = ```
    x = 2
    return x * 3
    ```
    """
    assert run(src) == 6


def test_standalone_fence_return_value_is_ignored(run):
    src = """
    [a] = first
    ```
    return 5
    ```
    = after
    """
    assert run(src) == "after"


def test_unknown_python_name_is_kedi_name_error(run):
    with pytest.raises(KediNameError) as info:
        run("= `missing_name`\n")
    assert isinstance(info.value.original, NameError)


def test_zero_division_in_fence_inside_procedure_maps_to_exact_line(run, tmp_path):
    src = """
    @ratio(n: int) -> float:
      = ```
      a = n
      b = 0
      return a / b
      ```
    = <ratio(`1`)>
    """
    with pytest.raises(KediExecutionError) as info:
        run(src)
    err = info.value
    assert isinstance(err.original, ZeroDivisionError)
    assert err.kind_name == "ZeroDivisionError"
    assert err.python_traces[-1].kedi_line == 5
    # the Python line and the failing expression's column (`a / b` in "  return a / b")
    assert (err.python_traces[-1].python_line, err.python_traces[-1].python_column) == (3, 10)
    text = str(err)
    assert text.startswith("Kedi stack trace:")
    assert "line 5" in text and "return a / b" in text
    assert text.splitlines()[-1] == "ZeroDivisionError: division by zero"
    assert "pytest_kedi" not in text and "<kedi " not in text
    assert [f.kind for f in err.frames][:3] == ["return", "procedure", "return"]
    assert err.frames[1].procedure_name == "ratio"


def test_a_tab_indented_fence_is_located_at_character_columns(kedi):
    # a tab is one character of the line (four columns of indentation only)
    src = "@ratio(n: int) -> float:\n\t= ```\n\ta = n\n    b = 0\n\treturn a / b\n\t```\n"
    with pytest.raises(KediExecutionError) as info:
        kedi(src + "= <ratio(`1`)>\n").run()
    trace = info.value.python_traces[-1]
    assert (trace.kedi_line, trace.python_column) == (5, 9)
    with pytest.raises(KediExecutionError) as info:  # unchecked at load: found at run time
        kedi(src.replace("b = 0", "b = +* 0") + "= <ratio(`1`)>\n", python_checked=True).run()
    trace, error = info.value.python_traces[-1], info.value.original
    assert (trace.kedi_line, trace.python_column) == (4, 10)
    assert isinstance(error, SyntaxError) and (error.lineno, error.offset) == (4, 10)


def test_a_tab_across_a_fences_indentation_keeps_the_line_in_its_block(kedi):
    """A fence indented two spaces lost a line's whole leading tab (four columns): the line
    left its ``for`` loop and ran once, a wrong result where the loop ran it three times."""
    src = (
        "@f(d: int) -> int:\n  = ```\n  total = 0\n  for i in range(3):\n    total += 1\n"
        "\ttotal += 10\n  return total\n  ```\n\n@g(d: int) -> int:\n  = ```\n"
        "  if d < 1:\n\tx = 1 / d\n  return 1\n  ```\n"
    )
    program = kedi(src, mode="validate")
    assert program.procedures["f"](0) == 33
    with pytest.raises(KediExecutionError) as info:
        program.procedures["g"](0)
    trace = info.value.python_traces[-1]
    assert (trace.kedi_line, trace.python_column) == (13, 6)  # `1 / d` on "\tx = 1 / d"


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        ('[a] = `"ééé" + (1/0)`\n', 1, 17),  # at run time: the `1` of `1/0`
        ('[a] = `"ééé" + (yield)`\n', 1, 17),  # compiling: the `yield`
        ('@f() -> int:\n  = ```\n  x = "日本"; nonlocal q\n  ```\n= <f()>\n', 3, 13),
    ],
)
def test_a_python_error_after_non_ascii_text_is_at_its_character_column(run, source, line, column):
    # Python counts UTF-8 bytes (`é` is two); a column counts characters
    if "1/0" not in source:  # Python's compiler refuses it: at load, and at run time
        with pytest.raises(KediParseError) as parse_info:
            run(source)
        diagnostic = parse_info.value.diagnostics[0]
        assert (diagnostic.line, diagnostic.column) == (line, column)
    with pytest.raises(KediExecutionError) as info:
        run(source, python_checked=True)
    trace = info.value.python_traces[-1]
    assert (trace.kedi_line, trace.python_column) == (line, column)
    if isinstance(info.value.original, SyntaxError):
        assert info.value.original.offset == column


def test_a_lone_carriage_return_in_python_fails_at_its_kedi_line(kedi):
    # Python would end a line at it (and turn it into "\n" in a string): refused, located
    for source, line, column in [
        ("@f() -> int:\n  = ```\n  x = 1\r  y = 1 / 0\n  return x\n  ```\n= <f()>\n", 3, 8),
        ('[a] = `"""x\ry"""`\n= `a`\n', 1, 12),
    ]:
        with pytest.raises(KediExecutionError) as info:  # unchecked at load: found at run
            kedi(source, python_checked=True).run()
        trace, error = info.value.python_traces[-1], info.value.original
        assert (trace.kedi_line, trace.python_column) == (line, column)
        assert isinstance(error, SyntaxError) and error.msg.startswith("a carriage return")
        with pytest.raises(KediParseError) as parsed:  # checked at load (the default)
            kedi(source)
        assert (parsed.value.line, parsed.value.diagnostics[0].column) == (line, column)


def test_control_characters_in_a_stack_trace_are_escaped(run):
    src = (
        "```\ndef boom():\n    return '\x1b[2J' + (1 / 0)\n"
        "def boom2():\n    try:\n        boom()\n    except Exception as e:\n"
        "        raise ValueError('x') from e\n```\n[a] = `'\x07' and boom2()`\n"
    )
    with pytest.raises(KediExecutionError) as info:
        run(src)
    lines = str(info.value).splitlines()
    assert not any(c in line for line in lines for c in "\x1b\x07")
    assert "    [a] = `'\\x07' and boom2()`" in lines  # the Kedi frame's line
    # Python's carets under the cause's line stay under `1 / 0` once its ESC is escaped
    at = lines.index("    return '\\x1b[2J' + (1 / 0)")
    assert lines[at + 1].index("^") == lines[at].index("/")


def test_error_in_prelude_function_shows_both_lines(run):
    src = """
    ```
    def boom():
        raise ValueError("bad")
    ```
    `boom()`
    """
    with pytest.raises(KediExecutionError) as info:
        run(src)
    lines = [t.kedi_line for t in info.value.python_traces]
    assert lines == [5, 3]
    assert isinstance(info.value, ValueError)


def test_syntax_error_in_inline_expression_is_mapped(run):
    with pytest.raises(KediExecutionError) as info:  # unchecked at load: found at run time
        run("[a] = x\n= `1 +`\n", python_checked=True)
    assert isinstance(info.value.original, SyntaxError)
    assert info.value.line == 2


def test_cause_chain_is_preserved(run):
    with pytest.raises(KediExecutionError) as info:
        run("= `{}['k']`\n")
    assert isinstance(info.value.__cause__, KeyError)
    assert isinstance(info.value, KeyError)
    assert str(info.value).splitlines()[-1] == "KeyError: 'k'"


def test_failing_str_of_a_value_is_a_kedi_error(run):
    src = """
    ```
    class Bad:
        def __str__(self):
            raise RuntimeError("no str")
    ```
    [b: object] = `Bad()`
    = value: <b>
    """
    with pytest.raises(KediExecutionError) as info:
        run(src)
    assert isinstance(info.value.original, RuntimeError)
    assert info.value.python_traces[-1].kedi_line == 4


def test_failing_iterable_in_loop_is_a_kedi_error(run):
    src = """
    ```
    def items():
        yield 1
        raise LookupError("gone")
    ```
    [n: int] = `0`
    > loop [x]: `items()`:
      [n] := `n + x`
    """
    with pytest.raises(KediExecutionError) as info:
        run(src)
    assert isinstance(info.value.original, LookupError)


def test_a_blocks_new_names_are_function_locals(run):
    # Fenced Python runs like the same code in a Python function: names it creates are
    # fast locals (not module globals), while rebinding a Kedi name still writes back.
    src = """
    [n: int] = `1`
    @loop(count: int) -> tuple:
      = ```
      import sys
      total = 0
      for i in range(count):
          total += i
      return (total, sorted(sys._getframe().f_code.co_varnames))
      ```
    ```
    import sys
    n = n + 1
    created = 5
    local_names = sorted(sys._getframe().f_code.co_varnames)
    ```
    = `(loop(4), n, "created" in globals())`
    """
    (total, names), n, leaked = run(src)
    assert total == 6
    assert {"total", "i", "sys"} <= set(names)
    assert n == 2
    assert leaked is False


def test_a_block_rebinds_a_name_that_becomes_visible_later(run):
    # The same block runs once before and once after `seen` is a Kedi binding of its
    # scope: the first run keeps `seen` local, the second writes it back.
    src = """
    @bump(flag: bool) -> int:
      [out: int] = `0`
      > if: `flag`
        [seen: int] = `10`
      ```
      seen = 1
      out = seen
      ```
      = `out`
    = `(bump(False), bump(True))`
    """
    assert run(src) == (1, 1)


def test_load_checks_all_embedded_python_up_front(kedi):
    """docs/language.md#line-kinds: a Python syntax error is a Kedi parse error located at the
    `.kedi` line and column. `load` only found one when the code first ran, so a procedure
    never called loaded fine, and a run gave a `SyntaxError` without a column."""
    with pytest.raises(KediParseError) as info:
        kedi("@f():\n  ```\n  x = (\n  ```\n  = ok\n= fine\n", mode="validate")
    diagnostic = info.value.diagnostics[0]
    assert (diagnostic.line, diagnostic.column) == (3, 7)
    assert diagnostic.message == "Python syntax error: '(' was never closed"


@pytest.mark.parametrize(
    ("body", "column", "message"),
    [
        ("  break", 3, "'break' outside loop"),
        ("  x = 1\n  yield x", 3, "'yield' outside function"),
        ("  from os import *", 18, "import * only allowed at module level"),
    ],
)
def test_load_reports_errors_python_gives_only_when_compiling(kedi, body, column, message):
    """README: a Python syntax error anywhere, even in a procedure never called, is a
    located `KediParseError`. Errors Python gives only when it compiles the code loaded
    fine and failed when the code ran (never, in a procedure never called); a block that
    yields even ran as a generator that never runs (its value a generator object)."""
    source = f"@f() -> int:\n  ```\n{body}\n  ```\n  = `1`\n= fine\n"
    with pytest.raises(KediParseError) as info:
        kedi(source, mode="validate")
    (diagnostic,) = info.value.diagnostics
    line = 2 + body.count("\n") + 1
    assert (diagnostic.line, diagnostic.column) == (line, column)
    assert diagnostic.message == f"Python syntax error: {message}"
    with pytest.raises(KediParseError):
        kedi("[x] = ```\nyield 1\nreturn 2\n```\n= `x`\n", name="gen.kedi")


def test_an_imported_file_s_embedded_python_is_checked_when_it_is_imported(kedi, tmp_path):
    """An imported file was never checked (pytest's collection checks the files it
    collects): its syntax error surfaced only when its code ran, without a column."""
    (tmp_path / "lib").mkdir()
    bad = "@g() -> str:\n  = done\n\n@h() -> int:\n  = `1 +`\n"
    (tmp_path / "lib" / "bad.kedi").write_text(bad, encoding="utf-8")
    program = kedi("> import: lib/bad\n= <g()>\n", name="main.kedi")
    with pytest.raises(KediParseError) as info:
        program.run()
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.path.endswith("bad.kedi")
    assert (diagnostic.line, diagnostic.column) == (5, 9)


def test_python_warns_once_about_code_that_load_checked(kedi):
    """`load` parses the file's Python to check it, and the run compiles it: Python's
    parser warnings (an invalid escape) would be given twice."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = kedi('@f(x: str) -> bool:\n  = `x == "\\d"`\n\n= <f(a)>\n')
        assert program.run() is False
    escapes = [w for w in caught if "invalid escape" in str(w.message)]
    assert len(escapes) == 1, [(str(w.message), w.filename, w.lineno) for w in caught]
    assert escapes[0].filename.endswith("prog.kedi") and escapes[0].lineno == 2


def test_an_annotated_assignment_to_a_name_the_block_shares_with_kedi(run, capsys):
    """A block is written as a module's top level, where `x: int = 5` binds the global `x`;
    compiled as a function that declares `x` global (a Kedi binding it writes back, or a
    block reading its namespace by name), the annotation made Python refuse it:
    "annotated name 'x' can't be global"."""
    src = """
    [x: int] = `0`
    ```
    x: int = 5
    if True:
        y: int
        x: int = x + 1
    ```
    ```
    z: int = 3
    w = globals().get("z")
    print(z, w)
    ```
    = `x`
    """
    assert run(src) == 6
    assert capsys.readouterr().out == "3 3\n"


@pytest.mark.parametrize(
    "body",
    [
        "```\ndel n\n```\n",
        "@top() -> int:\n  ```\n  del n\n  ```\n  = `1`\n[r: int] = `top()`\n",
        "@local() -> int:\n  [k: int] = `2`\n  `del globals()['k']`\n  = `k`\n"
        "[r: int] = `local()`\n",
    ],
    ids=["top-level", "module-binding", "local-binding"],
)
def test_deleting_a_kedi_binding_from_python_is_an_error(run, body):
    """`del n` (or `del globals()["n"]`) of a Kedi binding in a block was silently ignored:
    `n` kept its value. A Kedi binding lives as long as its frame."""
    with pytest.raises(KediExecutionError, match=r"Kedi binding '[nk]' cannot be deleted"):
        run("[n: int] = `1`\n" + body + "= `n`\n")


def test_deleting_a_name_the_block_made_or_a_prelude_global_is_pythons_business(run):
    src = """
    ```
    helper = 1
    ```
    @own() -> int:
      ```
      tmp = 1
      del tmp
      global helper
      del helper
      ```
      = `3`
    = `own()`
    """
    assert run(src) == 3


def test_a_case_deleting_a_kedi_binding_fails(kedi):
    """As in a block, once the lazy binding was read (validation mode; a case deleting a
    binding nothing read yet leaves it unforced, as before)."""
    src = (
        "[n: int] = `1`\n@test: t:\n  > case: c:\n    `assert n == 1`\n  > case: d:\n    `del n`\n"
    )
    program = kedi(src, mode="validate")
    suite = program.module.test_suites[0]
    program.run_case(suite, suite.cases[0])
    with pytest.raises(KediExecutionError, match="Kedi binding 'n' cannot be deleted"):
        program.run_case(suite, suite.cases[1])
