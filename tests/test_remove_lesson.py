"""A lesson is a plug-in: removing its folder, lessons/<id>/, and its data/course.json chapter leaves a course that
builds, whose other pages are unchanged, and whose browser entry points still resolve.

Each case copies what the build reads (build.py, experiments/, sitegen/, site/, lessons/, data/) into a
temporary folder, removes one lesson and builds the copy in this process, with the copy's own modules imported
fresh (the project's are put back afterwards). The Pyodide bundle is not copied: the runtime step is left out
(it only copies .cache/runtime/ and zips experiments/, which is done here without writing), and so is
Plotly's copy (sitegen/vendor.py), which no lesson changes.
"""
from __future__ import annotations

import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from project_copy import ROOT, copy_project, modules_of


def lesson_packages() -> dict[str, str]:
    """Lesson id -> its package's name, for every lesson folder with a page (lessons/<id>/lesson.md)."""
    from experiments.lessons import package_name
    return {p.parent.name: package_name(p.parent.name) for p in sorted((ROOT / "lessons").glob("*/lesson.md"))}


PACKAGES = lesson_packages()


def most_named() -> str:
    """The lesson whose page the other lessons' Markdown names most often (links to it): removing it leaves the most
    behind to check. The fast loop removes this one; the others are a sweep, one full build each (`slow`)."""
    texts = {i: (ROOT / "lessons" / i / "lesson.md").read_text(encoding="utf-8") for i in PACKAGES}
    return max(sorted(PACKAGES), key=lambda i: sum(t.count(f"{i}.html") for o, t in texts.items() if o != i))


CASES = [pytest.param(i, marks=() if i == most_named() else pytest.mark.slow) for i in sorted(PACKAGES)]


def copy_without(lesson_id: str, dest: Path) -> Path:
    copy_project(dest)
    shutil.rmtree(dest / "lessons" / lesson_id)
    course_file = dest / "data" / "course.json"
    course = json.loads(course_file.read_text(encoding="utf-8"))
    course["chapters"] = [ch for ch in course["chapters"] if ch.get("lesson") != lesson_id]
    course_file.write_text(json.dumps(course, ensure_ascii=False, indent=2), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def full_site(repo_site):
    """The project's pages as the session's build of the course wrote them, to compare the remaining pages with."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(repo_site.out.glob("*.html"))
            if p.name != "changes.html"}


def _same_runtime(html: str) -> str:
    """The page with its runtime folder's name (a hash of the experiments package, which lost a lesson) masked and
    the runtime's size left out (that package is part of it, and the copy, without the Pyodide bundle in its
    .cache, states none)."""
    html = re.sub(r' data-runtime-bytes="\d+"', '', html)
    return re.sub(r"py/[0-9a-f]{12}/", "py/HASH/", html)


@pytest.mark.parametrize("lesson_id", CASES)
def test_a_course_without_the_lesson_builds(lesson_id, tmp_path, full_site):
    package = PACKAGES[lesson_id]
    root = copy_without(lesson_id, tmp_path / "project")
    with modules_of(root) as build:
        site = build.build(root, root / "_site", steps=[build.write_browser_models])
        from experiments import api, lessons
        from sitegen import runtime
        assert f"experiments.lessons.{package}" not in [lesson.package for lesson in lessons.course(root).lessons]
        warm = json.loads(api.warm_modules("[[]]"))   # every remaining entry point's module imports
        assert warm and not [m for m in warm if m.startswith(f"experiments.lessons.{package}")]
        plan = runtime.plan_runtime(root / "site" / "static" / "js" / "worker.js", root / "experiments")   # zips
        assert not [n for n in zipfile.ZipFile(io.BytesIO(plan.zip_bytes)).namelist()
                    if n.startswith(f"experiments/lessons/{package}/")]
    page = f"{lesson_id}.html"
    assert set(site.pages) == set(full_site) - {page}
    assert (root / "_site" / "index.html").is_file() and not (root / "_site" / page).exists()
    assert f'href="{page}"' not in site.pages["index.html"], "the outline still links to the removed lesson"
    compared = 0
    for other, html in site.pages.items():
        if page not in full_site[other]:   # a page that never named it (a link, or the chapter map C4's tracker
            #                                   reads: "href":"<page>") is unchanged
            assert _same_runtime(html) == _same_runtime(full_site[other]), f"{other} changed without {page}"
            compared += 1
    assert compared, f"every other page names {page}: none left to compare"
