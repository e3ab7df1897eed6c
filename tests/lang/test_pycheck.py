"""Syntax errors in embedded Python are located Kedi diagnostics (``check_python``,
used by ``python -m pytest_kedi parse`` and collection)."""

from __future__ import annotations

import ast
import textwrap
import warnings
from pathlib import Path

import pytest

from pytest_kedi.lang import KediParseError, check_python, parse, parse_file
from pytest_kedi.lang.pycheck import Parsed, parse_snippet

CASES = {
    # name: (source, line, column of the caret)
    "assignment": ("[y: int] = `  1 +* 2`\n", 1, 18),
    "procedure_return": ("@f(x: int) -> int:\n  = `(x + 1`\n", 2, 6),
    "fence_line": ("@g() -> int:\n  = ```\n  a = 1\n  if a\n     pass\n  ```\n", 4, 7),
    "case_statement": ("@test: t:\n  > case: c:\n    `assert 1 ==`\n", 3, 17),
    "dataset": (
        "@eval: e:\n  > data: d:\n    = `[1, 2`\n  > metric: m(d):\n    = `1.0`\n",
        3,
        8,
    ),
    "backtick_type": ("@h() -> `list[`:\n  = `[]`\n", 1, 14),
    "prelude": ("```\ndef f(:\n    pass\n```\n[x] = a\n", 2, 7),
    "substitution": ("@k(v: str) -> str:\n  = value <`v +`>\n", 2, 16),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_syntax_error_is_a_located_diagnostic(tmp_path: Path, name: str) -> None:
    source, line, column = CASES[name]
    path = tmp_path / "b.kedi"
    path.write_text(source, encoding="utf-8")
    parse(source, str(path))  # the fast parse leaves embedded Python unchecked
    with pytest.raises(KediParseError) as info:
        check_python(parse_file(path))
    diagnostic = info.value.diagnostics[0]
    assert (diagnostic.path, diagnostic.line, diagnostic.column) == (str(path), line, column)
    assert diagnostic.message.startswith("Python syntax error: ")
    assert diagnostic.source_line == source.splitlines()[line - 1]
    rendered = info.value.render()
    assert f'File "{path}", line {line}, column {column}' in rendered
    assert "<kedi" not in rendered


def test_every_syntax_error_is_reported_in_source_order() -> None:
    source = textwrap.dedent(
        """\
        [a] = `1 +`
        [b] = `2`
        [c] = `(`
        """
    )
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    assert [d.line for d in info.value.diagnostics] == [1, 3]


def test_a_line_s_first_syntax_error_is_its_only_one() -> None:
    """A long line of broken snippets gave one diagnostic per snippet, each quoting the
    whole line: 40 kB of ``:`` and backticks took 25 s and made 600 MB of error text."""
    broken = "[a] = " + ":`" * 2000
    source = f"{broken}\n[b] = `2`\n[c] = `1 +` and `(`\n"
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    assert [(d.line, d.column) for d in info.value.diagnostics] == [(1, 9), (3, 11)]
    assert len(str(info.value)) < 3 * len(source)


@pytest.mark.parametrize("statement", ["= <f(`1 +`)>", "[x] = <f(`1 +`)>"])
def test_a_call_argument_s_error_is_reported_once(statement: str) -> None:
    """A call that is a whole right-hand side is both the binding's text and its call:
    its argument's syntax error was reported twice, the same diagnostic one after the
    other."""
    with pytest.raises(KediParseError) as info:
        check_python(parse(f"@f(a) -> int:\n  = `1`\n{statement}\n", "m.kedi"))
    assert [(d.line, d.column) for d in info.value.diagnostics] == [(3, statement.index("`)") + 1)]


def test_a_call_argument_s_warning_is_given_once() -> None:
    """The invalid escape sequence of a call argument that is a whole right-hand side was
    warned about twice (pytest's summary and the CLI's stderr listed it twice)."""
    module = parse('@f(a) -> str:\n  = `a`\n= <f(`"\\d"`)>\n', "w.kedi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_python(module, {})
    assert [(w.lineno, str(w.message)) for w in caught] == [(3, "invalid escape sequence '\\d'")]


def test_valid_python_passes() -> None:
    module = parse("[a: int] = `1`\n@f() -> int:\n  = ```\n  return a\n  ```\n", "ok.kedi")
    assert check_python(module) is module


def test_a_message_naming_a_line_names_the_kedi_line() -> None:
    source = "@f(x: int) -> int:\n  = ```\n  y = (x,\n       2]\n  return y\n  ```\n"
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (4, 9)
    assert diagnostic.message.endswith("opening parenthesis '(' on line 3")


@pytest.mark.parametrize(
    ("source", "line", "column", "caret"),
    [
        ("@g() -> int:\n\t= ```\n\ta = 1\n\tif a\n\t\tpass\n\t```\n", 4, 6, "\t    ^"),
        # a line indented with spaces in a tab-indented fence loses four characters
        ("@g() -> int:\n\t= ```\n    a = 1\n    b = a +* 1\n\t```\n", 4, 12, " " * 11 + "^"),
        ("@g() -> int:\n\t= ```\n    a = 1\n\tb = a +* 1\n\t```\n", 4, 9, "\t       ^"),
        # a tab across a two-space fence's indentation: two of its columns stay
        ("@g() -> int:\n  = ```\n  if 1:\n\tb = 1 +* 1\n  ```\n", 4, 9, "\t       ^"),
    ],
)
def test_a_syntax_error_in_a_tab_indented_fence_is_at_its_character_column(
    source: str, line: int, column: int, caret: str
) -> None:
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (line, column)
    rendered = info.value.render().splitlines()
    at = rendered.index(f'  File "m.kedi", line {line}, column {column}')
    assert rendered[at + 1 : at + 3] == ["  " + source.split("\n")[line - 1], "  " + caret]


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        ("@f() -> int:\n  = ```\n  x = 1\r  y = +* 2\n  return x\n  ```\n", 3, 8),
        ("@f() -> int:\n  = ```\n  x = 1\r  y = 1\n  return x\n  ```\n", 3, 8),
        ("[a] = `(1,\r 2)`\n", 1, 11),
        ('[a] = `"""x\ry"""`\n', 1, 12),
        ("@f() -> int:\n  `x = 1\r`\n  = `x`\n", 2, 9),
    ],
)
def test_a_lone_carriage_return_in_python_is_located_where_it_is(
    source: str, line: int, column: int
) -> None:
    # Python ends a line at a lone CR, Kedi does not: its lines would not be the file's
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (line, column)
    assert diagnostic.message == (
        "Python syntax error: a carriage return (U+000D) not followed by a line feed is not "
        "allowed in Python code: Python would end the line there (write '\\r' in a string)"
    )


