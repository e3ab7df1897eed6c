"""Packaging metadata (issue 7 item 18): project URLs, a development-status classifier,
keywords, docs/ in the sdist, and a lowest-direct floor check that CI runs."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_project_metadata_for_the_package_index() -> None:
    project = PROJECT["project"]
    assert project["urls"] and all(u.startswith("https://") for u in project["urls"].values())
    assert [c for c in project["classifiers"] if c.startswith("Development Status :: ")]
    assert {"pytest", "kedi"} <= set(project["keywords"])


def test_sdist_ships_the_docs() -> None:
    include = PROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"docs", "README.md", "CHANGELOG.md", "pytest_kedi", "tests"} <= set(include)
    assert (ROOT / "docs" / "architecture.md").is_file()


def test_ci_checks_the_dependency_floors() -> None:
    floor = (ROOT / ".ci" / "floor").read_text(encoding="utf-8")
    assert "--resolution lowest-direct" in floor
    assert "-m pytest" in floor
    run_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ".ci/floor" in run_lines
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".ci/floor" in readme


def test_declared_floors() -> None:
    """The floors `.ci/floor` verifies (raise them together with a passing floor run)."""
    floors = {
        dep.split(">=")[0]: dep.split(">=")[1].split(",")[0]
        for dep in PROJECT["project"]["dependencies"]
    }
    # 2.58: ModelSettings gained `max_retries`/`request_timeout` (the documented examples);
    # 2.59: ModelConnectionError and ModelQuotaExceededError (what --kedi-retries tells apart)
    assert floors["pydantic-ai-slim"] == "2.59"
    # 2.13: pydantic 2.12 cannot serialize pydantic-ai's `RequestUsage` (a cassette key over a
    # conversation that holds a model response, e.g. a validation retry, warns and fails)
    assert floors["pydantic"] == "2.13"
    # 9.2: older 9.x turn a bad ini value into an internal error (exit 3), not a usage error
    assert floors["pytest"] == "9.2"
    # 1.1.3: older lark imports the deprecated `sre_parse` (fails under `-W error`)
    assert floors["lark"] == "1.1.3"
    # 1.6: pytest 9.2 itself requires pluggy>=1.6, so `.ci/floor` installs 1.6.0; a floor of
    # 1.5 was never installed, let alone tested
    assert floors["pluggy"] == "1.6"


def _module_map() -> set[str]:
    """The modules `docs/architecture.md`'s module map names (``folder/module.py``)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    named: set[str] = set()
    folder = ""
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[1].startswith("`"):
            continue
        if cells[0]:
            folder = cells[0].strip("`").removeprefix("pytest_kedi/")
        for name in cells[1].split(","):
            name = name.strip().strip("`")
            if name.endswith(".py"):
                named.add(folder + name)
    return named


def test_the_architecture_module_map_names_every_module() -> None:
    package = ROOT / "pytest_kedi"
    modules = {path.relative_to(package).as_posix() for path in package.rglob("*.py")}
    assert modules - _module_map() == set()


def test_the_language_reference_ships_too() -> None:
    assert (ROOT / "docs" / "language.md").is_file()


def test_the_checkout_holds_no_file_with_a_blank_name() -> None:
    """A report written by hand to `-o "  "` was committed as a file named two spaces at the
    top of the repository, where a newcomer's `ls` shows a blank entry."""
    folders = ("pytest_kedi", "tests", "docs", "examples", "benchmarks", ".ci")
    paths = [*ROOT.iterdir(), *(p for folder in folders for p in (ROOT / folder).rglob("*"))]
    assert [str(path.relative_to(ROOT)) for path in paths if not path.name.strip()] == []
