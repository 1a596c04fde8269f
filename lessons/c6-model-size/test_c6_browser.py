"""Lesson C6's widgets in real headless Chromium, compared with CPython's calculators for the same inputs.

The course is built into a temporary folder and served on 127.0.0.1; a guarded page (console errors, page errors
and non-local requests fail the module) loads the lesson. The IsoFLOP explorer's budget stops and the calculator's
GPU picker answer from the build's tables with the Python worker held back; a free field is answered by Python in
the browser and must equal CPython's answer; the device probe runs numpy in the page's worker and reports a speed
that its own sentence is consistent with. The URL keeps the explorer's budget. axe finds nothing moderate or worse,
and at 375 px the page does not scroll sideways.
"""
from __future__ import annotations

import json
import re

import pytest

from browser_fixtures import COUNT_UPDATES, axe_problems, open_lesson, updates, wait_runtime_ready, wait_update
from experiments.lessons.c6_model_size import BUDGETS, calc

PAGE = "c6-model-size.html"


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c6-slider", ".c6-b", ".c6-measure")


def placed(p) -> list:
    return json.loads(p.eval_on_selector(".c6-isoflop", "r => r.dataset.placed"))


def slide(p, index: int) -> None:
    before = updates(p, "c6-isoflop")
    p.evaluate("""(i) => { const s = document.querySelector('.c6-isoflop .c6-slider');
      s.value = String(i); s.dispatchEvent(new Event('input')); }""", index)
    wait_update(p, "c6-isoflop", before)


def fits(p) -> list[list[str]]:
    return p.eval_on_selector_all(".c6-isoflop .c6-fits tbody tr",
                                  "rs => rs.map(r => [...r.cells].map(c => c.textContent.trim()))")


def expect_isoflop(p, budget: str) -> None:
    want = calc.isoflop(budget, placed(p))
    assert fits(p) == [[f["label"], f["N"], f["D"], f["tpp"], f["loss"]] for f in want["fits"]]
    assert p.eval_on_selector(".c6-isoflop .c6-sentence", "n => n.textContent") == want["sentence"]
    assert p.eval_on_selector(".c6-isoflop .c6-budget-out", "n => n.textContent") == want["budget"]
    spec = json.loads(p.eval_on_selector(".c6-isoflop script.chart-spec", "n => n.textContent"))
    assert spec == json.loads(json.dumps(want["chart"]))


def change_budget(p, values: dict, fire: str) -> None:
    before = updates(p, "c6-budget")
    p.evaluate("""([values, fire]) => { const r = document.querySelector('.c6-budget');
      for (const [sel, v] of Object.entries(values)) r.querySelector(sel).value = String(v);
      r.querySelector(fire).dispatchEvent(new Event('change')); }""", [values, fire])
    wait_update(p, "c6-budget", before)


def plan(p) -> dict:
    rows = p.eval_on_selector_all(".c6-budget .c6-plan-rows tbody tr",
                                  "rs => rs.map(r => [...r.cells].map(c => c.textContent.trim()))")
    return {"rows": rows, "sentence": p.eval_on_selector(".c6-budget [data-testid=c6-plan-sentence]",
                                                        "n => n.textContent")}


def expected_plan(*args) -> dict:
    x = calc.budget_plan(*args)
    return {"rows": [[r["label"], r["N"], r["D"], r["tpp"]] for r in x["rows"]], "sentence": x["sentence"]}


# -- the IsoFLOP explorer -----------------------------------------------------------------------------------------
def test_built_state_is_gophers_budget(page):
    expect_isoflop(page, "5.76e23")
    assert len(placed(page)) == 6


def test_budget_stops_answered_before_python(module_guard, site):
    p = module_guard.context.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.route("**/worker.js", lambda route: None)      # never answered: the runtime stays loading
    p.goto(site + PAGE)
    p.wait_for_function("() => !document.querySelector('.c6-isoflop .c6-slider').disabled")
    for i in (0, BUDGETS.index("1e20"), len(BUDGETS) - 1):
        slide(p, i)
        expect_isoflop(p, BUDGETS[i])
    assert f"c6-isoflop.budget={BUDGETS[-1]}" in p.url
    # the GPU picker too
    change_budget(p, {".c6-g": "a100"}, ".c6-g")
    assert plan(p) == expected_plan("5.76e23", "312", "1024", "40")
    assert p.evaluate("window.courseWidgets.answered.python") == 0
    p.close()


