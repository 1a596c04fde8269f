"""Build test fixtures (a pytest plugin, listed in tests/conftest.py): builds of the site in temporary copies.

Nothing here touches the repo's own _site/. A temporary copy holds data/, lessons/ and site/ from the repo;
by default its pages are the two tiny fixture lessons in tests/fixtures/site/lessons (lessons/<id>/lesson.md)
and its course outline is the repo's data/course.json with the chapters replaced by
tests/fixtures/site/chapters.json, so build tests do not depend on lessons being written. The repo's lesson
folders come along without their lesson.md (and tests): their numbers and widgets are there, as in the course,
and none of them is a page. Model folders whose family the ledger cannot read yet are left out of a
fixture copy (the repo copy, fixture_lessons=False, keeps everything).

    def test_x(built_site):                 # one successful build per session: built_site.out / "index.html"
    def test_y(tmp_path):
        root = copy_course(tmp_path)        # then edit files under root
        result = run_build(root)            # python build.py --root ROOT --out ROOT/_site, in this process
        assert result.returncode == 0, result.stderr
    build_in_temp_copy(tmp_path)            # both in one call, the build must succeed

run_build calls build.main(argv) in the test's own process, capturing what it prints: the same exit status and
lines as the command, without a fresh interpreter importing numpy, Jinja2 and the engine for every build (a
failing build then takes a fraction of a second). An exception that escapes main() is printed as the traceback
the command would print, exit 1, so "no traceback" checks still see it. `runtime=False` leaves out the 17 MB
Pyodide bundle, for a build no browser opens (a build that fails never gets that far anyway).
run_build_command is the real `python build.py` in a subprocess: the session's built_site uses it, so the
command itself is run once per session.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

from sitegen.models import model_folders

REPO = Path(__file__).resolve().parent.parent
FIXTURE_SITE = Path(__file__).resolve().parent / "fixtures" / "site"
BUILD_TIMEOUT_S = 300


@dataclass
class BuildResult:
    root: Path
    out: Path
    returncode: int
    stdout: str
    stderr: str


def _readable_model(folder: Path) -> bool:
    from sitegen.models import read_model_folder
    return read_model_folder(folder)[0] is not None


def copy_course(tmp: Path, *, fixture_lessons: bool = True) -> Path:
    """Copy the repo's data/, lessons/ and site/ into tmp/course; returns that root.

    fixture_lessons=True swaps in the fixture lessons and chapters and keeps only readable model folders.
    """
    root = Path(tmp) / "course"
    root.mkdir(parents=True)
    shutil.copytree(REPO / "site", root / "site")
    shutil.copytree(REPO / "data", root / "data")
    if not fixture_lessons:
        shutil.copytree(REPO / "lessons", root / "lessons")
        return root
    shutil.copytree(REPO / "lessons", root / "lessons",   # every lesson's Python, templates and script; no page
                    ignore=shutil.ignore_patterns("lesson.md", "test_*.py", "test_*.pyc"))
    # (their compiled modules come along in __pycache__/: copytree keeps each file's mtime, so Python finds them
    # up to date and does not compile a copy's lessons again; an edited module is compiled as usual)
    shutil.copytree(FIXTURE_SITE / "lessons", root / "lessons", dirs_exist_ok=True)
    for folder in model_folders(root / "data" / "models"):
        if not _readable_model(folder):
            shutil.rmtree(folder)
    course_path = root / "data" / "course.json"
    course = json.loads(course_path.read_text(encoding="utf-8"))
    course["chapters"] = json.loads((FIXTURE_SITE / "chapters.json").read_text(encoding="utf-8"))
    course_path.write_text(json.dumps(course, ensure_ascii=False, indent=1), encoding="utf-8")
    return root


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def call_main(main, argv: list[str]) -> Run:
    """A command's main(argv) -> exit status, called in this process with what it prints captured. An exception
    that escapes it is printed as the interpreter would (a traceback), with exit status 1."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as e:   # argparse, or an explicit sys.exit
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception:  # noqa: BLE001 - what the command would print; a test sees "Traceback"
            traceback.print_exc(file=stderr)
            code = 1
    return Run(code, stdout.getvalue(), stderr.getvalue())


def run_build(root: Path, out: Path | None = None, *, runtime: bool = True) -> BuildResult:
    """`python build.py --root ROOT --out OUT` (OUT defaults to ROOT/_site), run in this process by build.main."""
    import build as build_module
    out = Path(out) if out else Path(root) / "_site"
    saved = list(build_module.OUTPUT_STEPS)
    if not runtime:
        build_module.OUTPUT_STEPS[:] = [s for s in saved if s is not build_module.install_runtime]
    try:
        run = call_main(build_module.main, ["--root", str(root), "--out", str(out)])
    finally:
        build_module.OUTPUT_STEPS[:] = saved
    return BuildResult(Path(root), out, run.returncode, run.stdout, run.stderr)


def run_build_command(root: Path, out: Path | None = None) -> BuildResult:
    """`python build.py --root ROOT --out OUT` (OUT defaults to ROOT/_site) in a subprocess."""
    out = Path(out) if out else Path(root) / "_site"
    proc = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    return BuildResult(Path(root), out, proc.returncode, proc.stdout, proc.stderr)


def build_in_temp_copy(tmp: Path, *, fixture_lessons: bool = True, runtime: bool = True) -> BuildResult:
    """copy_course + run_build; the build must succeed (else the test fails showing its stderr)."""
    return succeeded(run_build(copy_course(tmp, fixture_lessons=fixture_lessons), runtime=runtime))


def succeeded(result: BuildResult) -> BuildResult:
    """The result of a build that succeeded; else the test fails, showing the build's stderr."""
    if result.returncode != 0:
        pytest.fail(f"build failed (exit {result.returncode}):\n{result.stderr}", pytrace=False)
    return result


def tree_digest(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under folder (to prove a folder was left byte-identical)."""
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> BuildResult:
    """One successful build of the fixture course, shared by the whole session (treat it as read-only); the one
    build run as the command, `python build.py`, in a subprocess."""
    return succeeded(run_build_command(copy_course(tmp_path_factory.mktemp("built-site"))))


@pytest.fixture(scope="session")
def repo_site(tmp_path_factory) -> BuildResult:
    """One successful build of the real course (every lesson, every model) in a temporary copy."""
    return build_in_temp_copy(tmp_path_factory.mktemp("repo-site"), fixture_lessons=False)
