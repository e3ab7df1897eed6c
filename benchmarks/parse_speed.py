"""Parse throughput: pytest-kedi's parser vs tree-sitter-kedi, in the same run.

Usage: python benchmarks/parse_speed.py [--lines N] [--repeat R] [--quick]

Parses every corpus snippet (../shared/corpus/kedi, relative to the repository root)
and a synthetic N-line program assembled from corpus snippets, with both parsers,
and prints lines/second for each and their ratio. Our parser runs cold (fresh
process state, first parse) and warm (its per-line caches filled, as in repeated
collection of many similar files); the whole-module cache is bypassed throughout.
Times are the best of --repeat runs in process CPU time, so a busy machine skews
neither side. Exits non-zero when the corpus is missing or a measurement fails (most corpus
snippets do not parse, or the synthetic program does not).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_kedi.lang import KediParseError, parse  # noqa: E402
from pytest_kedi.lang import nodes as n  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "kedi"


def corpus_sources() -> list[str]:
    manifest = json.loads((CORPUS / "MANIFEST.json").read_text(encoding="utf-8"))
    return [(CORPUS / e["file"]).read_text(encoding="utf-8") for e in manifest]


def composable(source: str) -> bool:
    """A snippet that parses alone, has no prelude and no top-level return/branch
    (so concatenating snippets never creates dead code)."""
    try:
        module = parse(source)
    except KediParseError:
        return False
    return module.prelude is None and not any(_blocks_joining(s) for s in module.body)


def _blocks_joining(stmt: n.Stmt) -> bool:
    """Top-level statements that conflict when snippets are concatenated."""
    if isinstance(stmt, n.Return | n.If):
        return True  # later snippets would be dead code
    return isinstance(stmt, n.Directive) and stmt.name in ("agent", "package")


def synthetic_program(sources: list[str], lines: int) -> str:
    pieces = [s for s in sources if composable(s)]
    out: list[str] = []
    total = 0
    i = 0
    while total < lines:
        piece = pieces[i % len(pieces)]
        i += 1
        out.append(piece)
        total += piece.count("\n") + 1
    return "\n".join(out)


def timed(func: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        func()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2,000 lines, one run (smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.lines, args.repeat = 2_000, 1
    if not (CORPUS / "MANIFEST.json").is_file():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    try:
        import tree_sitter
        import tree_sitter_kedi
    except ImportError:
        print("tree-sitter-kedi is not installed (pip install -e '.[dev]')", file=sys.stderr)
        return 2
    ts = tree_sitter.Parser(tree_sitter.Language(tree_sitter_kedi.language()))

    sources = corpus_sources()

    def ours_corpus() -> int:
        parsed = 0
        for source in sources:
            try:
                parse(source)
            except KediParseError:
                continue
            parsed += 1
        return parsed

    encoded = [s.encode("utf-8") for s in sources]

    def ts_corpus() -> None:
        for data in encoded:
            ts.parse(data)

    corpus_lines = sum(s.count("\n") for s in sources)
    start = time.process_time()
    parsed = ours_corpus()
    cold = time.process_time() - start
    if parsed * 2 < len(sources):
        print(f"only {parsed} of {len(sources)} corpus files parse: not measured", file=sys.stderr)
        return 1
    warm = timed(ours_corpus, args.repeat)
    ts_time = timed(ts_corpus, args.repeat)
    program = synthetic_program(sources, args.lines)
    program_lines = program.count("\n") + 1
    parse(program)  # must parse: a failure here would under-count the work
    big = timed(lambda: parse(program), args.repeat)
    big_data = program.encode("utf-8")
    ts_big = timed(lambda: ts.parse(big_data), args.repeat)

    def row(label: str, lines: int, ours: float, theirs: float) -> None:
        a, b = lines / ours, lines / theirs
        print(
            f"{label:<28} {lines:>8} lines  pytest-kedi {a:>11,.0f} lines/s   "
            f"tree-sitter {b:>11,.0f} lines/s   ratio 1/{b / a:.1f}"
        )

    row("corpus (cold, first parse)", corpus_lines, cold, ts_time)
    row("corpus (warm)", corpus_lines, warm, ts_time)
    row(f"synthetic {program_lines:,}-line", program_lines, big, ts_big)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
