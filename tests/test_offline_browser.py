"""The course offline after one visit (sitegen/offline.py, its service worker sitegen/offline_sw.js, offline.js), in
Chromium, on the real course served as `make serve` serves it (sitegen/serve.py), from a temporary copy:

1. one visit to a lesson page; the footer then says the course is kept on this device;
2. a repeat visit to another lesson downloads none of the runtime (answered by the service worker);
3. the network goes (the browser offline, and the server refuses every connection): every page reloads, Python
   gets ready on each, a widget recomputes on each, a code cell runs numpy;
4. the course is rebuilt with a changed sentence and the network comes back: one reload shows the new sentence,
   and the previous version's cache is gone (only the new build's remains).
5. Save-Data / a 2G connection (the service worker's savingData(), tested through Chromium's forced 2G estimate):
   nothing is fetched ahead and the course is not announced as offline; a page visited under the worker is kept
   with its runtime and works offline, a page never kept answers with the offline message.
6. The outline's data use (issue #49): it states the runtime's and the whole offline copy's sizes, equal to the
   built files' bytes counted here; on a fast connection it fetches ahead and says so, and its remove button
   unregisters the worker and deletes its caches, after which no page registers it again until 现在下载整门课程
   brings the copy back; on a 2G connection it fetches nothing ahead, says why, and keeps the course when asked.
7. An exercise (issue #48) solved online is still solved after an offline reload, with its code, and grades offline.
Waits are on conditions (selectors, page state), each bounded.
"""
from __future__ import annotations

import functools
import json
import re
import threading
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import browser_fixtures
from browser_fixtures import _QuietHandler, _QuietServer, wait_runtime_ready
from build_fixtures import copy_course, run_build
from sitegen.serve import CompressedBodies, CompressingHandler

NEW_SENTENCE = "这一句是重新构建时新加的。"
WAIT_MS = 120_000


class Switch:
    def __init__(self):
        self.offline = threading.Event()
        self.served: list[str] = []       # every path answered (while online)
        self.refused = 0                  # connections closed unanswered (while offline)


def serve(directory: Path, switch: Switch) -> tuple[str, _QuietServer]:
    class Handler(CompressingHandler, _QuietHandler):
        bodies = CompressedBodies()

        def handle_one_request(self):
            if switch.offline.is_set():       # "no network": the connection ends before any answer
                switch.refused += 1
                self.close_connection = True
                return
            super().handle_one_request()

        def send_head(self):
            if switch.offline.is_set():       # a request read on a connection opened before: no answer either
                switch.refused += 1
                self.close_connection = True
                return None
            switch.served.append(self.path.split("?", 1)[0])
            return super().send_head()

    server = _QuietServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("offline"), fixture_lessons=False)
    result = run_build(root)
    assert result.returncode == 0, result.stderr
    switch = Switch()
    base, server = serve(result.out, switch)
    yield root, result.out, base, switch
    server.shutdown()
    server.server_close()


def lesson_pages(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob("*.html") if p.name not in ("index.html", "changes.html"))


def sw_version(out: Path) -> str:
    return re.search(r'const VERSION = "([0-9a-f]{12})";', (out / "sw.js").read_text(encoding="utf-8")).group(1)


COUNT_UPDATES = """window.__updated = 0;
document.addEventListener("course:updated", () => { window.__updated += 1; });"""

# a control whose answer only Python can give (a button that needs Python, or a free number), changed once
RECOMPUTE = """() => {
  const widgets = Array.from(document.querySelectorAll(".widget")).filter((w) => !w.querySelector(".code-source"));
  for (const w of widgets) {
    const button = w.querySelector("button[data-needs-python]:not([disabled])");
    if (button) { button.click(); return "button " + button.className; }
  }
  for (const w of widgets) {
    // a number field: type=number, or a text field with inputmode=numeric (C10's, C14's: Python names bad input)
    const input = w.querySelector('input[type="number"]:not([disabled]), input[inputmode="numeric"]:not([disabled])');
    if (!input) continue;
    const min = Number(input.min || 1), value = Number(input.value);
    const step = Number(input.step) || 1;
    input.value = String(Math.max(min, Math.floor(value / 2 / step) * step) || min + step);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return "input " + input.className + "=" + input.value;
  }
  for (const w of widgets) {
    // a select Python answers (C15's: its number field is disabled, with its reason, until the swap reads it)
    const select = w.querySelector("select[data-needs-python]:not([disabled])");
    if (!select || select.options.length < 2) continue;
    select.selectedIndex = (select.selectedIndex + 1) % select.options.length;
    select.dispatchEvent(new Event("input", { bubbles: true }));
    select.dispatchEvent(new Event("change", { bubbles: true }));
    return "select " + select.className + "=" + select.value;
  }
  return null;
}"""


