"""Code cells run apart from the widgets and can be stopped; the runtime loads only where it is needed, once.

The real course is built once per session (tests/build_fixtures.py: repo_site) and served here by a small server
that counts every request it answers and, like a production server should, lets browsers keep the versioned runtime
files (pyodide/<version>/, py/<hash>/) forever. In headless Chromium:
- a code cell looping forever (`while True: pass`) leaves a widget on the same page recomputing; 停止 ends it and
  the next run prints; without 停止 the run is stopped after the page's time limit (lowered for the test through
  the documented page-level setting `courseRuntime.cells.timeLimitMs`) with a Chinese message;
- a run asked for before Python is ready waits visibly and then runs;
- Tab / Shift+Tab indent and dedent, Esc then Tab leaves the box, Ctrl+Z undoes an indent;
- the outline page starts no worker and asks for no runtime file beyond an idle <link rel=prefetch> (none under
  Save-Data); a second lesson page, or a lesson after the outline's prefetch, fetches no runtime file again.
Pages with request interception (tests/browser_fixtures.py guarded_page) are used wherever the HTTP cache does not
matter; Playwright disables the cache for routed pages, and an incognito-like context caches nothing above a few MB,
so the cache tests use a browser profile on disk without interception and watch it for the same problems (console
errors, page errors, non-local requests), failing on any.
"""
from __future__ import annotations

import functools
import json
import threading
from pathlib import Path

import pytest

from browser_fixtures import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DRAW_TIMEOUT_MS,
    _is_local,
    _QuietHandler,
    _QuietServer,
    wait_runtime_ready,
)
from experiments.ledger import build_ledger
from experiments.lessons.c4_transformer_block.widgets import crossover_series
from test_widgets_browser import LESSON, choose, widget

OTHER_LESSON = "c4-ffn-deep-read.html"
RUNTIME_PREFIXES = ("/pyodide/", "/py/")
IMMUTABLE = "public, max-age=31536000, immutable"
SAVE_DATA = """Object.defineProperty(navigator, "connection", {
  value: {saveData: true, effectiveType: "4g", addEventListener() {}}, configurable: true});"""


# -- the counting server ---------------------------------------------------------------------------------------------
class CountingServer:
    """Serves a folder on 127.0.0.1; records (path, purpose header) of every answered request."""

    def __init__(self, root):
        self.root = Path(root)
        self.log: list[tuple[str, str]] = []
        log = self.log

        class Handler(_QuietHandler):
            def end_headers(self):
                if self.path.startswith(RUNTIME_PREFIXES):
                    self.send_header("Cache-Control", IMMUTABLE)
                super().end_headers()

            def do_GET(self):
                super().do_GET()
                log.append((self.path.split("?")[0],
                            self.headers.get("Sec-Purpose") or self.headers.get("Purpose") or ""))

        self.server = _QuietServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def runtime_requests(self) -> list[tuple[str, str]]:
        return [(path, purpose) for path, purpose in self.log if path.startswith(RUNTIME_PREFIXES)]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def server(repo_site):
    s = CountingServer(repo_site.out)
    yield s
    s.close()


@pytest.fixture
def watched_context(browser, tmp_path):
    """A browser profile on disk (a real disk cache: an in-memory, incognito-like context keeps no entry above a
    few MB, such as pyodide.asm.wasm), without request interception (so the HTTP cache works), recording the
    guard's problems."""
    context = browser.browser_type.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                             headless=True, args=CHROMIUM_ARGS)
    problems: list[str] = []
    context.on("console", lambda m: problems.append(f"console error: {m.text}") if m.type == "error" else None)
    context.on("request", lambda r: None if _is_local(r.url) else problems.append(f"non-local request: {r.url}"))
    def watch(page):
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    context.on("page", watch)
    for page in context.pages:   # the profile opens with one
        watch(page)
    yield context
    context.close()
    assert not problems, "\n".join(problems)


def cell_state(root) -> str | None:
    return root.get_attribute("data-run")


def wait_run_state(page, root, state: str | None, timeout_ms: int = 120_000) -> None:
    if state is None:
        page.wait_for_function("(el) => !el.dataset.run", arg=root.element_handle(), timeout=timeout_ms)
    else:
        page.wait_for_function("([el, s]) => el.dataset.run === s", arg=[root.element_handle(), state],
                               timeout=timeout_ms)


def run_cell(page, root, source: str) -> None:
    root.locator(".code-source").fill(source)
    root.locator(".code-run").click()


