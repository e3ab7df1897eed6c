"""The public error vocabulary: one `KediError` base, every name exported and listed."""

from __future__ import annotations

import subprocess
import sys
from types import FunctionType

import pytest

import pytest_kedi
from pytest_kedi import KediError

ERROR_NAMES = [
    "BudgetExhausted",
    "CassetteMiss",
    "InvalidOptimizedPrompts",
    "InvalidScoreError",
    "KediExecutionError",
    "KediImportError",
    "KediKeyExecutionError",
    "KediModelError",
    "KediNameError",
    "KediParseError",
    "KediSuiteError",
    "KediTypeExecutionError",
    "KediUnsupportedError",
    "KediUsageError",
    "KediValueExecutionError",
    "LoopIterationLimitError",
    "ModelError",
    "ModelUnavailable",
    "UnsupportedFeature",
]


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_every_public_error_is_a_kedi_error_listed_in_all(name: str) -> None:
    assert name in pytest_kedi.__all__
    assert issubclass(getattr(pytest_kedi, name), KediError)


def test_every_name_in_all_is_served() -> None:
    for name in pytest_kedi.__all__:
        assert getattr(pytest_kedi, name) is not None


def test_every_served_name_is_in_all() -> None:
    lazy = set(pytest_kedi._RUNTIME_EXPORTS)
    eager = {
        name
        for name, value in vars(pytest_kedi).items()
        if not name.startswith("_")
        and isinstance(value, type | FunctionType)
        and value.__module__.startswith("pytest_kedi.")
    }
    assert lazy | eager <= set(pytest_kedi.__all__)


def test_the_runtime_error_modules_keep_serving_the_same_classes() -> None:
    from pytest_kedi.runtime import errors as runtime_errors
    from pytest_kedi.runtime.model import errors as model_errors

    assert runtime_errors.KediExecutionError is pytest_kedi.KediExecutionError
    assert model_errors.ModelError is pytest_kedi.ModelError


def test_a_parse_error_is_caught_as_kedi_error() -> None:
    with pytest.raises(KediError) as info:
        pytest_kedi.parse("x = \n@@@", "bad.kedi")
    assert isinstance(info.value, pytest_kedi.KediParseError)


def _printed_by(code: str) -> str:
    """What ``code`` prints, run by a fresh interpreter (nothing imported before it)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def _loaded_after(imports: str, *heavy: str) -> str:
    """Which of the ``heavy`` modules a fresh interpreter has loaded after ``imports``."""
    return _printed_by(f"import sys\n{imports}\nprint([m for m in {heavy!r} if m in sys.modules])")


def test_importing_the_errors_does_not_import_the_runtime() -> None:
    code = (
        "import sys, pytest_kedi\n"
        "from pytest_kedi import KediError, ModelError\n"
        "print(any(m.startswith(('pytest_kedi.runtime', 'pydantic_ai')) for m in sys.modules))"
    )
    assert _printed_by(code) == "False"


def _every_module() -> list[str]:
    import importlib
    import pkgutil

    names = [info.name for info in pkgutil.walk_packages(pytest_kedi.__path__, "pytest_kedi.")]
    for name in names:
        importlib.import_module(name)
    return names


def _subclasses(base: type) -> set[type]:
    found: set[type] = set()
    for cls in base.__subclasses__():
        found |= {cls, *_subclasses(cls)}
    return found


#: raised and caught inside the CLI only (its exit status is the usage error's); raised
#: inside the model boundary only (a program sees its base `ModelError` in a `KediModelError`);
#: raised by a name lookup and replaced by the KeyError it carries where its unit ends
INTERNAL_ERRORS = {"CassetteUnreadable", "CliUsageError", "LookupFailure", "OutputSchemaError"}


def test_every_kedi_error_class_is_served_and_listed() -> None:
    _every_module()
    classes = _subclasses(KediError)
    # `errors.catchable` classes (a Kedi error that is also the user's exception class)
    made = {cls for cls in classes if "_kedi_class" in cls.__dict__}
    names = {cls.__name__ for cls in classes - made} - INTERNAL_ERRORS
    assert names == set(ERROR_NAMES)
    assert names <= set(pytest_kedi.__all__)
    for name in names:
        assert getattr(pytest_kedi, name).__name__ == name


def test_kedi_errors_are_recognised_by_class_not_by_module_lookup() -> None:
    """Only `runtime.usererrors` reads ``sys.modules`` (for pytest's outcome exceptions, so
    that the runtime and the eval engine need no pytest import), and `runtime.pymodule`
    (registering the module of a file's Python); no code looks Kedi errors up there."""
    from pathlib import Path

    root = Path(pytest_kedi.__file__).parent
    readers = sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if "sys.modules" in path.read_text(encoding="utf-8")
    )
    assert readers == ["runtime/pymodule.py", "runtime/usererrors.py"]


def test_loading_the_pytest_plugin_imports_neither_the_parser_nor_pydantic() -> None:
    heavy = ("pytest_kedi.lang.parser", "lark", "pydantic", "pydantic_ai")
    assert _loaded_after("import pytest_kedi.plugin", *heavy) == "[]"


def test_loading_the_pytest_plugin_imports_no_ast_classes_and_no_eval_engine() -> None:
    # Every pytest process of a project with pytest-kedi installed loads the plugin, .kedi
    # files or not: it imports what registers options and hooks, not the AST's node
    # classes, the suite runner or its results (half the plugin's start-up before).
    heavy = (
        "pytest_kedi.lang.nodes",
        "pytest_kedi.lang.pycheck",
        "pytest_kedi.evals.runner",
        "pytest_kedi.evals.results",
        "pytest_kedi.evals.stats",
        "pytest_kedi.runtime.rowscope",
        "pytest_kedi.plugin.reporting",
        "pytest_kedi.plugin.baseline",
        "pytest_kedi.plugin.records",
    )
    assert _loaded_after("import pytest, pytest_kedi.plugin", *heavy) == "[]"