# the cache names once version v's is the only version left (or whatever they are after `limit` ms), and the URLs
# in the runtime cache then
UNTIL_ONLY_VERSION = """async ([v, limit]) => {
  const t0 = performance.now();
  for (;;) {
    const keys = await caches.keys();
    const versions = keys.filter((k) => !k.endsWith(" runtime"));
    if ((versions.length === 1 && versions[0].endsWith(" " + v)) || performance.now() - t0 > limit) {
      const runtime = keys.find((k) => k.endsWith(" runtime"));
      const urls = runtime ? (await (await caches.open(runtime)).keys()).map((r) => r.url) : [];
      return [keys.sort(), urls.sort()];
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}"""


def recompute_a_widget(page) -> str:
    page.wait_for_function("() => document.querySelector('button[data-needs-python]:not([disabled]), "
                           ".widget input[type=number]:not([disabled]), "
                           ".widget input[inputmode=numeric]:not([disabled]), "
                           ".widget select[data-needs-python]:not([disabled])')", timeout=WAIT_MS)
    before = page.evaluate("window.__updated")
    what = page.evaluate(RECOMPUTE)
    assert what, page.url
    # the training panel's start button (C8's is its page's only Python control) trains: its step counter moves
    done = ("() => Array.from(document.querySelectorAll('output[name=step]')).some((o) => Number(o.value) > 0)"
            if "train-start" in what else "(n) => window.__updated > n")
    try:
        page.wait_for_function(done, arg=before, timeout=WAIT_MS)
    except PlaywrightTimeout:
        pytest.fail(f"{page.url}: no widget updated after {what}", pytrace=False)
    return what


def run_numpy(page) -> str:
    # (the time limit is the learner's 10 s; on a machine shared by many test runs a cold cells worker needs more)
    return page.evaluate("""() => (window.courseRuntime.cells.timeLimitMs = 120000)
                              && window.courseRuntime.run("import numpy as np\\nprint(int(np.arange(10).sum()))")
                              .then((r) => r.ok ? r.stdout.trim() : "error: " + r.error)""")


