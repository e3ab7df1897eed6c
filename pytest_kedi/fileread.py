"""`read_bytes`: a whole file's bytes at the cost of its system calls.

Collection reads every ``.kedi`` file, and its parse cache entry, once per run: read
through `os.open`/`os.read` they cost about half of what `open(...).read()` (a buffered
file object made and closed for each) or `Path.read_bytes` costs.
"""

from __future__ import annotations

import os

__all__ = ["is_file", "read_bytes"]

_CHUNK = 1 << 16


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file. A name the system refuses (too long, say: a sibling
    ``prog.kedi.optimized.json`` of a long ``prog.kedi``) is none, where `Path.is_file`
    raises."""
    return os.path.isfile(path)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The content of the file ``path``; raise `OSError` as `open` does."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        first = os.read(descriptor, _CHUNK)
        more = os.read(descriptor, _CHUNK) if first else b""
        if not more:
            return first
        chunks = [first, more]
        while chunk := os.read(descriptor, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)