def test_budget_from_the_url(module_guard, site):
    p = module_guard.context.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.goto(site + PAGE + "?c6-isoflop.budget=3e21&c6-budget.gpus=64&c6-budget.mfu=35")
    wait_runtime_ready(p)
    for w in ("c6-isoflop", "c6-budget"):
        p.wait_for_function("(k) => (window.__updates[k] || 0) > 0", arg=w, timeout=60_000)
    expect_isoflop(p, "3e21")
    assert p.eval_on_selector(".c6-isoflop .c6-slider", "s => s.value") == str(BUDGETS.index("3e21"))
    assert plan(p) == expected_plan("5.76e23", "989.4", "64", "35")
    p.close()


# -- the calculator: free fields are answered by Python in the browser ----------------------------------------------
def test_calculator_in_the_browser_equals_cpython(page):
    change_budget(page, {".c6-b": "2.5e24", ".c6-n": "2048", ".c6-u": "37.5"}, ".c6-b")
    assert plan(page) == expected_plan("2.5e24", "989.4", "2048", "37.5")
    assert "c6-budget.budget=2.5e24" in page.url and "c6-budget.gpus=2048" in page.url
    change_budget(page, {".c6-b": "1e5"}, ".c6-b")
    error = page.locator(".c6-budget > .widget-error")
    assert error.is_visible() and "1e6 到 1e30" in error.inner_text() and "Error" not in error.inner_text()
    change_budget(page, {".c6-b": "5.76e23", ".c6-n": "1024", ".c6-u": "40"}, ".c6-b")
    assert not error.is_visible()
    assert plan(page) == expected_plan("5.76e23", "989.4", "1024", "40")


# -- the device probe ------------------------------------------------------------------------------------------------
# a bound only: the probe runs two of the trainer's steps on the baseline, and the machine may be busy
DEVICE_MS = 180_000


def test_device_speed_measured_in_the_page(page):
    assert page.evaluate("() => window.courseTraining.state") == "idle"      # no training worker yet
    before = updates(page, "c6-device")
    page.locator(".c6-measure").click()
    page.wait_for_function("([k, n]) => (window.__updates[k] || 0) > n", arg=["c6-device", before], timeout=DEVICE_MS)
    result = page.locator(".c6-device-result")
    assert result.is_visible()
    gflops = float(page.eval_on_selector(".c6-device", "r => r.dataset.gflops"))
    assert gflops > 0
    # timed in the training worker, not the widgets' one (whose other answers it would hold up for seconds)
    assert page.evaluate("() => [window.courseTraining.state, window.courseTraining.inflight]") == ["ready", 0]
    sentence = result.inner_text()
    base = calc.baseline_budget()
    assert calc.duration_zh(base["C"] / (gflops * 1e9)) in sentence
    assert re.search(r"训练一步（4 × 32 个 token，[\d.]+ × 10[⁰¹²³⁴⁵⁶⁷⁸⁹]+ FLOPs）用了 [\d.,]+ 毫秒", sentence)


def test_code_cell_runs_in_the_browser(page):
    cell = page.locator(".code-cell").first
    before = updates(page, "code-cell")
    cell.locator(".code-run").click()
    wait_update(page, "code-cell", before)
    out = cell.locator(".code-output").inner_text()
    assert "闭式解：  N = 72.2B" in out and float(re.search(r"与闭式解差 ([\d.]+)%", out).group(1)) < 0.2


# -- accessibility and phones ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_clean(module_guard, site, scheme):
    bad = axe_problems(module_guard.context, site + PAGE, scheme)
    assert not bad, "\n".join(bad)


def test_phone_width(guarded_pages, site):
    p = guarded_pages(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    p.goto(site + PAGE)
    wait_runtime_ready(p)
    p.locator(".c6-measure").tap()
    p.locator(".c6-device-result").wait_for(state="visible", timeout=DEVICE_MS)
    state = p.evaluate("""() => {
      const d = document.documentElement;
      const wide = [...document.querySelectorAll('body *')].filter((e) => {
        const r = e.getBoundingClientRect();
        return r.width && r.right > d.clientWidth + 1 && !e.closest('.table-scroll, pre, .num-popover, .chart-plot');
      }).slice(0, 5).map((e) => e.tagName + '.' + e.className);
      return { scroll: d.scrollWidth, client: d.clientWidth, wide: wide };
    }""")
    assert state["scroll"] <= state["client"], state