# -- learner code runs apart -------------------------------------------------------------------------------------------
def test_widget_recomputes_while_a_cell_loops_then_stop_ends_it(guarded_page, server):
    page = guarded_page
    page.goto(server.base + LESSON)
    wait_runtime_ready(page)
    cell, cross = widget(page, "code"), widget(page, "crossover")
    out, status, stop = cell.locator(".code-output"), cell.locator(".code-status"), cell.locator(".code-stop")
    assert stop.is_disabled()
    run_cell(page, cell, "while True:\n    pass\n")
    wait_run_state(page, cell, "running")
    assert out.inner_text() == "运行中…" and stop.is_enabled()

    gpt2 = _model(server, "gpt2")
    gpt2 = crossover_series(build_ledger(gpt2["config"]), name=gpt2["name"])
    choose(page, cross, ".model-picker", "gpt2")       # the widgets' worker answers while the cell's loops
    assert cross.locator(".crossover-point").inner_text() == gpt2["crossover_point"]
    assert cell_state(cell) == "running"

    stop.focus()
    page.keyboard.press("Enter")
    wait_run_state(page, cell, None)
    assert out.inner_text() == "已停止运行。" and status.inner_text() == "已停止运行。"
    assert page.evaluate("document.activeElement.className") == "code-run"   # the focus stays in the cell
    assert stop.is_disabled() and cell.get_attribute("data-busy") is None

    run_cell(page, cell, "print('after stop', 6 * 7)")   # a fresh worker: waits for it, then runs
    wait_run_state(page, cell, None)
    assert out.inner_text() == "after stop 42\n" and status.inner_text() == "运行完成：after stop 42"
    choose(page, cross, ".model-picker", "anchor")      # leave the shared widget as it was


def test_endless_run_is_stopped_after_the_time_limit(guarded_page, server):
    page = guarded_page
    page.goto(server.base + LESSON)
    wait_runtime_ready(page)
    assert page.evaluate("courseRuntime.cells.timeLimitMs") == 10000       # the learner's limit
    page.evaluate("courseRuntime.cells.timeLimitMs = 1500")              # the page-level setting, lowered
    cell = widget(page, "code")
    out = cell.locator(".code-output")
    run_cell(page, cell, "import time\nprint('started')\nwhile True:\n    time.sleep(0.01)\n")
    wait_run_state(page, cell, "running")
    page.wait_for_function("(el) => el.textContent === 'started\\n运行中…'", arg=out.element_handle())  # as it runs
    wait_run_state(page, cell, None, timeout_ms=60_000)
    assert out.inner_text() == "started\n运行超过 1.5 秒，已自动停止。请检查是否有死循环，或把计算规模改小后再运行。"
    assert "has-error" in out.get_attribute("class")
    assert cell.locator(".code-status").inner_text() == "运行超时，已停止"

    run_cell(page, cell, "import experiments\nprint('next run', experiments.__name__)")
    wait_run_state(page, cell, None)
    assert out.inner_text() == "next run experiments\n" and "has-error" not in out.get_attribute("class")


def test_run_before_ready_waits_visibly_then_runs(guarded_page, server):
    page = guarded_page
    page.goto(server.base + LESSON, wait_until="domcontentloaded")   # code-cell.js has run; Python has not loaded
    cell = widget(page, "code")
    assert page.evaluate("courseRuntime.cells.state") in ("idle", "loading")
    cell.locator(".code-source").press("Shift+Enter")
    assert cell_state(cell) == "pending" and cell.get_attribute("data-busy") == "true"
    assert cell.locator(".code-output").inner_text() == "等待 Python 运行时就绪，就绪后自动运行…"
    assert cell.locator(".code-stop").is_enabled()
    wait_run_state(page, cell, None)
    assert "3,688,704" in cell.locator(".code-output").inner_text()
    assert cell.locator(".code-status").inner_text().startswith("运行完成")


def test_a_queued_run_can_be_cancelled(guarded_page, server):
    page = guarded_page
    page.goto(server.base + LESSON, wait_until="domcontentloaded")
    cell = widget(page, "code")
    cell.locator(".code-run").click()
    assert cell_state(cell) == "pending"
    cell.locator(".code-stop").click()
    wait_run_state(page, cell, None, timeout_ms=5_000)
    assert cell.locator(".code-output").inner_text() == "已取消运行。"
    wait_runtime_ready(page)                          # the page goes on loading normally


