"""A case's block is relocated and analysed before pytest's assertion rewriting enlarges
it: it compiles to what the earlier order (rewrite, relocate, analyse the rewritten
tree) compiled, every instruction on the block's own lines."""

from __future__ import annotations

import ast
import types

import pytest

from pytest_kedi.errors import KediExecutionError
from pytest_kedi.lang import nodes
from pytest_kedi.lang.pycheck import Parsed, parse_snippet
from pytest_kedi.plugin.items import rewrite_case_asserts
from pytest_kedi.runtime import pyinterop
from pytest_kedi.runtime.casecode import MemoryCodeStore
from pytest_kedi.runtime.pyanalysis import nested_globals, top_level_targets
from pytest_kedi.runtime.sourcefile import SourceFile

BLOCKS = [
    "assert double(21) == 42",
    'text = label(3)\nassert text == "item 3"\n',
    "x = 1\nfor i in range(3):\n    assert i < 3, f'{i} big'\n    y = i\nassert x and not y",
    "def helper(a):\n    global counter\n    assert a\n    return a\nassert helper(1) == 1",
    "import os.path as p\nwith open(p.devnull) as f:\n    assert f.read() == ''\n",
    "try:\n    assert [n := 2] == [2]\nexcept AssertionError as e:\n    raise\n",
    "value = 3\nassert 'value' in locals() and eval('value') == 3",
    "class C:\n    z = 1\nassert C.z == 1 if C else 0\nassert {k: v for k, v in {}.items()} == {}",
    "pass",
]


def _code(source: str) -> tuple[nodes.PyCode, SourceFile]:
    body = "".join(f"      {line}\n" for line in source.splitlines())
    kedi = f"@test: t:\n  > case: c:\n    ```\n{body}    ```\n"
    code = nodes.PyCode(nodes.Span("c.kedi", 4, 7, 4, 7, 0, 0), source, "block", 4, 7)
    return code, SourceFile("c.kedi", kedi)


def _earlier_order(
    code: nodes.PyCode, file: SourceFile
) -> tuple[types.CodeType, frozenset[str], frozenset[str], frozenset[str]]:
    """(code, top-level targets, write-back candidates, shared names) as the block was
    compiled before: rewritten, relocated, then the rewritten tree analysed."""
    tree, delta = parse_snippet(code.source, False, code.line, file.path)
    assert isinstance(tree, ast.Module)
    rewrite_case_asserts(tree, file.path)
    pyinterop.relocate(tree, code, file, 0, delta)
    top = top_level_targets(tree.body)
    nested, introspects = nested_globals(tree.body)
    shared = frozenset(top) if introspects else frozenset(top & nested)
    compiled = pyinterop._block_code(tree, shared, file.path, code.line)
    return compiled, frozenset(top), frozenset(top | nested), shared


def _positions(code: types.CodeType) -> list[tuple[int | None, int | None]]:
    """The (first, last) `.kedi` line of every instruction, nested code objects included."""
    found = [(first, last) for first, last, _, _ in code.co_positions()]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_positions(const))
    return found


@pytest.mark.parametrize("source", BLOCKS)
def test_a_case_compiles_as_in_the_earlier_order(source: str) -> None:
    code, file = _code(source)
    before = _earlier_order(code, file)
    unit = pyinterop.compile_unit(code, file, None, mode="block", transform=rewrite_case_asserts)
    introspects = nested_globals(ast.parse(source).body)[1]
    if introspects:  # every name is shared, the rewriter's among them
        assert (unit.top_assigned, unit.candidates, unit.shared) == before[1:]
    else:  # the rewriter's names (never a Kedi binding) are not looked up
        rewriter = {name for name in before[2] if name.startswith("@")}
        assert rewriter or "assert" not in source
        assert unit.top_assigned == before[1] - rewriter
        assert unit.candidates == before[2] - rewriter
        assert unit.shared == before[3]
    assert unit.code.co_varnames == before[0].co_varnames
    assert unit.code.co_names == before[0].co_names
    # Every instruction lies on the block's own lines. (The earlier order moved a node
    # that the rewriter uses in two places twice, so some instructions of a failed
    # assertion's explanation pointed past the block.)
    last = code.line + len(source.splitlines()) - 1
    for first, end in _positions(unit.code):
        assert first is None or code.line <= first <= last
        assert end is None or code.line <= end <= last


def _unit_code(value: tuple[object, ...]) -> tuple[object, ...]:
    """What a stored unit's code does and where: its instructions and their positions."""
    code = value[0]
    assert isinstance(code, types.CodeType)
    nested = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return (code.co_code, list(code.co_positions()), value[1:], [_unit_code((c,)) for c in nested])


@pytest.mark.parametrize("blank_lines", [0, 200])
def test_precompiling_the_checked_trees_compiles_what_parsing_again_compiles(
    blank_lines: int,
) -> None:
    """Collection compiles the trees its syntax check parsed (a case from its items'),
    some parsed at their `.kedi` lines, some alone (far down a file): the code is the
    code compiled from the text."""
    from pytest_kedi.lang import check_python, parse
    from pytest_kedi.runtime.casecode import precompile_module

    text = "\n" * blank_lines + (
        "```\nimport re\n```\n\n"
        "@f(x: str) -> int:\n  = `len(re.findall('[0-9]', x)) + 1`\n\n"
        "@g(x: str) -> int:\n  = ```\n  y = len(x)\n  return y * 2\n  ```\n\n"
        "@test: t:\n  > case: c:\n    `v = f('a1') + len('\\\\d')`\n"
        "    ```\n    w = g('ab')\n    assert v == 3 and w == 4\n    ```\n"
        "    `assert re and v`\n"
    )
    if blank_lines:  # a prelude is the file's first content
        text = text.replace("```\nimport re\n```\n", "")
    module = parse(text, "c.kedi")
    trees: dict[int, Parsed] = {}
    check_python(module, trees)
    shared, fresh = MemoryCodeStore(), MemoryCodeStore()
    precompile_module(module, "c.kedi", shared, rewrite_case_asserts, trees)
    precompile_module(module, "c.kedi", fresh, rewrite_case_asserts)
    assert not trees  # every tree was compiled
    assert shared.units.keys() == fresh.units.keys()
    assert len(shared.units) == (3 if blank_lines else 4)  # f, g, the case (the prelude)
    for key, value in fresh.units.items():
        assert _unit_code(shared.units[key]) == _unit_code(value), key


def test_a_block_that_yields_never_runs_as_a_generator() -> None:
    """A block compiles as a function's body: a ``yield`` at its level made it a generator,
    so a case body that yields passed without running (`check_python` refuses it first;
    the runtime never runs one it is given)."""
    source = 'assert False, "should fail"\nyield'
    code, file = _code(source)
    with pytest.raises(KediExecutionError) as info:
        pyinterop.compile_unit(code, file, None, mode="block", transform=rewrite_case_asserts)
    assert isinstance(info.value.original, SyntaxError)
    assert info.value.original.msg == "'yield' outside function"
    (trace,) = info.value.python_traces
    assert (trace.kedi_line, trace.python_column) == (5, 7)
    assert "__kedi_block__" not in str(info.value)
    store = MemoryCodeStore()
    pyinterop.precompile(code, file, store, transform=rewrite_case_asserts)
    assert not store.units  # left to the run, which reports it
