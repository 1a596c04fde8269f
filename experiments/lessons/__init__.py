"""Every lesson's own Python, found in its folder; and the widgets any lesson may use (common.py).

A lesson is one folder, lessons/<id>/ (docs/adding-a-lesson.md). Its Python (``__init__.py`` declaring
``LESSON = Lesson(...)``, experiments.widget, with numbers.py, calc.py, widgets.py ...) is the package
``experiments.lessons.<id with - replaced by _>``, so ``from ...widget import Lesson`` and ``from .calc import x``
work in it as in any subpackage:

- the build gives the course's root: ``course(root)`` imports each folder root/lessons/<id>/ that holds an
  ``__init__.py`` under that name (a package already imported from another root, or whose files changed since, is
  imported again: a test can build a modified copy of the course and then the course itself, in one process);
- the browser's bundle ships each lesson's Python at experiments/lessons/<package>/ (sitegen/runtime.py), where
  Python's own import finds it: ``course()`` without a root lists those packages; in a checkout, where no lesson
  package lies there, it means the checkout's own lessons/.

Nothing is listed by hand and nothing is fixed when this module is imported: each call looks at the folders it is
given (the Course it returns is remembered only while those folders' files are unchanged).

    course(root=None)            -> Course: .lessons (module-name order), .widgets(), .entry_points(),
                                    .register_numbers(reg, models, course, data), .folder(package), .failed
    all_lessons(), widgets(), entry_points(), register_numbers(...)   the same on course()
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import pkgutil
import sys
from collections.abc import Mapping
from pathlib import Path

from ..widget import Lesson, Widget, resolve

CHECKOUT_LESSONS = Path(__file__).resolve().parent.parent.parent / "lessons"   # a checkout's own lesson folders
LESSON_FILE = "lesson.md"          # a lesson's Markdown, in its folder
SCRIPT_FILE = "script.js"          # its one script
TEMPLATES_DIR = "templates"        # its widget templates


def package_name(lesson_id: str) -> str:
    """The lesson folder lessons/<id>/ -> its package's last name (c4-transformer-block -> c4_transformer_block)."""
    return lesson_id.replace("-", "_")


@dataclasses.dataclass(frozen=True)
class Course:
    """The lessons found in one place: their declarations (each Lesson's package set), and each package's folder
    (lessons/<id>/; none for the widgets in common.py and for packages shipped inside experiments/lessons/)."""
    lessons: tuple[Lesson, ...]
    folders: Mapping[str, Path] = dataclasses.field(default_factory=dict)   # package -> lessons/<id>/
    failed: Mapping[Path, BaseException] = dataclasses.field(default_factory=dict)   # folder -> its import error
    drafts: frozenset[str] = frozenset()   # packages whose folder has no lesson.md yet: still being written

    def folder(self, package: str) -> Path | None:
        return self.folders.get(package)

    def widgets(self) -> dict[str, Widget]:
        out: dict[str, Widget] = {}
        for lesson in self.lessons:
            for w in lesson.widgets:
                if w.name in out:
                    raise ValueError(f"widget {w.name!r} declared twice ({out[w.name].package}, {w.package})")
                out[w.name] = w
        return out

    def entry_points(self) -> dict[str, tuple[Widget, str]]:
        out: dict[str, tuple[Widget, str]] = {}
        for w in self.widgets().values():
            for name, ref in w.calls.items():
                if name in out and out[name][1] != ref:
                    raise ValueError(f"browser entry point {name!r} declared twice ({out[name][0].name}, {w.name})")
                out[name] = (w, ref)
        return out

    def register_numbers(self, reg, models, course=None, data=None) -> None:
        """Every lesson's register(reg, models, course=...); one that also takes `data` gets the data/*.json
        documents by name (lesson C5 reads its precomputed training runs from data/train_runs.json), or None when
        the caller has none (then such a lesson registers nothing). A lesson still being written (no lesson.md
        yet) whose numbers do not resolve or register yet is left out (what it registered before failing stays,
        unused: no page cites it)."""
        for lesson in self.lessons:
            if lesson.numbers:
                try:
                    fn = resolve(lesson.numbers, lesson.package)
                    extra = {"data": data} if "data" in inspect.signature(fn).parameters else {}
                    fn(reg, models, course=course, **extra)
                except Exception:
                    if lesson.package not in self.drafts:
                        raise


# -- finding the packages --------------------------------------------------------------------------------------
_folders: dict[str, Path] = {}       # package -> the folder its module in sys.modules was imported from
_signatures: dict[str, tuple] = {}   # package -> its folder's .py files (name, mtime, size) at that import
_courses: dict[tuple, Course] = {}   # (folder, signature) -> the Course found there then


class _LessonFinder(importlib.abc.MetaPathFinder):
    """Finds experiments.lessons.<package> in a lessons/<id>/ folder: the one course(root) last looked at, else the
    checkout's own. (Inside experiments/lessons/, where the browser's bundle puts them, Python's path finder finds
    them first.)"""

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, package = fullname.rpartition(".")
        if prefix != __name__ or package in _shipped():
            return None
        for folder in (_folders.get(package), *_candidates(CHECKOUT_LESSONS, package)):
            if folder is not None and (folder / "__init__.py").is_file():
                if _folders.get(package) != folder:   # (imported by name, e.g. by a test: course() reuses it)
                    _folders[package], _signatures[package] = folder, _signature(folder)
                return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                              submodule_search_locations=[str(folder)])
        return None


