"""Process-wide caches are explicit objects with an owner and a reset."""

from __future__ import annotations

import linecache

from pytest_kedi.runtime import caches
from pytest_kedi.runtime.pyerrors import PYTHON_UNITS
from pytest_kedi.runtime.scope import EPOCHS
from pytest_kedi.runtime.types import CHECKERS, check


def test_every_registered_cache_names_its_owner() -> None:
    names = {state.name for state in caches.registered()}
    assert {"python units", "binding epochs", "type checkers"} <= names
    for state in caches.registered():
        assert state.owner.startswith("pytest_kedi.")


def test_reset_all_forgets_the_linecache_entries_of_kedi_sources(kedi) -> None:
    program = kedi(
        """
        @f() -> int:
          = `1 + 1`
        """,
        mode="validate",
    )
    assert program.procedures["f"]() == 2
    shown = [name for name in linecache.cache if name.endswith("prog.kedi")]
    assert shown, "the program's source is visible to Python tracebacks while cached"
    assert PYTHON_UNITS.codes
    caches.reset_all()
    assert not [name for name in linecache.cache if name.endswith("prog.kedi")]
    assert not PYTHON_UNITS.codes


def test_reset_all_empties_the_type_checkers() -> None:
    assert check(3, int)
    assert int in CHECKERS
    caches.reset_all()
    assert int not in CHECKERS
    assert check(3, int)


def test_resetting_the_epochs_invalidates_rather_than_rewinds() -> None:
    before = (EPOCHS.module, EPOCHS.prelude)
    caches.reset_all()
    assert EPOCHS.module > before[0]
    assert EPOCHS.prelude > before[1]


def test_the_synthetic_notice_is_printed_once_until_reset(capsys) -> None:
    from pytest_kedi.runtime.model import boundary

    shown = boundary.NOTICE_ONCE.shown
    try:
        boundary.NOTICE_ONCE.reset()
        boundary._print_synthetic_notice()
        boundary._print_synthetic_notice()
        assert capsys.readouterr().err.count("synthetic output") == 1
        caches.reset_all()
        boundary._print_synthetic_notice()
        assert capsys.readouterr().err.count("synthetic output") == 1
    finally:
        boundary.NOTICE_ONCE.shown = shown