def test_offline_after_one_visit_and_a_new_build_on_the_next_online_visit(browser, course):
    root, out, base, switch = course
    pages = lesson_pages(out)
    assert len(pages) >= 2
    context = browser.new_context(service_workers="allow")
    problems: list[str] = []
    context.on("page", lambda p: p.on("pageerror", lambda e: problems.append(f"page error: {e}")))
    page = context.new_page()
    page.add_init_script(COUNT_UPDATES)
    try:
        # 1. one visit
        page.goto(base + pages[0])
        wait_runtime_ready(page)
        note = page.locator("[data-offline-note]")
        note.wait_for(state="visible", timeout=WAIT_MS)
        assert "断网" in note.text_content()
        first = sw_version(out)
        assert page.evaluate("document.documentElement.dataset.offline") == first
        assert sorted(page.evaluate("caches.keys()")) == [f"course {base} {first}", f"course {base} runtime"]

        # 2. a repeat visit downloads none of the runtime
        switch.served.clear()
        page.goto(base + pages[1])
        wait_runtime_ready(page)
        assert run_numpy(page) == "45"
        runtime = [p for p in switch.served if p.startswith(("/pyodide/", "/py/"))]
        assert runtime == [], runtime
        assert page.locator("[data-offline-note]").is_visible()

        # 3. offline: every page reloads and computes
        switch.served.clear()
        switch.offline.set()
        context.set_offline(True)
        page.goto(base + "index.html")
        assert page.locator(".chapter-link").count() >= len(pages)
        for name in pages:
            page.goto(base + name)
            page.reload()
            wait_runtime_ready(page)
            recompute_a_widget(page)
            assert run_numpy(page) == "45", name
        assert switch.served == []                      # nothing came from the server

        # 4. a new build with a changed sentence; online again: one reload shows it, the old cache goes
        lesson = root / "lessons" / pages[0].removesuffix(".html") / "lesson.md"
        text = lesson.read_text(encoding="utf-8")
        body = text.split("\n---\n", 1)
        paragraph = next(line for line in body[1].splitlines()
                         if "。" in line and "{" not in line
                         and not line.startswith(("#", ":", "|", "-", "`", ">", "*")))
        lesson.write_text(body[0] + "\n---\n" + body[1].replace(paragraph, paragraph + NEW_SENTENCE, 1),
                          encoding="utf-8")
        result = run_build(root)
        assert result.returncode == 0, result.stderr
        second = sw_version(out)
        assert second != first
        context.set_offline(False)
        switch.offline.clear()
        page.goto(base + pages[0])
        assert NEW_SENTENCE in page.content()
        keys, runtime_urls = page.evaluate(UNTIL_ONLY_VERSION, [second, WAIT_MS])
        assert keys == [f"course {base} {second}", f"course {base} runtime"], keys
        sw = (out / "sw.js").read_text(encoding="utf-8")
        listed = json.loads(re.search(r"const FILES = (\[.*?\]);", sw).group(1))
        assert runtime_urls == sorted(base + f for f in listed if f.startswith(("pyodide/", "py/")))
        page.wait_for_function("(v) => document.documentElement.dataset.offline === v", arg=second, timeout=WAIT_MS)
    finally:
        switch.offline.clear()      # the server is back for the tests after this one, whatever happened here
        context.close()
    assert problems == []


def test_a_solved_exercise_stays_solved_offline_and_is_graded_there(browser, course):
    """Issue #48: an exercise solved online is still solved after an offline reload (its record and code are kept
    in the browser), and 检查 grades offline too (the grader and the course's code come from the kept copy)."""
    _, out, base, switch = course
    name = next(p for p in lesson_pages(out) if 'class="exercise"' in (out / p).read_text(encoding="utf-8"))
    root = ".exercise"
    context = browser.new_context(service_workers="allow")
    page = context.new_page()
    try:
        page.goto(base + name)
        wait_runtime_ready(page)
        page.locator("[data-offline-note]").wait_for(state="visible", timeout=WAIT_MS)
        page.wait_for_selector(f"{root}[data-ready]", state="attached", timeout=WAIT_MS)
        page.evaluate("window.courseRuntime.cells.timeLimitMs = 120000")
        solution = page.eval_on_selector(root, "r => r.querySelector('.exercise-solution pre').textContent")
        page.fill(f"{root} .exercise-source", solution)
        page.click(f"{root} .exercise-check")
        page.wait_for_selector(f"{root}[data-solved]", state="attached", timeout=WAIT_MS)

        switch.offline.set()
        context.set_offline(True)
        try:
            page.reload()
            wait_runtime_ready(page)
            page.wait_for_selector(f"{root}[data-ready]", state="attached", timeout=WAIT_MS)
            assert page.eval_on_selector(root, "r => r.dataset.solved") == "true"
            assert page.input_value(f"{root} .exercise-source").strip() == solution.strip()
            assert "完成过" in page.inner_text(f"{root} .exercise-feedback")
            page.evaluate("window.courseRuntime.cells.timeLimitMs = 120000")
            page.click(f"{root} .exercise-check")
            page.wait_for_function("(sel) => { const r = document.querySelector(sel);"
                                   " const f = r.querySelector('.exercise-feedback');"
                                   " return !r.dataset.busy && f.dataset.state === 'solved'"
                                   " && f.textContent.includes('都对了'); }", arg=root, timeout=WAIT_MS)
        finally:
            context.set_offline(False)
            switch.offline.clear()
    finally:
        context.close()


