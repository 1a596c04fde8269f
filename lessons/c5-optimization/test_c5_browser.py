"""Lesson C5's widgets in real headless Chromium: the live run trains in a worker of its own and its loss falls;
pause and reset work; the other widgets answer meanwhile; the browser's first 20 steps equal CPython's within
float32 rounding; the race and schedule controls answer from the build's states before Python is ready (and
the race from Python, sent the published stored runs, without them); the
first-step panel computes the baseline's step in the page; axe stays clean after training; nothing scrolls
sideways at 375 px.

Every wait is on a condition (a step count, a data-state, a widget's course:updated event), never on time.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from browser_fixtures import COUNT_UPDATES, open_lesson, open_without_python, table, updates, wait_update
from experiments.lessons.c5_optimization import widgets as C5

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c5-optimization.html"
TEXT = (ROOT / "data" / "texts" / "sishu.txt").read_text(encoding="utf-8")
LIVE = ".c5-live"
TRAIN_MS = 180_000           # generous: the machine running the tests may be busy


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, '[data-testid="c5-live-start"]')


def click(page, testid):
    page.click(f'[data-testid="{testid}"]')


def state(page) -> str:
    return page.eval_on_selector(".c5-live", "w => w.dataset.state")


def step(page) -> int:
    return int(page.eval_on_selector('[data-testid="c5-live-step"]', "n => n.textContent"))


def live_series(page) -> list:
    """The live run's losses as drawn: the first of the chart's current spec's three series (drawn first, so
    under the two precomputed curves), [] before a run."""
    spec = json.loads(page.eval_on_selector(f"{LIVE} figure.chart script.chart-spec", "n => n.textContent"))
    if len(spec["series"]) < 3:
        return []
    assert "预先算好" not in spec["series"][0]["name"] and all("预先算好" in s["name"] for s in spec["series"][1:])
    return spec["series"][0]["y"]


def wait_steps(page, n):
    page.wait_for_function("(n) => Number(document.querySelector('[data-testid=\"c5-live-step\"]').textContent) >= n",
                           arg=n, timeout=TRAIN_MS)


def pause(page):
    click(page, "c5-live-pause")
    page.wait_for_function("() => window.courseTraining.inflight === 0", timeout=TRAIN_MS)


def reset(page):
    if state(page) != "idle":                  # (重置 is disabled when there is nothing to reset)
        click(page, "c5-live-reset")
    page.wait_for_function("() => document.querySelector('.c5-live').dataset.state === 'idle'")


def test_live_run_loss_falls_and_pause_holds(page):
    reset(page)
    click(page, "c5-live-start")
    wait_steps(page, 1)
    first = float(page.eval_on_selector('[data-testid="c5-live-loss"]', "n => n.textContent"))
    assert 7.0 < first < 8.0                                  # ~ln(vocabulary) before any learning
    page.wait_for_function("(x) => Number(document.querySelector('[data-testid=\"c5-live-loss\"]').textContent) "
                           "< x - 1.0", arg=first, timeout=TRAIN_MS)
    assert state(page) == "running"
    pause(page)
    assert state(page) == "paused"
    held = step(page)
    # real work elsewhere (a code cell in its own worker) while paused: no step is taken meanwhile
    page.evaluate("() => { window.courseRuntime.cells.timeLimitMs = 170000; }")   # a busy machine is slow
    cell = page.locator(".code-cell").first
    cell.locator(".code-run").click()
    cell.locator(".code-output").filter(has_text="第 40 步").wait_for(timeout=TRAIN_MS)
    assert step(page) == held and page.evaluate("window.courseTraining.inflight") == 0
    ys = live_series(page)
    assert len(ys) == held and ys[-1] < ys[0] - 1.0
    # and it resumes where it stopped
    click(page, "c5-live-start")
    wait_steps(page, held + 3)
    pause(page)
    assert live_series(page)[:held] == ys
    # the speed it ran at (the steps since it resumed): steps per second, and tokens per second at the run's
    # batch × sequence (C5's live run: 4 × 32 tokens a step)
    speed = page.eval_on_selector('[data-testid="c5-live-speed"]', "n => n.textContent")
    m = re.fullmatch(r"每秒 ([\d.]+) 步，([\d,]+) 个 token", speed)
    assert m, speed
    rate, tokens = float(m[1]), int(m[2].replace(",", ""))
    assert rate > 0 and abs(tokens - rate * 4 * 32) <= (0.05 if "." in m[1] else 0.5) * 4 * 32 + 1


def test_other_widgets_answer_while_training(page):
    reset(page)
    click(page, "c5-live-start")
    wait_steps(page, 2)
    before = updates(page, "c5-race")
    page.eval_on_selector('[data-testid="c5-race-k"]', "s => { s.value = '6'; s.dispatchEvent(new Event('input')); }")
    wait_update(page, "c5-race", before)
    assert page.eval_on_selector(".c5-race-label", "n => n.textContent") == "×27"
    rows = table(page, ".c5-race-rows")
    want = C5.race(3, json.loads((ROOT / "data" / "train_runs.json").read_text(encoding="utf-8"))["race"])["rows"]
    assert rows == [[r["name"], r["lr"], r["final"], r["held_out"]] for r in want]
    before = updates(page, "c5-schedule")
    page.select_option('[data-testid="c5-sched-kind"]', "wsd")
    wait_update(page, "c5-schedule", before)
    assert "WSD" in page.eval_on_selector(".c5-sched-readout", "n => n.textContent")
    assert state(page) == "running"                    # still training throughout
    pause(page)
    reset(page)
    assert step(page) == 0 and live_series(page) == []
    assert page.eval_on_selector('[data-testid="c5-live-loss"]', "n => n.textContent") == "—"


def test_browser_equals_cpython_for_20_steps(page):
    reset(page)
    click(page, "c5-live-start")
    wait_steps(page, 20)
    pause(page)
    browser = live_series(page)[:20]
    for kernels in ("einsum", "matmul"):
        cpu = cpython_losses(kernels, 20)
        assert len(browser) == 20
        for a, b in zip(browser, cpu):
            assert abs(a - b) <= 2e-4 * abs(b), (kernels, browser, cpu)


def cpython_losses(kernels, n):
    from experiments.train import kernels as K
    old = K.for_platform
    K.for_platform = lambda platform=None: K.BY_NAME[kernels]     # the kernels the browser or BLAS would pick
    try:
        s = C5.train_start(TEXT, "adamw", 0, 0)["session"]
        return [C5.train_step(s, 1)["steps"][0]["loss"] for _ in range(n)]
    finally:
        K.for_platform = old


def test_first_step_is_computed_in_the_page(page):
    before = updates(page, "c5-first-step")
    page.select_option('[data-testid="c5-first-opt"]', "adam")
    click(page, "c5-first-run")
    wait_update(page, "c5-first-step", before)
    got = table(page, ".c5-first-rows")
    want = C5.first_step(TEXT, "adam", 3e-3)["rows"]
    assert [r[:3] for r in got] == [[w["name"], w["shape"], w["std"]] for w in want]
    # float32 rounding may move the last digit of a percentage
    for r, w in zip(got, want):
        assert abs(float(r[3].rstrip("%")) - float(w["ratio"].rstrip("%"))) <= 0.1, (r, w)
    assert len(got) == 1 + 4 * 7


def test_race_and_schedule_answer_before_python(guarded_page, site):
    """A page whose Python is held back still answers the race slider and the schedule picker (build tables)."""
    p = open_without_python(guarded_page, site + PAGE, "c5-race")
    before = updates(p, "c5-race")
    p.eval_on_selector('[data-testid="c5-race-k"]', "s => { s.value = '0'; s.dispatchEvent(new Event('input')); }")
    wait_update(p, "c5-race", before)
    assert p.eval_on_selector(".c5-race-label", "n => n.textContent") == "×1/27"
    before = updates(p, "c5-schedule")
    p.select_option('[data-testid="c5-sched-warmup"]', "0")
    wait_update(p, "c5-schedule", before)
    assert "不预热" in p.eval_on_selector(".c5-sched-readout", "n => n.textContent")


def test_race_is_answered_by_python_from_the_published_runs(guarded_page, site):
    """Without the build's answers (no DecompressionStream), the race's call goes to Python, which is sent the
    stored race from the published data/train_runs.json: the same rows as CPython's."""
    p = guarded_page
    p.add_init_script("delete window.DecompressionStream;" + COUNT_UPDATES)
    fetched = []
    p.on("request", lambda r: fetched.append(r.url) if r.url.endswith("/data/train_runs.json") else None)
    p.goto(site + PAGE)
    p.wait_for_selector(".widget[data-widget=c5-race][data-mounted]", state="attached")
    before = updates(p, "c5-race")
    p.eval_on_selector('[data-testid="c5-race-k"]', "s => { s.value = '5'; s.dispatchEvent(new Event('input')); }")
    wait_update(p, "c5-race", before)
    assert p.eval_on_selector(".c5-race-label", "n => n.textContent") == "×9"
    want = C5.race(2, json.loads((ROOT / "data" / "train_runs.json").read_text(encoding="utf-8"))["race"])["rows"]
    assert table(p, ".c5-race-rows") == [[r["name"], r["lr"], r["final"], r["held_out"]] for r in want]
    assert len(fetched) == 1 and p.evaluate("window.courseWidgets.answered.python") >= 1


