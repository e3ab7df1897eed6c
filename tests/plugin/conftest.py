"""Fixtures for the plugin tests: hermetic pytester runs with the plugin loaded once.

Plugin autoloading is disabled in every inner run and the plugin is loaded with
``-p pytest_kedi.plugin`` instead, so the tests behave the same whether or not the
project is pip-installed (no double registration through the ``kedi`` entry point).

Every test using the ``kedi`` fixture runs twice: single-process and under pytest-xdist
(``-n 2``), because a plugin behaviour must not depend on how pytest distributes the
items. A test whose subject only exists in one process (``--pdb``, recorded hook calls,
monkeypatching the plugin's modules) opts out with ``@pytest.mark.single_process("why")``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pydantic_ai  # noqa: F401
import pytest
from kedi_plugin_helpers import KEDI_ENV, REPO_ROOT, Kedi

# pytester's in-process runs drop every module first imported inside them; pydantic-ai
# then imported again on top of the pydantic that stays loaded breaks (pydantic's
# decorator registry no longer recognises its own classes). Import it once, out here.

#: the ``kedi`` fixture's parameter: pytest-xdist workers (``None``: without xdist)
WORKERS: tuple[int | None, ...] = (None, 2)
#: markers that pin a test to one of them; each takes the reason as its argument
PINNED = {"single_process": None, "xdist_only": 2}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "single_process(reason): run this `kedi` test without pytest-xdist only "
        "(the reason says why it cannot run under xdist)",
    )
    config.addinivalue_line(
        "markers",
        "xdist_only(reason): run this `kedi` test under pytest-xdist only "
        "(the reason says why it means nothing without xdist)",
    )
    _register_bug_marker(config)


def _register_bug_marker(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "xdist_bug(reason): the -n 2 run of this `kedi` test fails on a known plugin bug "
        "(a strict xfail: it must be removed once the bug is fixed)",
    )


def _workers(metafunc: pytest.Metafunc) -> tuple[int | None, ...]:
    pinned = [name for name in PINNED if metafunc.definition.get_closest_marker(name)]
    if not pinned:
        return WORKERS
    (name,) = pinned
    marker = metafunc.definition.get_closest_marker(name)
    assert marker is not None
    if not marker.args or not str(marker.args[0]).strip():
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: {name} needs a reason")
    return (PINNED[name],)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "kedi" not in metafunc.fixturenames:
        return
    known_bug = metafunc.definition.get_closest_marker("xdist_bug")
    params = []
    for workers in _workers(metafunc):
        marks = []
        if workers is not None and known_bug is not None:
            marks.append(pytest.mark.xfail(reason=known_bug.args[0], strict=True))
        name = "single" if workers is None else f"n{workers}"
        params.append(pytest.param(workers, id=name, marks=marks))
    metafunc.parametrize("kedi", params, indirect=True)


@pytest.fixture
def kedi(
    request: pytest.FixtureRequest, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Kedi]:
    workers: int | None = getattr(request, "param", None)
    if workers is not None:
        pytest.importorskip("xdist")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in KEDI_ENV:
        monkeypatch.delenv(name, raising=False)
    python_path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv(
        "PYTHONPATH", str(REPO_ROOT) + (os.pathsep + python_path if python_path else "")
    )
    yield Kedi(pytester, workers)
