"""The project's own pytest configuration makes warnings errors (issue 7 item 15), so the
README's test command and CI fail on a leaked event loop or socket, while another package's
deprecation inside its own code stays a visible warning (no order-dependent failures)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILTERS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"][
    "filterwarnings"
]

TESTS = """\
import socket
import warnings


def test_leaks_a_socket():
    sock = socket.socket()
    del sock  # never closed: ResourceWarning from its finalizer


def test_our_code_calls_a_deprecated_api():
    warnings.warn_explicit("old API", DeprecationWarning, "adapter.py", 3, "pytest_kedi.runtime")


def test_another_package_deprecates_its_internals():
    warnings.warn_explicit("old internals", DeprecationWarning, "core.py", 7, "somelib.core")


def test_clean():
    pass
"""


def test_the_suite_configuration_turns_our_warnings_into_errors(pytester: pytest.Pytester) -> None:
    filters = ", ".join(f'"{f}"' for f in FILTERS)
    pytester.makefile(".toml", pyproject=f"[tool.pytest]\nfilterwarnings = [{filters}]\n")
    pytester.makepyfile(test_warnings=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "-rA")
    output = result.stdout.str()
    result.assert_outcomes(passed=2, failed=2)
    assert "FAILED test_warnings.py::test_leaks_a_socket" in output
    assert "FAILED test_warnings.py::test_our_code_calls_a_deprecated_api" in output
    assert "PASSED test_warnings.py::test_another_package_deprecates_its_internals" in output
    assert "old internals" in output  # shown in the warnings summary