# Chromium's network quality estimate forced to 2G: navigator.connection.effectiveType is "2g" in the pages and in
# the service worker alike (CDP's Save-Data override reaches only the page, not the worker, so the worker's
# savingData() is tested through its 2G branch: the same rule, one condition of it)
SLOW_CONNECTION_ARGS = ["--force-effective-connection-type=2G"]


def test_save_data_or_2g_fetches_nothing_ahead_keeps_what_was_visited_and_claims_no_offline_course(browser, course):
    root, out, base, switch = course
    pages = lesson_pages(out)
    assert len(pages) >= 2
    slow = browser.browser_type.launch(executable_path=browser_fixtures.CHROMIUM, headless=True,
                                       args=browser_fixtures.CHROMIUM_ARGS + SLOW_CONNECTION_ARGS)
    context = slow.new_context(service_workers="allow")
    problems: list[str] = []
    context.on("page", lambda p: p.on("pageerror", lambda e: problems.append(f"page error: {e}")))
    page = context.new_page()
    page.add_init_script(COUNT_UPDATES)
    try:
        switch.served.clear()
        page.goto(base + pages[0])
        wait_runtime_ready(page)
        assert page.evaluate("navigator.connection.effectiveType") == "2g"
        # the worker is installed and in charge (offline.js registers it once Python is ready and the page idle)
        page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=WAIT_MS)
        worker = context.service_workers[0]
        assert worker.evaluate("self.navigator.connection.effectiveType") == "2g"
        # the worker's answer arrives by message, after it took control: wait for it, then it must announce nothing
        page.wait_for_function("() => document.documentElement.dataset.offline !== undefined", timeout=WAIT_MS)
        assert page.evaluate("document.documentElement.dataset.offline") == ""   # not announced
        assert not page.locator("[data-offline-note]").is_visible()
        # nothing was fetched ahead: no other page, and the version's cache was never completed
        others = {"/" + name for name in pages[1:]} | {"/index.html"}
        assert others.isdisjoint(switch.served), sorted(others & set(switch.served))
        version = sw_version(out)
        complete = f"""async () => !!(await (await caches.open("course {base} {version}")).match(
            new URL("__offline-complete__", "{base}").href))"""
        assert page.evaluate(complete) is False

        # a page visited under the worker is kept, with the runtime it used
        page.goto(base + pages[1])
        wait_runtime_ready(page)
        recompute_a_widget(page)
        assert page.evaluate(complete) is False
        kept = page.evaluate("""async () => {
          const urls = [];
          for (const key of await caches.keys()) {
            for (const r of await (await caches.open(key)).keys()) urls.push(new URL(r.url).pathname);
          }
          return urls;
        }""")
        assert "/" + pages[1] in kept, kept
        assert any(u.endswith("pyodide.asm.wasm") for u in kept), kept
        assert not ({"/" + name for name in pages[2:]} | {"/index.html"}) & set(kept), kept

        # offline: that page still works; the first one (fetched before the worker was there) is not kept
        switch.offline.set()
        context.set_offline(True)
        page.goto(base + pages[1])
        wait_runtime_ready(page)
        recompute_a_widget(page)
        response = page.goto(base + pages[0])
        assert response.status == 503 and "没有网络" in page.content()
    finally:
        switch.offline.clear()
        context.close()
        slow.close()
    assert problems == []


def test_the_outline_states_the_sizes_the_build_has(repo_site):
    out = repo_site.out      # (the session's build of the course: this test only reads it)
    sw = (out / "sw.js").read_text(encoding="utf-8")
    listed = json.loads(re.search(r"const FILES = (\[.*?\]);", sw).group(1))
    runtime = sum((out / f).stat().st_size for f in listed if f.startswith(("py/", "pyodide/")))
    everything = sum((out / f).stat().st_size for f in listed)
    html = (out / "index.html").read_text(encoding="utf-8")
    said = dict(re.findall(r'<span data-size="(\w+)">([\d.]+)</span>', html))
    assert said == {"runtime": f"{runtime / 1e6:.1f}", "offline": f"{everything / 1e6:.1f}"}, said
    assert "data-offline-sizes hidden" not in html
    assert 10 < runtime / 1e6 < everything / 1e6


