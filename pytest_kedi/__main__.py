"""``python -m pytest_kedi``: see `pytest_kedi.cli`."""

from __future__ import annotations

from pytest_kedi.cli import PROG, main

if __name__ == "__main__":
    raise SystemExit(main(prog=PROG))