WARNING_SOURCE = """\
@f(text: str) -> int:
  = `len(text) + len("\\d")`

@g() -> str:
  = ```
  pattern = "a"
  return pattern + "\\s"
  ```

@h(x: `Annotated[str, "\\p"]`) -> str:
  [y] = `"\\q" + x`
  = `y`
"""
WARNED = [(2, "d"), (7, "s"), (10, "p"), (11, "q")]


def test_python_warnings_name_the_kedi_file_and_line() -> None:
    """Python's parser warns of an invalid escape sequence where it is written: at its
    `.kedi` file and line, once per snippet (not ``<unknown>`` line 1)."""
    module = parse(WARNING_SOURCE, "w.kedi")
    trees: dict[int, Parsed] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert check_python(module, trees) is module
    found = sorted((w.filename, w.lineno, str(w.message)[-3:]) for w in caught)
    assert found == [("w.kedi", line, f"\\{letter}'") for line, letter in WARNED]
    # The trees kept for compiling are at the `.kedi` lines too.
    first_lines = sorted(
        min(node.lineno for node in ast.walk(tree) if "lineno" in node._attributes) + delta
        for tree, delta in trees.values()
    )
    assert first_lines == [2, 6, 10, 11, 12]


@pytest.mark.parametrize("line", [1, 64, 65, 300])
def test_a_snippet_far_down_the_file_warns_and_fails_at_its_kedi_line(line: int) -> None:
    """Far down a file only text Python may warn of is parsed at its `.kedi` lines (the
    rest is parsed alone, its tree's lines then moved): either way warnings and syntax
    errors name the `.kedi` lines."""
    plain, delta = parse_snippet("x + 1", True, line, "f.kedi")
    assert delta == (line - 1 if line > 64 else 0)
    assert isinstance(plain, ast.Expression)
    assert plain.body.lineno + delta == line
    for source in ('"\\d" + x', "1if x else 2"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tree, delta = parse_snippet(source, True, line, "f.kedi")
        assert isinstance(tree, ast.Expression)
        assert delta == 0 and tree.body.lineno == line
        assert [(w.filename, w.lineno) for w in caught] == [("f.kedi", line)]
    with pytest.raises(SyntaxError) as info:
        parse_snippet("y = (x,\n     2]", False, line, "f.kedi")
    assert info.value.lineno == 2  # in the text, as `locate_syntax_error` reads it
    assert info.value.msg.endswith(f"on line {line}")


def _literals_and_numbers() -> list[str]:
    """Expressions with every escape in every kind of literal, and numbers against words."""
    import string

    chars = [c for c in string.printable if c not in "\x0b\x0c"] + ["é", "\n"]
    found = []
    for prefix in ("", "b", "r", "f", "rb", "u"):
        for quote in ('"', '"""'):
            for char in chars:
                for body in (f"\\{char}", f"a\\\\{char}", f"\\\\\\{char}", f"x\\{char}77"):
                    found.append(f"{prefix}{quote}{body}{quote}")
    for number in ("1", "0x1f", "0o7", "0b1", "1.5", "1e5", "1_0", "3j", "1.", ".5"):
        for word in ("if", "else", "for", "in", "is", "not", "or", "and", "e", "j", "x", ""):
            for sep in ("", " "):
                found.append(f"({number}{sep}{word} 1 else 2)" if word == "if" else "")
                found.append(
                    f"[{number}{sep}{word} x]" if word == "for" else f"({number}{sep}{word} 1)"
                )
    return [text for text in found if text] + ['"\\n".join(x)', "x \\\n + 1", "h2o + v2beta"]


def test_may_warn_is_true_wherever_the_parser_warns() -> None:
    # `may_warn` decides whether a snippet is parsed at its `.kedi` line (so a warning names
    # the right line) and whether its text may be parsed again (a generated body inlines
    # an expression only when Python would not warn a second time): it must never miss.
    from pytest_kedi.lang.pycheck import may_warn

    warned = missed = 0
    for text in _literals_and_numbers():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                ast.parse(text, "<snippet>", "eval")
            except SyntaxError:
                continue
        if caught:
            warned += 1
            missed += not may_warn(text)
    assert warned > 1000 and missed == 0
    # Common text that Python parses silently is not flagged (a pair of backslashes, then d).
    for text in (
        '"\\n".join(lines)',
        "f'{x}\\t{y}'",
        "h2o + v2beta",
        "1e5 + 3j + 0x1f",
        "'a\\\\d'",
    ):
        assert not may_warn(text), text


def _gives_up(text: str) -> bool:
    """Whether Python's parser gives up on ``text`` without a position (Python 3.11 raises
    an empty `MemoryError` past its parser's stack)."""
    try:
        ast.parse(text)
    except (MemoryError, RecursionError):
        return True
    except SyntaxError:
        return False
    return False


@pytest.mark.parametrize("indent", ["", "  "])
def test_python_too_deep_for_its_parser_is_located_at_the_line(indent: str) -> None:
    """Python gives no position when its parser gives up: the line that makes it give up is
    found (it was reported at the fence's first line as a bare 'MemoryError')."""
    deep = "z = " + "-" * 7_000 + "1"
    body = ["x = 1", "y = 2", deep]
    lines = ["@f() -> str:", "  ```"] if indent else ["[a] = x", "```"]
    lines += [indent + line for line in body] + [indent + "```"]
    lines += ["  = done"] if indent else []
    with pytest.raises(KediParseError) as info:
        check_python(parse("\n".join(lines) + "\n", "t.kedi"))
    diag = info.value.diagnostics[0]
    assert (diag.line, diag.column) == (5, len(indent) + 1)
    assert diag.source_line == indent + deep
    if _gives_up(deep):
        assert diag.message == (
            "Python syntax error: this line is too deeply nested or too large for Python's "
            "parser (MemoryError)"
        )
    rendered = info.value.diagnostics[0].render().splitlines()
    assert rendered[2] == " " * (2 + len(indent)) + "^"


def test_a_one_line_snippet_too_deep_for_python_says_what_happened() -> None:
    text = "-" * 7_000 + "1"
    with pytest.raises(KediParseError) as info:
        check_python(parse(f"[a] = x\n[b] = `{text}`\n", "t.kedi"))
    diag = info.value.diagnostics[0]
    assert (diag.line, diag.column) == (2, 8)
    if _gives_up(text):
        assert "this code is too deeply nested or too large for Python's parser" in diag.message


# Errors Python gives only when it compiles the code (not when it parses it), and the
# `yield` that compiling a block as a function's body would make legal (the block would
# be a generator that never runs): (source, line, column, Python's message).
COMPILE_ERRORS = {
    "case_yield": (
        '@test: t:\n  > case: c:\n    `assert False, "should fail"`\n    `yield`\n',
        4,
        6,
        "'yield' outside function",
    ),
    "case_fence_yield": (
        "@test: t:\n  > case: c:\n    ```\n    assert False\n    yield\n    ```\n",
        5,
        5,
        "'yield' outside function",
    ),
    "assignment_fence_yield_from": (
        "[x] = ```\nyield from range(3)\n```\n",
        2,
        1,
        "'yield' outside function",
    ),
    "procedure_fence_yield": (
        "@f() -> int:\n  = ```\n  x = 1\n  if x:\n    y = (yield x)\n  return x\n  ```\n",
        5,
        10,
        "'yield' outside function",
    ),
    "yield_in_a_nested_default": (
        "@f() -> int:\n  ```\n  def g(a=(yield)):\n    return a\n  ```\n  = `1`\n",
        3,
        12,
        "'yield' outside function",
    ),
    "break_outside_loop": ("@f() -> int:\n  = ```\n  break\n  ```\n", 3, 3, "'break' outside loop"),
    "continue_line": (
        "@f() -> int:\n  `continue`\n  = `1`\n",
        2,
        4,
        "'continue' not properly in loop",
    ),
    "await_expression": ("[a] = `await g()`\n", 1, 8, "'await' outside function"),
    "await_block": (
        "[a] = x\n```\nawait g()\n```\n",
        3,
        1,
        "'await' outside async function",
    ),
    "import_star_fence": (
        "[a] = x\n```\nfrom os import *\n```\n",
        3,
        16,
        "import * only allowed at module level",
    ),
    "future_import_late": (
        "```\nx = 1\nfrom __future__ import annotations\n```\n[a] = x\n",
        3,
        1,
        "from __future__ imports must occur at the beginning of the file",
    ),
    "prelude_return": ("```\nreturn 1\n```\n[a] = x\n", 2, 1, "'return' outside function"),
    "prelude_yield": ("```\nx = 1\nyield x\n```\n[a] = x\n", 3, 1, "'yield' outside function"),
    "nonlocal_unbound": (
        "@f() -> int:\n  = ```\n  nonlocal n\n  return 1\n  ```\n",
        3,
        3,
        "no binding for nonlocal 'n' found",
    ),
    "duplicate_argument": (
        "@f() -> int:\n  ```\n  def g(a, a):\n    pass\n  ```\n  = `1`\n",
        3,
        12,
        "duplicate argument 'a' in function definition",
    ),
    "duplicate_lambda_argument": (
        "[h] = `lambda a, a: a`\n",
        1,
        18,
        "duplicate argument 'a' in function definition",
    ),
    "starred_assignment": (
        "@f() -> int:\n  = ```\n  a, *b, *c = range(3)\n  return a\n  ```\n",
        3,
        3,
        "multiple starred expressions in assignment",
    ),
    "comprehension_walrus": (
        "[a] = `[i := 0 for i in range(3)]`\n",
        1,
        9,
        "assignment expression cannot rebind comprehension iteration variable 'i'",
    ),
    "keyword_repeated_non_ascii": ("[a] = `f(é=1, é=2)`\n", 1, 15, "keyword argument repeated: é"),
    "backtick_type": ("@h() -> `list[(yield)]`:\n  = `[]`\n", 1, 16, "'yield' outside function"),
    "tab_indented_fence": (
        "@g() -> int:\n\t= ```\n\tx = 1\n\tbreak\n\t```\n",
        4,
        2,
        "'break' outside loop",
    ),
}


@pytest.mark.parametrize("name", sorted(COMPILE_ERRORS))
def test_an_error_python_gives_when_compiling_is_a_located_diagnostic(name: str) -> None:
    source, line, column, message = COMPILE_ERRORS[name]
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.line, diagnostic.column, diagnostic.message) == (
        line,
        column,
        f"Python syntax error: {message}",
    )
    assert diagnostic.source_line == source.splitlines()[line - 1]
    assert "__kedi_block__" not in info.value.render()