# -- keys --------------------------------------------------------------------------------------------------------------
def test_tab_indents_shift_tab_dedents_escape_then_tab_leaves(guarded_page, server):
    page = guarded_page
    page.goto(server.base + LESSON, wait_until="domcontentloaded")
    cell = widget(page, "code")
    src = cell.locator(".code-source")
    src.fill("for i in range(3):\nprint(i)")

    def caret():
        return src.evaluate("(t) => [t.selectionStart, t.selectionEnd]")

    def select(a, b):
        src.evaluate("(t, [a, b]) => t.setSelectionRange(a, b)", [a, b])

    select(19, 19)                                   # the start of line 2
    page.keyboard.press("Tab")
    assert src.input_value() == "for i in range(3):\n    print(i)" and caret() == [23, 23]
    page.keyboard.press("Shift+Tab")
    assert src.input_value() == "for i in range(3):\nprint(i)" and caret() == [19, 19]
    select(21, 21)                                   # inside a word: spaces to the next multiple of 4
    page.keyboard.press("Tab")
    assert src.input_value() == "for i in range(3):\npr  int(i)"
    page.keyboard.press("Control+z")                 # an indent is an ordinary edit: undo takes it back
    assert src.input_value() == "for i in range(3):\nprint(i)"
    select(0, 27)                                    # both lines
    page.keyboard.press("Tab")
    assert src.input_value() == "    for i in range(3):\n    print(i)" and caret() == [4, 35]
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")                 # nothing left to remove: unchanged
    assert src.input_value() == "for i in range(3):\nprint(i)"
    assert page.evaluate("document.activeElement.className") == "code-source"   # Tab never left the box

    page.keyboard.press("Escape")
    page.keyboard.press("Tab")                       # Esc, then Tab: the focus moves on, the code is unchanged
    assert page.evaluate("document.activeElement.className") == "code-run"
    assert src.input_value() == "for i in range(3):\nprint(i)"
    page.keyboard.press("Shift+Tab")                 # back into the box: Tab indents again
    select(0, 0)
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")                 # Esc, then Shift+Tab: leaves backwards
    assert page.evaluate("document.activeElement.className") != "code-source"
    src.focus()
    select(0, 0)
    page.keyboard.press("Escape")
    page.keyboard.press("x")                         # any other key in between: Tab indents again
    page.keyboard.press("Tab")
    assert src.input_value() == "x   for i in range(3):\nprint(i)"
    assert page.evaluate("document.activeElement.className") == "code-source"


# -- where the runtime loads -------------------------------------------------------------------------------------------
def test_outline_page_starts_no_runtime_and_skips_prefetch_under_save_data(guarded_page, server):
    page = guarded_page
    page.add_init_script(SAVE_DATA)
    server.log.clear()
    page.goto(server.base + "index.html")
    page.wait_for_load_state("load")
    script = page.locator("script[data-urls]")   # (the page's script file holds prefetch-runtime.js)
    assert script.get_attribute("data-state") == "skipped"
    # past the page's idle time: an idle callback of ours runs after any the page had asked for
    page.evaluate("() => new Promise((resolve) => requestIdleCallback(() => resolve()))")
    assert page.locator("link[rel=prefetch]").count() == 0
    assert page.evaluate("typeof window.courseRuntime") == "undefined"
    assert page.locator("[data-testid=pyodide-status]").count() == 0
    assert server.runtime_requests() == []
    assert not [p for p, _ in server.log if p.endswith(("worker.js", "runtime-client.js"))]


def test_outline_prefetches_in_idle_time_and_the_lesson_then_downloads_nothing(watched_context, server):
    page = watched_context.pages[0]
    workers = []
    page.on("worker", lambda w: workers.append(w.url))
    server.log.clear()
    page.goto(server.base + "index.html")
    script = page.locator("script[data-urls]")   # (the page's script file holds prefetch-runtime.js)
    urls = sorted("/" + u for u in json.loads(script.get_attribute("data-urls")))
    page.wait_for_function("() => document.querySelector('script[data-urls]').dataset.state "
                           "=== 'done'", timeout=DRAW_TIMEOUT_MS)
    _wait_for(page, lambda: len(server.runtime_requests()) >= len(urls))
    assert sorted(server.runtime_requests()) == [(u, "prefetch") for u in urls]
    assert workers == [] and page.evaluate("typeof window.courseRuntime") == "undefined"

    server.log.clear()
    page.goto(server.base + LESSON)
    wait_runtime_ready(page)
    assert server.runtime_requests() == []           # every runtime file came from the prefetch
    assert page.url == server.base + LESSON          # (the page itself may come from the offline cache)


def test_second_lesson_page_downloads_no_runtime_file(watched_context, server):
    page = watched_context.pages[0]
    server.log.clear()
    page.goto(server.base + LESSON)
    wait_runtime_ready(page)
    _wait_for(page, lambda: page.evaluate("courseRuntime.packages !== null"))   # numpy follows "ready" (worker.js)
    first = {path for path, _ in server.runtime_requests()}
    assert {p.rsplit("/", 1)[1].split("-", 1)[0] for p in first} >= {
        "worker.js", "experiments.zip", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide", "numpy"}
    server.log.clear()
    page.goto(server.base + OTHER_LESSON)
    wait_runtime_ready(page)
    _wait_for(page, lambda: page.evaluate("courseRuntime.packages !== null"))
    assert page.evaluate("courseRuntime.packages.error") is None
    assert page.evaluate("courseRuntime.call('experiments.api:ping', ['cached'])")["pong"] == ["cached"]
    assert server.runtime_requests() == []
    assert page.url == server.base + OTHER_LESSON


# -- helpers -----------------------------------------------------------------------------------------------------------
def _model(server, alias) -> dict:
    return json.loads((server.root / "data" / "models.json").read_text(encoding="utf-8"))[alias]


def _wait_for(page, condition, timeout_ms: int = DRAW_TIMEOUT_MS) -> None:
    waited = 0
    while not condition():
        if waited >= timeout_ms:
            pytest.fail("timed out waiting for the server to see the requests", pytrace=False)
        page.wait_for_timeout(100)
        waited += 100
