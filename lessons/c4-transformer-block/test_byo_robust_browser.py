"""The bring-your-own-config box under hostile input, in Chromium (script.js, experiments/ledger/jsontext.py).

- A JSON nested 10,000 levels deep (arrays or objects) gives a Chinese line saying it is nested too deeply, from
  the page's own check and from Python's alike (the text sent to the worker directly); the runtime is unharmed:
  a good config still computes and the numpy baseline widget still runs.
- A 5 MB config, pasted or picked as a file, is refused at once with a Chinese line giving the 4 MB limit,
  without entering the box; one just under the limit computes the right total. Neither holds up the page's main
  thread for 200 ms: long tasks are recorded with a PerformanceObserver, and since this machine is shared (a
  task's wall time there includes the time the page was not scheduled at all), each main-thread task's own CPU
  time is read from a Chromium trace; no task may spend 200 ms of CPU.
- changes.html loads without a console error (its favicon).
"""
from __future__ import annotations

import json

import pytest

from browser_fixtures import wait_runtime_ready
from build_fixtures import REPO

GOOD = (REPO / "data" / "models" / "llama-2-7b" / "config.json").read_text(encoding="utf-8")
GOOD_TOTAL = "6,738,415,616"
PAGE = "c4-transformer-block.html"
BOX = ".widget[data-widget=byo-config]"
LONG_TASK_MS = 200

OBSERVE_LONG_TASKS = """window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration));
}).observe({ type: "longtask", buffered: true });"""


@pytest.fixture(scope="module")
def base(repo_site, http_serve) -> str:
    return http_serve(repo_site.out)


def _open(page, base):
    page.add_init_script(OBSERVE_LONG_TASKS)
    page.goto(base + PAGE)
    wait_runtime_ready(page)
    page.wait_for_selector(f"{BOX} [data-testid=byo-config-run]:not([disabled])")
    return page.locator(BOX).first


def _good_config_computes(widget):
    widget.locator("[data-testid=byo-config-input]").fill(GOOD)
    widget.locator("[data-testid=byo-config-run]").click()
    widget.locator(".byo-error").wait_for(state="hidden")
    widget.locator("[data-testid=byo-config-total]").filter(has_text=GOOD_TOTAL).wait_for()


DEEP = {"arrays": "[" * 10_000 + "]" * 10_000, "objects": '{"a": ' * 10_000 + "1" + "}" * 10_000}


def test_deeply_nested_json_is_refused_in_chinese_and_the_runtime_survives(base, guarded_page):
    page = guarded_page
    widget = _open(page, base)
    _good_config_computes(widget)                      # an earlier result, which must not stay on screen
    error, total = widget.locator(".byo-error"), widget.locator("[data-testid=byo-config-total]")
    for name, text in DEEP.items():
        widget.locator("[data-testid=byo-config-input]").fill(text)
        widget.locator("[data-testid=byo-config-run]").click()
        error.wait_for(state="visible")
        assert "嵌套太深" in error.inner_text() and "10,000 层" in error.inner_text(), (name, error.inner_text())
        assert total.inner_text().strip() == "—", name
        assert widget.locator(".byo-ledgers > *").count() == 0, name
        # the same text given to Python itself (past the page's check): a Chinese line, not a fatal error
        reply = page.evaluate("(t) => window.courseWidgets.call('byo_views', [t, []])", text)
        assert reply["ok"] is False and "嵌套太深" in reply["problems"][0], (name, reply)
    _good_config_computes(widget)
    status = page.locator(".widget[data-widget=baseline] .baseline-status").first
    page.locator(".widget[data-widget=baseline] .run-baseline").first.click()
    page.wait_for_function("(el) => el.textContent.includes('浏览器里跑完')", arg=status.element_handle())
    page.guard.assert_clean()