@pytest.mark.parametrize("line", [3, 70, 200])
def test_a_compile_error_far_down_the_file_is_at_its_kedi_line(line: int) -> None:
    """A snippet far down the file is parsed alone (its tree's lines start at 1)."""
    filler = "".join(f"[v{k}] = `{k}`\n" for k in range(line - 3))
    source = filler + "@f() -> int:\n  = ```\n  x = [*range(3)]\n  continue\n  ```\n"
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (line + 1, 3)
    expr = filler + '[s] = `f"{a}" + str(\n  lambda b, b: 0)`\n'
    with pytest.raises(KediParseError) as info:
        check_python(parse(expr, "m.kedi"))
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (line - 1, 13)


VALID_PYTHON = """\
```
from __future__ import annotations
def gen():
    yield 1
```
@f(n: int) -> int:
  ```
  def g(a=1):
      yield a
  class C:
      items = [x for x in range(2)]
  total = 0
  for i in range(n):
      if i:
          continue
      total += sum(g())
  ```
  = `total + len([y := 1, y]) + (lambda a, b=2: a)(1) + f(**{"x": 1}, x=2) * 0`
[h] = `[*range(2), *{}.keys()][0:1]`
@test: t:
  > case: c:
    `x = 1`
    ```
    for k in range(2):
        break
    ```
    `return`
"""