def _candidates(lessons_dir: Path, package: str) -> list[Path]:
    return [p for p in sorted(lessons_dir.glob("*")) if p.is_dir() and package_name(p.name) == package] \
        if lessons_dir.is_dir() else []


def _shipped() -> set[str]:
    """The lesson packages (and modules) inside experiments/lessons/ itself: common.py, and in the browser's bundle
    every lesson."""
    return {m.name for m in pkgutil.iter_modules(__path__)}


def _install_finder() -> None:
    if not any(isinstance(f, _LessonFinder) for f in sys.meta_path):
        # before Python's path finder: a lessons/<id>/ folder wins over a leftover experiments/lessons/<package>/
        # folder without an __init__.py (which would be imported as an empty namespace package)
        at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
        sys.meta_path.insert(at, _LessonFinder())


def _signature(folder: Path) -> tuple:
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.glob("*.py")))


def _forget(package: str) -> None:
    """Drop experiments.lessons.<package> and its modules, so the next import reads them again."""
    name = f"{__name__}.{package}"
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    if package in globals():
        del globals()[package]
    _folders.pop(package, None)
    _signatures.pop(package, None)


def _import_from(folder: Path):
    """experiments.lessons.<package> imported from lessons/<id>/ (again, if it was imported from elsewhere or its
    files changed since)."""
    package = package_name(folder.name)
    signature = _signature(folder)
    if _folders.get(package) != folder or _signatures.get(package) != signature:
        _forget(package)
        _install_finder()
        _folders[package], _signatures[package] = folder, signature
        importlib.invalidate_caches()
    try:
        return importlib.import_module(f"{__name__}.{package}")
    except BaseException:
        _forget(package)
        raise


def _declared(module) -> Lesson | None:
    lesson = getattr(module, "LESSON", None)
    if not isinstance(lesson, Lesson):
        return None
    return lesson if lesson.package else Lesson(lesson.id, lesson.widgets, lesson.numbers, module.__name__)


def _own_files(lesson: Lesson, folder: Path, lesson_id: str) -> Lesson:
    """A lesson's widgets with their script and needs that are files of its folder named by their path from the
    course root (lessons/<id>/script.js), which the page's script file reads (sitegen/scripts.py)."""
    def own(name: str | None) -> str | None:
        return f"lessons/{lesson_id}/{name}" if name and (folder / name).is_file() else name
    widgets = tuple(dataclasses.replace(w, script=own(w.script), needs=tuple(own(n) or n for n in w.needs))
                    for w in lesson.widgets)
    return dataclasses.replace(lesson, widgets=widgets)


def course(root: Path | str | None = None) -> Course:
    """The lessons of root/lessons/ (see the module docstring); root None: the packages shipped in
    experiments/lessons/, or in a checkout its own lessons/. A folder whose __init__.py fails to import is left
    out and its error kept in Course.failed (the build decides whether that fails it)."""
    lessons_dir = Path(root).resolve() / "lessons" if root is not None else None
    if lessons_dir is None and not (set(_shipped()) - {"common"}) and CHECKOUT_LESSONS.is_dir():
        lessons_dir = CHECKOUT_LESSONS
    folders = sorted(p for p in lessons_dir.glob("*") if (p / "__init__.py").is_file()) if lessons_dir else []
    key = (lessons_dir, tuple((p.name, _signature(p)) for p in folders))
    if key in _courses and all(_folders.get(package_name(p.name)) == p for p in folders):
        return _courses[key]
    found: dict[str, Lesson] = {}
    owners: dict[str, Path] = {}
    failed: dict[Path, BaseException] = {}
    for folder in folders:
        try:
            module = _import_from(folder)
        except Exception as e:  # noqa: BLE001 - kept, with its folder, for the build to report or skip
            failed[folder] = e
            continue
        lesson = _declared(module)
        if lesson is not None:
            found[module.__name__] = _own_files(lesson, folder, folder.name)
            owners[module.__name__] = folder
    shipped = [m.name for m in pkgutil.iter_modules(__path__)]
    for name in shipped:
        lesson = _declared(importlib.import_module(f"{__name__}.{name}"))
        if lesson is not None and f"{__name__}.{name}" not in found:
            found[f"{__name__}.{name}"] = lesson
    ordered = tuple(found[name] for name in sorted(found, key=lambda n: n.rsplit(".", 1)[1]))
    drafts = frozenset(name for name, folder in owners.items() if not (folder / LESSON_FILE).is_file())
    result = Course(ordered, owners, failed, drafts)
    _courses[key] = result
    return result


def all_lessons() -> tuple[Lesson, ...]:
    return course().lessons


def widgets() -> dict[str, Widget]:
    return course().widgets()


def entry_points() -> dict[str, tuple[Widget, str]]:
    return course().entry_points()


def register_numbers(reg, models, course_doc=None, data=None) -> None:
    course().register_numbers(reg, models, course_doc, data=data)


_install_finder()   # (a way to find lesson folders, not a list of them: nothing is read until a lesson is imported)
