"""The instructor's loop: live preview (`make dev`), a published config dropped in as is, the change page.

- `make dev` runs `python -m sitegen.devserver`; here it runs on a temporary course copy, on a free port. An
  edit to a lesson reloads the open page with the new text; a broken edit shows the build's problem (file, line,
  what was expected) as an overlay over the page, which stays as it was, and the served site is left untouched;
  fixing the edit reloads the page without the overlay. Nothing of the dev server reaches _site/.
- Replacing a model's config.json by another published config gives the expected rows in _site/changes.html,
  each place a link that opens the page at that number, highlighted.
"""
from __future__ import annotations

import json
import queue
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest

from browser_fixtures import wait_runtime_ready
from build_fixtures import REPO, build_in_temp_copy, copy_course, run_build, tree_digest

LESSON = "lessons/c4-fixture/lesson.md"
STARTUP_TIMEOUT_S = 120
UPDATE_TIMEOUT_MS = 20_000   # generous for a loaded 2-core machine; speed is measured by `make bench`, not here


class DevServer:
    """`python -m sitegen.devserver --root ROOT --port 0` in a subprocess; its stdout lines in a queue."""

    def __init__(self, root):
        self.root = root
        self.proc = subprocess.Popen([sys.executable, "-m", "sitegen.devserver", "--root", str(root), "--port", "0"],
                                     cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        first = self.wait_for(r"^serving http://127\.0\.0\.1:\d+/")
        self.base = re.search(r"http://127\.0\.0\.1:\d+/", first).group(0)
        self.wait_for(r"^built ")

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout_s: float = STARTUP_TIMEOUT_S) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            self.log.append(line)
            if re.search(pattern, line):
                return line
        pytest.fail(f"dev server: no line matching {pattern!r}; output so far:\n" + "\n".join(self.log))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def dev(tmp_path_factory):
    server = DevServer(copy_course(tmp_path_factory.mktemp("dev")))
    yield server
    server.stop()


def _edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_dev_server_binds_loopback_only_and_keeps_site_clean(dev):
    assert dev.base.startswith("http://127.0.0.1:")
    built = (dev.root / "_site" / "c4-fixture.html").read_text(encoding="utf-8")
    assert "__dev" not in built and not list((dev.root / "_site").rglob("devserver*"))


def test_lesson_edit_reloads_the_open_page(dev, guarded_page):
    page = guarded_page
    page.goto(dev.base + "c4-fixture.html")
    wait_runtime_ready(page)
    assert page.locator("h2", has_text="① FFN 占多少").count() == 1
    page.evaluate("window.__before_edit = true")
    _edit(dev.root / LESSON, "## ① FFN 占多少", "## ① FFN 究竟占多少")
    page.locator("h2", has_text="① FFN 究竟占多少").wait_for(timeout=UPDATE_TIMEOUT_MS)
    assert page.evaluate("window.__before_edit === undefined"), "the text changed without a reload"
    wait_runtime_ready(page)
    page.guard.assert_clean()


def test_broken_edit_shows_overlay_and_keeps_the_last_good_page(dev, guarded_page):
    page = guarded_page
    page.goto(dev.base + "c4-fixture.html")
    wait_runtime_ready(page)
    digest = tree_digest(dev.root / "_site")
    page.evaluate("window.__before_edit = true")
    lesson = dev.root / LESSON
    good = lesson.read_text(encoding="utf-8")
    line = good.splitlines().index("## ② 对照表") + 1 + 2       # the blank line after the heading, then this one
    _edit(lesson, "## ② 对照表\n\n", "## ② 对照表\n\n锚点的层数是 {n}`anchor.layers_typo`。\n\n")
    overlay = page.locator("[data-testid=dev-overlay]")
    overlay.wait_for(timeout=UPDATE_TIMEOUT_MS)
    text = overlay.inner_text()
    assert "构建失败" in text
    assert f"{LESSON}:{line}:" in text and "unknown number 'anchor.layers_typo'" in text, text
    assert page.evaluate("window.__before_edit === true"), "the page reloaded on a failed build"
    assert page.locator(".lesson-body").inner_text().count("锚点的层数是") == 0    # still the last good page
    dev.wait_for(r"^build failed: the last good site is still served")
    assert tree_digest(dev.root / "_site") == digest, "the failed build touched the served site"
    lesson.write_text(good, encoding="utf-8")                                       # fixed: reload, no overlay
    page.wait_for_function("() => window.__before_edit === undefined", timeout=UPDATE_TIMEOUT_MS)
    wait_runtime_ready(page)
    assert page.locator("[data-testid=dev-overlay]").count() == 0
    page.guard.assert_clean()


# -- the change page ---------------------------------------------------------------------------------------------
def test_replacing_a_config_gives_change_rows_with_working_links(tmp_path, http_serve, guarded_page):
    result = build_in_temp_copy(tmp_path)
    # GPT-2 (124M) replaced by another config.json in GPT-2 format, the file dropped in as is
    shutil.copyfile(REPO / "data" / "models" / "gpt3-175b" / "config.json",
                    result.root / "data" / "models" / "gpt2" / "config.json")
    rebuilt = run_build(result.root)
    assert rebuilt.returncode == 0, rebuilt.stderr
    ffn_gpt2 = 12 * (2 * 768 * 3072 + 3072 + 768)           # c_fc and c_proj with their biases, 12 layers
    ffn_gpt3 = 96 * (2 * 12288 * 49152 + 49152 + 12288)     # the same at d = 12,288, 96 layers
    assert (ffn_gpt2, ffn_gpt3) == (56_669_184, 115_970_015_232)
    changes = {c["name"]: c for c in json.loads((result.out / "changes.json").read_text(encoding="utf-8"))}
    assert changes["gpt2.ffn"]["shown"] == [{"style": "n", "old": f"{ffn_gpt2:,}", "new": f"{ffn_gpt3:,}"}]
    assert not any(name.startswith("anchor.") for name in changes)
    assert f"changed gpt2.ffn: {ffn_gpt2:,} -> {ffn_gpt3:,} (c4-fixture.html: 1 place)" in rebuilt.stdout

    page = guarded_page
    page.goto(http_serve(result.out) + "changes.html")
    rows = page.locator("tr.change")
    assert rows.count() == len(changes)
    ffn = page.locator('tr.change[data-name="gpt2.ffn"]')
    assert ffn.locator(".change-shown").inner_text() == f"{ffn_gpt2:,} → {ffn_gpt3:,}"
    total = page.locator('tr.change[data-name="gpt2.total"]')
    assert total.locator(".change-shown").inner_text() == "124.4M → 174,604.3M"   # {M} on the page
    links = total.locator(".change-uses a")
    assert links.count() == 1 and links.first.get_attribute("href") == "c4-fixture.html#use-gpt2.total-1"
    ffn.locator(".change-uses a").first.click()
    page.wait_for_url("**/c4-fixture.html#use-gpt2.ffn-1")
    target = page.locator(":target")
    assert target.get_attribute("aria-describedby") == "num-gpt2.ffn" and target.inner_text() == f"{ffn_gpt3:,}"
    assert target.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"   # highlighted (.num:target)
    box, height = target.bounding_box(), page.viewport_size["height"]
    assert box and 0 <= box["y"] <= height, "the linked number is not in view"
    wait_runtime_ready(page)