def test_valid_python_compiles_without_warning() -> None:
    """The code is compiled to check it, but compiling it warns only when it runs (a
    ``SyntaxWarning`` given here would be given again by the runtime)."""
    module = parse(VALID_PYTHON + "@w() -> bool:\n  = ```\n  return w is 1\n  ```\n", "ok.kedi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_python(module) is module


@pytest.mark.parametrize(
    "text",
    [
        "a.b[c:d:e] + -f(g, *h, k=1, **m) or {1: 2, **n} and f'{p!r:{q}}' if r else (s, [t])",
        "f(a=1, a=2)",
        "f(__debug__=1)",
        "(x := 1)",
        "[x for x in y]",
        "lambda a: a",
        "*a, b",
        "(yield)",
        "await x",
    ],
)
def test_an_expression_not_compiled_to_check_it_compiles(text: str) -> None:
    """`pycompile._compiles` spares the compile of the most common expressions: it must
    answer True only for an expression that compiles."""
    from pytest_kedi.lang.pycompile import _compiles

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return
    if _compiles(tree):
        compile(tree, "t", "eval")


@pytest.mark.parametrize(
    ("body", "line", "column"),
    [
        ("    `x = 1`\n    `global x`\n", 4, 6),
        (
            "    ```\n    x = 1\n\n    ```\n    `y = 2`\n    ```\n    z = 3;  global x\n    ```\n",
            9,
            13,
        ),
    ],
)
def test_a_case_s_lines_are_checked_together_as_they_run(body: str, line: int, column: int) -> None:
    """A case body runs as one Python unit: a ``global`` after a line binding the name is
    Python's error, though each line compiles alone."""
    source = "@test: t:\n  > case: c:\n" + body
    with pytest.raises(KediParseError) as info:
        check_python(parse(source, "m.kedi"))
    (diagnostic,) = info.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (line, column)
    assert diagnostic.message == (
        "Python syntax error: name 'x' is assigned to before global declaration"
    )
    fine = "@test: t:\n  > case: c:\n    `global x`\n    `x = 1`\n"
    assert check_python(parse(fine, "m.kedi")) is not None