def test_phone_width_and_axe_while_training(guarded_pages, site):
    from test_quality_browser import _axe, _serious
    p = guarded_pages(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    p.goto(site + PAGE)
    p.wait_for_function("() => !document.querySelector('[data-testid=c5-live-start]').disabled")
    p.tap('[data-testid="c5-live-start"]')
    wait_steps(p, 2)
    pause(p)
    scroll = p.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll[0] <= scroll[1], f"scrolls sideways at 375 px: {scroll}"
    problems = _serious(_axe(p), PAGE)
    assert not problems, "\n".join(problems)


def test_leaving_the_page_stops_the_training(guarded_page, site):
    p = guarded_page
    p.goto(site + PAGE)
    p.wait_for_function("() => !document.querySelector('[data-testid=c5-live-start]').disabled")
    click(p, "c5-live-start")
    wait_steps(p, 1)
    # training runs in the page's one Python (training.js): no worker of its own
    assert [w.url.rsplit("/", 1)[-1] for w in p.workers] == ["worker.js"]
    p.evaluate("() => window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))")
    # back on the page, the run has stopped and 开始 starts a fresh one
    p.wait_for_function("() => document.querySelector('.c5-live').dataset.state === 'error'", timeout=TRAIN_MS)
    click(p, "c5-live-start")
    p.wait_for_function("() => document.querySelector('.c5-live').dataset.state === 'running'", timeout=TRAIN_MS)
    wait_steps(p, 1)
    pause(p)
    ys = live_series(p)
    assert len(ys) == step(p) and ys[0] > 7.0          # a fresh model's first loss, ~ln(vocabulary)
