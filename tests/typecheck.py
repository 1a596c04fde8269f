"""`make lint`'s mypy: the files pyproject.toml's [tool.mypy] names, and every lesson's own Python at its place.

A lesson's Python lives in lessons/<id>/ (docs/adding-a-lesson.md) and is imported as the package
experiments.lessons.<id with - replaced by _> (experiments/lessons/__init__.py registers the folder under that
name). A folder named c4-transformer-block is no module name to mypy, which derives a module's name from its path,
so mypy's `files` cannot list it; here each lesson file is handed to mypy with the name it is imported under, which
also resolves its relative imports (`from ...widget import Lesson`, `from .calc import x`). A lesson's tests
(test_*.py) are left out, as tests/ is.

    python -m tests.typecheck          # exit status 0 when mypy finds nothing, 1 otherwise (its lines printed)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

from experiments.lessons import CHECKOUT_LESSONS, package_name


def lesson_sources(lessons: Path = CHECKOUT_LESSONS) -> list[BuildSource]:
    """Each lesson folder's modules (a folder with an __init__.py), under the names the course imports them as."""
    sources = []
    for folder in sorted(p for p in lessons.iterdir() if (p / "__init__.py").is_file()):
        package = f"experiments.lessons.{package_name(folder.name)}"
        for path in sorted(folder.glob("*.py")):
            if not path.name.startswith("test_"):
                module = package if path.name == "__init__.py" else f"{package}.{path.stem}"
                sources.append(BuildSource(os.path.relpath(path), module))
    return sources


def main(argv: list[str] | None = None) -> int:
    sources, options = process_options(list(argv if argv is not None else sys.argv[1:]))
    lessons = lesson_sources()
    try:
        result = build.build(sources + lessons, options)
    except CompileError as e:   # (a file mypy cannot parse)
        print("\n".join(e.messages))
        return 1
    errors = sum(": error:" in line for line in result.errors)
    print("\n".join([*result.errors, f"{f'Found {errors} errors' if errors else 'Success: no issues found'} in "
                                     f"{len(sources) + len(lessons)} source files ({len(lessons)} of the lessons)"]))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
