"""Lesson C3's widgets in real headless Chromium, against CPython's calculators for the same inputs.

With the runtime held back, another model and another context answer from the build's states, and so do another
layer and head of the attention map (the heatmap changes) and the mask switch (the stored curves change); with
Python ready, another sentence's map equals CPython's, the training panel trains the chosen arm (its step counter
moves, its live curve is drawn over the stored ones), and decoding with and without the KV cache is timed in the
page, both ways shown, the same characters. Bad input (an empty or too long sentence) shows one Chinese line from
the message table and the widget keeps working. At 375 px the page does not scroll sideways. Every wait is on a
condition, never on time.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import change, open_lesson, open_without_python, text, updates, wait_update
from experiments.lessons.c3_attention import calc, trained

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c3-attention.html"
KV, MAPS, MASK, CACHE = ".c3-kv", ".c3-maps", ".c3-mask", ".c3-cache"
SPEAKER = json.loads((ROOT / "data" / "train_speaker.json").read_text(encoding="utf-8"))
ATTN = json.loads((ROOT / "data" / "train_attention.json").read_text(encoding="utf-8"))
MESSAGES = json.loads((ROOT / "data" / "messages_zh.json").read_text(encoding="utf-8"))
TRAIN_MS = 240_000           # generous: the machine running the tests may be busy


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c3-sentence", '[data-testid="c3-start"]', ".c3-run")


def spec(page, root: str) -> dict:
    return json.loads(page.eval_on_selector(f"{root} figure.chart script.chart-spec", "n => n.textContent"))


def test_built_answers_before_python(guarded_page, site):
    p = open_without_python(guarded_page, site + PAGE, "c3-mask")
    for control, value, model_id, context in ((".c3-context", "131072", "llama-2-70b", "131072"),
                                              (".c3-context", "4096", "llama-2-70b", "4096"),
                                              (".c3-model", "deepseek_v3", "deepseek-v3", "4096")):
        before = updates(p, "c3-kv")
        p.select_option(f"{KV} {control}", value)
        wait_update(p, "c3-kv", before)
        want = calc.kv(cfg(model_id), context)
        assert text(p, KV, "c3-per-token") == want["per_token"] and text(p, KV, "c3-sequence") == want["sequence"]
    first = spec(p, MAPS)["z"]                                   # the heatmap changes with the head and the layer
    before = updates(p, "c3-maps")
    p.select_option(f"{MAPS} .c3-head", "3")
    wait_update(p, "c3-maps", before)
    third = spec(p, MAPS)
    assert third["z"] != first and third["z"] == trained.maps("学而时习之，不亦说乎？", "2", "3", SPEAKER)["chart"]["z"]
    before = updates(p, "c3-maps")
    p.select_option(f"{MAPS} .c3-layer", "1")
    wait_update(p, "c3-maps", before)
    assert spec(p, MAPS)["z"] not in (first, third["z"])
    causal = trained.mask("0", ATTN)                              # the switch changes the stored curves
    before = updates(p, "c3-mask")
    p.select_option(f"{MASK} .c3-leak", "0")
    wait_update(p, "c3-mask", before)
    assert text(p, MASK, "c3-train") == causal["train"] and text(p, MASK, "c3-held") == causal["held"]
    assert spec(p, MASK)["series"][0]["y"] == causal["chart"]["series"][0]["y"]


def test_heatmap_is_drawn(page):
    page.locator(f"{MAPS} figure.chart").scroll_into_view_if_needed()
    page.wait_for_selector(f"{MAPS} figure.chart.drawn")
    assert page.eval_on_selector(f"{MAPS} figure.chart .chart-plot", "n => n.querySelectorAll('.point').length") > 0


def test_another_sentence_asks_python(page):
    change(page, MAPS, {".c3-sentence": "君子不器", ".c3-layer": "1", ".c3-head": "2"}, ".c3-sentence")
    want = trained.maps("君子不器", "1", "2", SPEAKER)
    assert spec(page, MAPS)["z"] == want["chart"]["z"] and text(page, MAPS, "c3-last") == want["last"]


def test_bad_input_is_one_chinese_line(page):
    error = page.locator(f"{MAPS} > .widget-error")
    change(page, MAPS, {".c3-sentence": ""}, ".c3-sentence")
    assert error.is_visible() and MESSAGES["c3.empty"] in error.inner_text()
    long = "学" * (SPEAKER["context"] + 1)
    change(page, MAPS, {".c3-sentence": long}, ".c3-sentence")
    assert error.is_visible() and MESSAGES["c3.too_long"].format(
        got=SPEAKER["context"] + 1, max=SPEAKER["context"]) in error.inner_text()
    change(page, MAPS, {".c3-sentence": "学而", ".c3-layer": "1", ".c3-head": "2"}, ".c3-sentence")
    assert not error.is_visible()
    assert spec(page, MAPS)["z"] == trained.maps("学而", "1", "2", SPEAKER)["chart"]["z"]


def test_cache_and_no_cache_both_timed(page):
    before = updates(page, "c3-cache")
    page.fill(f"{CACHE} .c3-new", "24")
    page.click(f"{CACHE} .c3-run")
    wait_update(page, "c3-cache", before)
    page.wait_for_function("() => document.querySelector('[data-testid=\"c3-tps-full\"]').textContent !== '—'")
    want = trained.decode_text("子曰：", "24", SPEAKER)
    assert text(page, CACHE, "c3-text") == want["text"] == text(page, CACHE, "c3-text-full")
    assert text(page, CACHE, "c3-same") == "一样"
    assert float(text(page, CACHE, "c3-tps-cached")) > 0 and float(text(page, CACHE, "c3-tps-full")) > 0


def test_the_switch_trains_the_chosen_arm(page):
    change(page, MASK, {".c3-leak": "1"}, ".c3-leak")
    page.click('[data-testid="c3-start"]')
    page.wait_for_function("() => Number(document.querySelector('[data-testid=\"c3-step\"]').textContent) >= 3",
                           timeout=TRAIN_MS)
    page.click('[data-testid="c3-pause"]')
    page.wait_for_function("() => window.courseTraining.inflight === 0", timeout=TRAIN_MS)
    live = spec(page, MASK)["series"][0]
    assert live["color"] == "#d62728" and len(live["x"]) >= 3
    assert float(text(page, MASK, "c3-loss")) < 8
    page.click('[data-testid="c3-reset"]')
    page.wait_for_function("() => document.querySelector('.c3-mask').dataset.state === 'idle'")


def test_phone_width(guarded_pages, site):
    p = guarded_pages(viewport={"width": 375, "height": 800}, is_mobile=True)
    p.goto(site + PAGE)
    p.wait_for_selector(".widget[data-widget=c3-cache][data-mounted]", state="attached")
    assert p.evaluate("document.documentElement.scrollWidth") <= 375
