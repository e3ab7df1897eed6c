"""A ``> case:`` body as one Python unit (docs/language.md#test-cases), and a file's
embedded Python compiled ahead of its run into a `CodeStore`.

`precompile_module` is what pytest collection calls on a file it has just parsed, as
pytest compiles (and assertion-rewrites) a ``.py`` test module when it collects it: the
run that follows finds every unit in the store instead of compiling it.
"""

from __future__ import annotations

from pytest_kedi.lang import nodes
from pytest_kedi.lang.pycheck import snippets
from pytest_kedi.runtime.pyinterop import CodeStore, Transform, precompile
from pytest_kedi.runtime.sourcefile import SourceFile

__all__ = ["case_code", "precompile_module"]


def case_code(case: nodes.Case) -> nodes.PyCode:
    """Join a case body into one Python block whose line k is `.kedi` line ``first + k - 1``
    (fence delimiters and blank lines become empty Python lines)."""
    first = case.body[0].code
    if len(case.body) == 1 and first.kind == "block":
        return first
    lines: list[str] = []
    for item in case.body:
        lines.extend("" for _ in range(item.code.line - first.line - len(lines)))
        lines.extend(item.code.source.splitlines() or [""])
    last = case.body[-1].span
    span = nodes.Span(
        first.span.path,
        first.span.start_line,
        first.span.start_col,
        last.end_line,
        last.end_col,
        first.span.start_offset,
        last.end_offset,
    )
    return nodes.PyCode(span, "\n".join(lines), "block", first.line, 1)


def precompile_module(
    module: nodes.Module, path: str, store: CodeStore, case_transform: Transform
) -> None:
    """Compile into ``store`` what running ``module`` (read from ``path``) compiles: each
    case's body with ``case_transform``, and every other backtick expression and Python
    block outside the prelude (which runs when the file loads). Code that does not
    compile is left to the run, which reports it."""
    source_file = SourceFile(path, module.source)
    for node in module.body:
        if isinstance(node, nodes.TestSuite):
            for case in node.cases:
                if case.body:
                    precompile(case_code(case), source_file, store, transform=case_transform)
        else:
            for snippet in snippets(node):
                if isinstance(snippet, nodes.PyCode):
                    precompile(snippet, source_file, store)