def _main_thread_cpu_ms(trace_path) -> list[int]:
    """CPU time (ms) of every task the page's main thread ran while the trace was on."""
    events = json.loads(trace_path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"}
    return sorted((e.get("tdur", 0) // 1000 for e in events
                   if e.get("name") == "RunTask" and (e.get("pid"), e.get("tid")) in main), reverse=True)


def test_a_config_over_the_limit_is_refused_at_once_and_one_below_it_computes(base, browser, guarded_page,
                                                                              tmp_path):
    page = guarded_page
    widget = _open(page, base)
    box, error = widget.locator("[data-testid=byo-config-input]"), widget.locator(".byo-error")
    trace = tmp_path / "trace.json"
    browser.start_tracing(page=page, path=str(trace),
                          categories=["devtools.timeline", "disabled-by-default-devtools.timeline"])
    seen_before = page.evaluate("window.__longTasks.length")
    # pasted: a paste event carrying 5 MB of text
    page.evaluate("""(config) => {
        const dt = new DataTransfer();
        dt.setData("text/plain", JSON.stringify(Object.assign(JSON.parse(config), { pad: "x".repeat(5e6) })));
        document.querySelector("[data-testid=byo-config-input]")
          .dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
      }""", GOOD)
    error.wait_for(state="visible")
    assert "不超过 4,000,000 字节" in error.inner_text() and "5,000," in error.inner_text(), error.inner_text()
    assert box.input_value() == ""
    # picked as a file
    big = json.dumps({**json.loads(GOOD), "pad": "x" * 5_000_000}).encode()
    page.evaluate("() => { document.querySelector('.byo-error').hidden = true; }")
    picked = tmp_path / "config.json"   # (a path, as a file picker gives: a buffer would be decoded by the test's
    picked.write_bytes(big)             # own script on the page's thread, 0.9 s of CPU that is not the page's)
    widget.locator(".byo-file").set_input_files(picked)
    error.wait_for(state="visible")
    assert f"{len(big):,} 字节" in error.inner_text(), error.inner_text()
    assert box.input_value() == ""
    # just under the limit, pasted: held aside (the box shows its beginning), computed off the main thread.
    # (Shaped like a real big config.json: a label map, one short line per entry, as published files are written.)
    size = page.evaluate("""(config) => {
        const labels = {};
        for (let i = 0; i < 35_000; i++) labels[i] = "LABEL_" + i;
        const text = JSON.stringify(Object.assign(JSON.parse(config), { id2label: labels }), null, 2);
        const dt = new DataTransfer();
        dt.setData("text/plain", text);
        document.querySelector("[data-testid=byo-config-input]")
          .dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
        return new TextEncoder().encode(text).length;
      }""", GOOD)
    assert 900_000 < size <= 1_000_000
    assert f"共 {size:,} 字节" in box.input_value() and len(box.input_value()) < 5_000
    widget.locator("[data-testid=byo-config-run]").click()
    error.wait_for(state="hidden")
    widget.locator("[data-testid=byo-config-total]").filter(has_text=GOOD_TOTAL).wait_for()
    long_tasks = page.evaluate(f"window.__longTasks.slice({seen_before})")
    browser.stop_tracing()
    cpu = _main_thread_cpu_ms(trace)
    assert cpu and cpu[0] < LONG_TASK_MS, (f"a main-thread task spent {cpu[0]} ms of CPU; long tasks seen by the "
                                           f"page (wall time, ms): {long_tasks}")
    page.guard.assert_clean()


def test_the_change_report_page_loads_cleanly(base, guarded_page):
    """Without a <link rel=icon> a browser asks for /favicon.ico, which the site does not have: a 404 in the
    console (headless Chromium skips that request, so the link itself is checked, and that it loads)."""
    page = guarded_page
    page.goto(base + "changes.html")
    page.wait_for_load_state("networkidle")
    icon = page.locator("link[rel=icon]")
    assert icon.count() == 1, "changes.html names no icon: browsers then ask for /favicon.ico (404)"
    assert page.request.get(base + icon.get_attribute("href")).status == 200
    page.guard.assert_clean()
