"""A temporary copy of the project whose own modules a test imports in this process (no subprocess, no
Pyodide bundle): copy_project(dest) copies what the build and the engine read; with modules_of(root) as build:
imports experiments, sitegen and build.py from the copy inside the block and puts the project's back after it.
"""
from __future__ import annotations

import contextlib
import importlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("build.py", "README.md", "experiments", "sitegen", "site", "lessons", "data")
OWN_MODULES = ("experiments", "sitegen", "build")


def copy_project(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def add_files(root: Path, kit: Path) -> list[str]:
    """Copy every file under `kit` to the same place in `root`; each must be new. Returns their paths."""
    added = []
    for src in sorted(p for p in kit.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        target = root / src.relative_to(kit)
        assert not target.exists(), f"{target.relative_to(root)} exists already: the walkthrough adds new files only"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        added.append(target.relative_to(root).as_posix())
    return added


@contextlib.contextmanager
def modules_of(root: Path):
    """Import experiments, sitegen and build from `root` inside the block; the project's own afterwards."""
    def ours(name):
        return name.split(".")[0] in OWN_MODULES
    saved = {name: module for name, module in sys.modules.items() if ours(name)}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("build")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if ours(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