REGISTRATIONS = "async () => (await navigator.serviceWorker.getRegistrations()).length"
COURSE_CACHES = "async () => (await caches.keys()).filter((k) => k.startsWith('course '))"


def test_on_a_fast_link_the_outline_fetches_ahead_and_the_copy_can_be_removed_and_brought_back(browser, course):
    root, out, base, switch = course
    pages = lesson_pages(out)
    context = browser.new_context(service_workers="allow")
    problems: list[str] = []
    context.on("page", lambda p: p.on("pageerror", lambda e: problems.append(f"page error: {e}")))
    page = context.new_page()
    try:
        page.goto(base + "index.html")
        panel = page.locator("[data-data-use]")
        assert page.evaluate("navigator.connection.effectiveType") == "4g"
        assert panel.locator("[data-offline-sizes]").is_visible()
        # fast: the runtime is prefetched, and the worker keeps the whole course; the section says so
        page.wait_for_selector("script[data-urls][data-state=done]", state="attached", timeout=WAIT_MS)
        page.wait_for_selector("[data-data-use][data-state=kept]", timeout=WAIT_MS)
        assert "断网也能用" in panel.locator(".data-use-state").text_content()
        assert page.evaluate(REGISTRATIONS) == 1 and len(page.evaluate(COURSE_CACHES)) == 2

        # removed: no worker, no cache; a lesson page does not bring them back
        panel.locator(".data-use-remove").click()
        page.wait_for_selector("[data-data-use][data-state=removed]", timeout=WAIT_MS)
        assert page.evaluate(REGISTRATIONS) == 0 and page.evaluate(COURSE_CACHES) == []
        assert panel.locator(".data-use-keep").is_visible() and not panel.locator(".data-use-remove").is_visible()
        page.goto(base + pages[0])
        wait_runtime_ready(page)
        page.wait_for_function("() => window.courseRuntime.packages !== null", timeout=WAIT_MS)
        page.evaluate("() => new Promise((r) => requestIdleCallback(() => setTimeout(r, 1000), {timeout: 5000}))")
        assert page.evaluate(REGISTRATIONS) == 0 and page.evaluate(COURSE_CACHES) == []
        assert not page.locator("[data-offline-note]").is_visible()

        # asked for again: the whole course is kept
        page.goto(base + "index.html")
        assert page.locator("[data-data-use]").get_attribute("data-state") == "removed"
        page.locator(".data-use-keep").click()
        page.wait_for_selector("[data-data-use][data-state=kept]", timeout=WAIT_MS)
        assert sorted(page.evaluate(COURSE_CACHES)) == [f"course {base} {sw_version(out)}", f"course {base} runtime"]
    finally:
        context.close()
    assert problems == []


def test_on_a_2g_link_the_outline_fetches_nothing_until_asked(browser, course):
    root, out, base, switch = course
    slow = browser.browser_type.launch(executable_path=browser_fixtures.CHROMIUM, headless=True,
                                       args=browser_fixtures.CHROMIUM_ARGS + SLOW_CONNECTION_ARGS)
    context = slow.new_context(service_workers="allow")
    page = context.new_page()
    try:
        switch.served.clear()
        page.goto(base + "index.html")
        page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=WAIT_MS)
        panel = page.locator("[data-data-use]")
        assert panel.get_attribute("data-state") == "slow"
        assert "网络较慢" in panel.locator(".data-use-state").text_content()
        assert page.evaluate("document.querySelector('script[data-urls]').dataset.state") == "skipped"
        assert not [p for p in switch.served if p.startswith(("/pyodide/", "/py/"))]   # nothing fetched ahead
        panel.locator(".data-use-keep").click()
        page.wait_for_selector("[data-data-use][data-state=kept]", timeout=WAIT_MS)
        assert [p for p in switch.served if p.endswith("pyodide.asm.wasm")]
        assert sorted(page.evaluate(COURSE_CACHES)) == [f"course {base} {sw_version(out)}", f"course {base} runtime"]
    finally:
        context.close()
        slow.close()
