"""pytest's root configuration: the tests live in tests/ (the shared ones, their fixtures and helpers) and in each
lesson's folder (lessons/<id>/test_*.py, beside what they test).

- The project and tests/ are on sys.path, so every test imports build, experiments, sitegen and tests/' helper
  modules (browser_fixtures, build_fixtures ...) the same way, and the shared fixtures are loaded whichever tests
  are collected.
- A lesson's test is imported as a module of the lesson's own package, experiments.lessons.<package>.test_x (its
  folder is that package, experiments/lessons/__init__.py), never as a top-level module: a folder name such as
  c4-transformer-block is no Python name, and the folder's __init__.py is the lesson's declaration, not a test
  package. Its assertions are rewritten as any test's.
- tests/conftest.py marks every test by what it needs (browser, hf); a run that collects lessons/ alone never
  loads it, so its marking is applied from here then.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
for path in (ROOT / "tests", ROOT):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

pytest_plugins = ["browser_fixtures", "build_fixtures", "course_fixtures"]

LESSONS = ROOT / "lessons"
SHARED_CONFTEST = ROOT / "tests" / "conftest.py"


class LessonDir(pytest.Dir):
    """A lesson folder, collected as a plain folder (pytest would take its __init__.py for a test package's)."""


class LessonTestModule(pytest.Module):
    """A lesson's test file, imported as experiments.lessons.<package>.<name>."""

    def _getobj(self):
        from experiments.lessons import package_name
        importlib.invalidate_caches()
        return importlib.import_module(f"experiments.lessons.{package_name(self.path.parent.name)}.{self.path.stem}")


def _lesson_folder(path: Path) -> bool:
    return path.parent == LESSONS and (path / "__init__.py").is_file()


def pytest_collect_directory(path: Path, parent):
    if _lesson_folder(path):
        return LessonDir.from_parent(parent, path=path)
    return None


def pytest_pycollect_makemodule(module_path: Path, parent):
    if _lesson_folder(module_path.parent):
        from experiments import lessons
        lessons.course(ROOT)   # the lesson packages of this checkout (not of a copy a test built before)
        return LessonTestModule.from_parent(parent, path=module_path)
    return None


def pytest_collection_modifyitems(config, items):
    if config.pluginmanager.get_plugin(str(SHARED_CONFTEST)) is None:
        spec = importlib.util.spec_from_file_location("_shared_conftest", SHARED_CONFTEST)
        assert spec is not None and spec.loader is not None
        shared = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(shared)
        shared.pytest_collection_modifyitems(config, items)
