"""Where a learner sees that Python is still loading (issue #49 part 1) and how many Pythons a page starts (part 2),
in Chromium.

The runtime is held back on purpose: the route for Pyodide's wasm answers only when the test lets it
(hold_runtime), so "while it loads" is a state the test controls, not a race with the download.
- a widget with controls that need Python says so on itself (.widget-runtime: waiting, with the bytes arrived so
  far once some have), and then that it is ready; its .widget wrapper's data-runtime says the same;
- a field that waits for Python looks disabled (computed style: faded, dashed border), and no longer once enabled;
- at 375 px the page's runtime status stays on screen after scrolling down while Python loads, whole (not cut off);
- a lesson page starts one Python (the widgets' worker) until a code cell is used; training runs in that same
  worker; using a code cell starts the cells' own (terminable) worker.
"""
from __future__ import annotations

import pytest

from tests.browser_fixtures import wait_runtime_ready

pytestmark = pytest.mark.browser

FFN = "c4-ffn-deep-read.html"
C5 = "c5-optimization.html"
INT4 = '.widget[data-widget="ffn-int4"]'


def hold_runtime(page):
    """Hold the requests for Pyodide's wasm (the page's prefetch and the worker's own) until release() is called."""
    held = []

    def hold(route):
        if held is None:
            route.continue_()
        else:
            held.append(route)
    page.context.route("**/pyodide.asm.wasm", hold)

    def release():
        nonlocal held
        routes, held = held, None
        for r in routes:
            r.continue_()
    return release


FIELDS = {"select": ".sf-m", "number": ".dw-T"}   # (the page's fields that wait for Python: a select, a number)
LOOK = """(el) => { const s = getComputedStyle(el);
    return {opacity: Number(s.opacity), border: s.borderTopStyle, background: s.backgroundColor}; }"""


def test_a_widget_says_it_waits_for_python_then_that_it_is_ready(guarded_page, site):
    page = guarded_page
    release = hold_runtime(page)
    page.goto(site + FFN)
    line = page.locator(INT4 + " .widget-runtime")
    assert page.locator(INT4).get_attribute("data-runtime") == "waiting"
    text = line.text_content()
    assert "需要 Python 运行时" in text and "正在加载" in text, text
    # the controls name the line that explains them
    described = page.eval_on_selector(INT4 + " .q-rows", "(el) => el.getAttribute('aria-describedby')")
    assert line.get_attribute("id") in described.split()
    # a field of each kind that waits for Python looks disabled, and no longer once it is enabled
    fields = {kind: page.locator(f".widget {sel}:disabled") for kind, sel in FIELDS.items()}
    for f in fields.values():   # each says why it waits, on its widget
        assert "需要 Python 运行时" in f.locator("xpath=ancestor::div[@data-widget]//p[@class='widget-runtime']") \
            .text_content()
    handles = {kind: f.element_handle() for kind, f in fields.items()}
    waiting = {kind: h.evaluate(LOOK) for kind, h in handles.items()}
    release()
    page.wait_for_selector(INT4 + '[data-runtime="ready"]')
    assert line.text_content() == "Python 运行时已就绪"
    for kind, h in handles.items():
        page.wait_for_function("(el) => !el.disabled", arg=h)
        before, after = waiting[kind], h.evaluate(LOOK)
        assert before["opacity"] < 0.8 <= after["opacity"], (kind, before, after)
        assert before["border"] == "dashed" and after["border"] == "solid", (kind, before, after)
        assert before["background"] != after["background"], (kind, before, after)


def test_the_waiting_line_counts_the_bytes_as_they_arrive(guarded_page, site):
    page = guarded_page
    page.goto(site + FFN)
    # some bytes arrive before ready on any link: the line (and the header) show them at least once, then ready
    page.wait_for_function("""() => {
        const t = document.querySelector('.widget[data-widget="ffn-int4"] .widget-runtime');
        window.__sawBytes = window.__sawBytes || /\\d+\\.\\d \\/ \\d+\\.\\d MB/.test(t.textContent);
        return t.parentNode.closest('.widget').dataset.runtime === 'ready'; }""", polling=10)
    if page.evaluate("courseRuntime.loaded") == 0:   # (every file came at once: nothing to show between)
        pytest.skip("the runtime arrived in one piece")
    assert page.evaluate("window.__sawBytes")


def test_on_a_phone_the_runtime_status_stays_on_screen_while_it_loads(guarded_pages, site):
    page = guarded_pages(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    release = hold_runtime(page)
    page.goto(site + FFN)
    status = page.locator("[data-testid=pyodide-status]")
    page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight / 2)")
    page.wait_for_function("() => window.scrollY > 1000")
    box = status.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 740 and box["x"] >= 0 and \
        box["x"] + box["width"] <= 375, box
    # whole: nothing of its text is cut off
    assert page.eval_on_selector("[data-testid=pyodide-status]", "(el) => el.scrollWidth <= el.clientWidth")
    assert "正在加载" in status.text_content()
    release()
    wait_runtime_ready(page)


def test_one_python_until_a_code_cell_is_used_and_training_shares_it(guarded_page, site):
    page = guarded_page
    workers = []
    page.on("worker", lambda w: workers.append(w.url.rsplit("/", 1)[-1]))
    page.goto(site + C5)
    wait_runtime_ready(page)
    # scrolled past every code cell (it used to start its worker when seen), idle for a while
    page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
    page.evaluate("() => new Promise((r) => requestIdleCallback(() => setTimeout(r, 1500)))")
    assert workers == ["worker.js"], workers
    # training runs in the page's one Python
    page.locator('[data-testid="c5-live-start"]').click()
    page.wait_for_function("() => window.courseTraining.steps >= 2")
    page.locator('[data-testid="c5-live-pause"]').click()
    assert workers == ["worker.js"], workers
    # a code cell's program starts the cells' worker (it can be terminated to stop an endless loop)
    cell = page.locator(".code-cell").first
    cell.locator(".code-run").click()
    page.wait_for_function("(c) => !c.dataset.busy && c.querySelector('.code-output').textContent",
                           arg=cell.element_handle())
    assert workers == ["worker.js", "worker.js#cells"], workers
