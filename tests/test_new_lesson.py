"""docs/adding-a-lesson.md, followed to the letter: a new lesson with a new widget is one new folder, lessons/<id>/,
plus one entry in data/course.json, and nothing else.

In a temporary copy of the whole project, the files under tests/fixtures/new_lesson/ (the folder
lessons/c99-kit/) are added (each must be new: none may overwrite a file of the project) and one chapter is
appended to data/course.json; the copy's own build.py builds it. The lesson page must carry the widget as its view
rendered it, load the widget's script, list its entry point for the worker, and in Chromium the widget must
recompute in the browser (Pyodide, the copy's own experiments package) to exactly what CPython computes.
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from browser_fixtures import wait_runtime_ready

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / "tests" / "fixtures" / "new_lesson"
SKIP = {".git", "_site", "_dist", "_bench", ".pytest_cache", "__pycache__", ".cache", "build"}


def _copy_project(dest: Path) -> Path:
    shutil.copytree(ROOT, dest, ignore=lambda d, names: [n for n in names if n in SKIP or n.startswith("_site.")
                                                         or n.endswith(".egg-info")])
    (dest / ".cache").symlink_to(ROOT / ".cache", target_is_directory=True)   # the Pyodide bundle, read-only
    return dest


@pytest.fixture(scope="module")
def kit_site(tmp_path_factory):
    root = _copy_project(tmp_path_factory.mktemp("new-lesson") / "project")
    added = []
    for src in sorted(p for p in KIT.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        target = root / src.relative_to(KIT)
        assert not target.exists(), f"{target.relative_to(root)} exists already: the walkthrough adds new files only"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        added.append(target.relative_to(root).as_posix())
    course_file = root / "data" / "course.json"
    course = json.loads(course_file.read_text(encoding="utf-8"))
    course["chapters"].append({"id": "C99", "title": "示例课：一个新组件", "lesson": "c99-kit", "status": "written"})
    course_file.write_text(json.dumps(course, ensure_ascii=False, indent=2), encoding="utf-8")
    build_copy(root)
    return root, added


def build_copy(root: Path) -> None:
    """`python build.py` in the copy, as the walkthrough says (a new interpreter: `slow`, tests/conftest.py)."""
    proc = subprocess.run([sys.executable, "build.py"], cwd=root, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


def test_only_new_files_and_one_outline_entry(kit_site):
    root, added = kit_site
    assert sorted(added) == ["lessons/c99-kit/__init__.py", "lessons/c99-kit/lesson.md", "lessons/c99-kit/numbers.py",
                             "lessons/c99-kit/script.js", "lessons/c99-kit/templates/kit_total.html",
                             "lessons/c99-kit/views.py"]


def test_page_has_the_widget_its_script_and_its_entry_point(kit_site):
    root, _ = kit_site
    html = (root / "_site" / "c99-kit.html").read_text(encoding="utf-8")
    config = json.loads((root / "_site" / "data" / "models.json").read_text(encoding="utf-8"))["gpt2"]["config"]
    from experiments.format import n
    from experiments.ledger import build_ledger
    assert f'data-testid="kit-sum" data-f="total">{n(build_ledger(config).total)}</strong>' in html
    assert 'data-widget="kit-total"' in html
    assert re.search(r'aria-describedby="num-c99\.gpt2_ffn_width"[^>]*>4\.0<', html)   # its own number: 3072 / 768
    assert re.findall(r'<script src="static/js/page-[0-9a-f]{12}\.js" data-parts="([^"]+)"', html) == [
        "runtime-client.js widgets.js lessons/c99-kit/script.js"]
    assert 'data-warm="[&#34;kit_total&#34;]"' in html
    index = (root / "_site" / "index.html").read_text(encoding="utf-8")
    assert 'href="c99-kit.html"' in index


def test_widget_recomputes_in_the_browser(kit_site, http_serve, guarded_page):
    root, _ = kit_site
    from experiments.format import n, share
    from experiments.ledger import build_ledger
    models = json.loads((root / "_site" / "data" / "models.json").read_text(encoding="utf-8"))
    expected = build_ledger(models["llama7b"]["config"])
    page = guarded_page
    page.goto(http_serve(root / "_site") + "c99-kit.html")
    wait_runtime_ready(page)
    widget = page.locator(".kit-total")
    page.wait_for_function("() => !document.querySelector('.kit-total .model-picker').disabled")
    widget.locator(".model-picker").select_option("llama7b")
    page.wait_for_function("() => document.querySelector('.kit-total .kit-name').textContent === 'Llama 2 7B'")
    assert widget.get_by_test_id("kit-sum").inner_text() == n(expected.total)
    assert widget.get_by_test_id("kit-share").inner_text() == share(expected.ffn, expected.total)
    assert "kit-total.model=llama7b" in page.url
