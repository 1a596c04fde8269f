"""Lesson C14's widgets in real headless Chromium, compared with CPython's calculators for the same inputs.

The course is built once and served on 127.0.0.1; guarded pages (console errors, page errors and non-local
requests fail the test) load the lesson. Controls the build answered (each listed model, device, scheme, cache
precision and context; each gamma; the batching comparison's devices) answer before Python is ready; a typed
batch, a pasted config, another seed and the batching comparison's other models ask Python in the page, and
every [data-f] field the page shows equals what calc.py gives here. Bad input in each free field shows one Chinese
line. At 375 px the page does not scroll sideways.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import change, open_lesson, open_without_python, updates, wait_update
from experiments.lessons.c14_inference import calc

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c14-inference.html"
SERVE, SPEC = ".c14-serve", ".c14-speculate"


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


def doc(name: str) -> dict:
    return json.loads((ROOT / "data" / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c14-batch", ".c14-seed")


def shown(page, root: str) -> dict:
    """Every data-f field outside rows, by its key, and the rows of each table."""
    return page.eval_on_selector(root, """r => ({
      fields: Object.fromEntries([...r.querySelectorAll('[data-f]')].filter(n => !n.closest('[data-each]'))
        .map(n => [n.dataset.f, n.textContent.trim()])),
      rows: [...r.querySelectorAll('tbody')].map(b => [...b.rows]
        .map(t => [...t.cells].map(c => c.textContent.trim())))})""")


def flat(x: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in x.items():
        if isinstance(v, dict):
            out.update(flat(v, prefix + k + "."))
        elif not isinstance(v, list):
            out[prefix + k] = v
    return out


def expect_serve(page, want: dict) -> None:
    got = shown(page, SERVE)
    want_fields = flat(want)
    keys = [k for k in got["fields"] if k in want_fields]
    assert len(keys) >= 20
    assert {k: got["fields"][k] for k in keys} == {k: want_fields[k] for k in keys}
    assert got["rows"][0] == [[r[k] for k in ("batch", "t_step", "tps_user", "tps", "bound", "fits")]
                              for r in want["batches"]]
    assert got["rows"][1] == [[r[k] for k in ("context", "bf16", "bf16_seqs", "fp8", "fp8_seqs")]
                              for r in want["contexts"]]
    assert got["rows"][2] == [[r[k] for k in ("scheme", "bits", "weights", "t_step", "tps_user", "speedup", "bound")]
                              for r in want["schemes"]]


def test_built_answers_before_python(guarded_page, site):
    """With the runtime held back, choosing another model and another device still answers (the build's states)."""
    p = open_without_python(guarded_page, site + PAGE, "c14-serve")
    before = updates(p, "c14-serve")
    p.select_option(f"{SERVE} .c14-model", "qwen3_30b_a3b")
    wait_update(p, "c14-serve", before)
    expect_serve(p, calc.serve(cfg("qwen3-30b-a3b"), "80", "BF16", "BF16", "4096", "16", "1000"))
    before = updates(p, "c14-serve")
    p.select_option(f"{SERVE} .c14-model", "qwen3_8b")
    wait_update(p, "c14-serve", before)
    before = updates(p, "c14-serve")
    p.select_option(f"{SERVE} .c14-device", "141")
    wait_update(p, "c14-serve", before)
    expect_serve(p, calc.serve(cfg("qwen3-8b"), "141", "BF16", "BF16", "4096", "16", "1000"))
    assert "c14-serve.device=141" in p.url


def test_typed_batch_and_bad_input(page):
    change(page, SERVE, {".c14-device": "80", ".c14-batch": "48", ".c14-used": "2500"}, ".c14-batch")
    expect_serve(page, calc.serve(cfg("qwen3-8b"), "80", "BF16", "BF16", "4096", "48", "2500"))
    assert "c14-serve.batch=48" in page.url
    error = page.locator(f"{SERVE} > .widget-error")
    change(page, SERVE, {".c14-batch": "abc"}, ".c14-batch")
    assert error.is_visible() and "批大小：需要一个整数" in error.inner_text() and "Error" not in error.inner_text()
    change(page, SERVE, {".c14-batch": "16", ".c14-used": "999999"}, ".c14-used")
    assert error.is_visible() and "实际用到的长度" in error.inner_text()
    change(page, SERVE, {".c14-used": "1000"}, ".c14-used")
    assert not error.is_visible()


def test_pasted_config(page):
    page.eval_on_selector(f"{SERVE} .c14-paste", "d => d.open = true")
    before = updates(page, "c14-serve")
    page.fill(f"{SERVE} .c14-config", json.dumps(cfg("llama-2-7b")))
    page.click(f"{SERVE} .c14-use-config")
    wait_update(page, "c14-serve", before)
    expect_serve(page, calc.serve(cfg("llama-2-7b"), "80", "BF16", "BF16", "4096", "16", "1000"))
    assert "c14-serve.model" not in page.url
    before = updates(page, "c14-serve")
    page.fill(f"{SERVE} .c14-config", '{"model_type": "llama", "hidden_size": -5}')
    page.click(f"{SERVE} .c14-use-config")
    wait_update(page, "c14-serve", before)
    error = page.locator(f"{SERVE} > .widget-error").inner_text()
    assert "这份 config 有问题" in error and "hidden_size" in error
    change(page, SERVE, {".c14-model": "qwen3_8b"}, ".c14-model")


CB = ".c14-batching"


def expect_batching(page, want: dict) -> None:
    got = shown(page, CB)
    keys = [k for k in got["fields"] if k in want and not isinstance(want[k], list)]
    assert len(keys) >= 12
    assert {k: got["fields"][k] for k in keys} == {k: want[k] for k in keys}
    assert got["rows"][0] == [[r[k] for k in ("way", "limit", "mean_batch", "idle", "tps", "seconds")]
                              for r in want["ways"]]


def test_batching_built_then_in_the_page(guarded_page, site):
    """The batching comparison's first state and another device answer with the runtime held back (the build's)."""
    p = open_without_python(guarded_page, site + PAGE, "c14-batching")
    expect_batching(p, calc.batching(cfg("qwen3-8b"), "80", "256", "0"))
    before = updates(p, "c14-batching")
    p.select_option(f"{CB} .c14-cb-device", "40")
    wait_update(p, "c14-batching", before)
    expect_batching(p, calc.batching(cfg("qwen3-8b"), "40", "256", "0"))
    assert "c14-batching.device=40" in p.url


def test_batching_asks_python(page):
    """Another model, a typed batch limit and another seed ask Python, which equals CPython; a batch limit below
    the bound is one Chinese line."""
    change(page, CB, {".c14-cb-model": "llama7b", ".c14-cb-device": "80", ".c14-cb-batch": "100",
                      ".c14-cb-seed": "5"}, ".c14-cb-seed")
    expect_batching(page, calc.batching(cfg("llama-2-7b"), "80", "100", "5"))
    error = page.locator(f"{CB} > .widget-error")
    change(page, CB, {".c14-cb-batch": "3"}, ".c14-cb-batch")
    assert error.is_visible() and "批大小上限" in error.inner_text() and "Error" not in error.inner_text()
    change(page, CB, {".c14-cb-model": "qwen3_8b", ".c14-cb-batch": "256", ".c14-cb-seed": "0"}, ".c14-cb-batch")
    assert not error.is_visible()


def spec_shown(page) -> dict:
    return page.eval_on_selector(SPEC, """r => ({
      fields: Object.fromEntries([...r.querySelectorAll('[data-f]')].filter(n => !n.closest('[data-each]'))
        .map(n => [n.dataset.f, n.textContent])),
      steps: [...r.querySelectorAll('.c14-spec-text .c14-step')]
        .map(s => [s.children[0].textContent, s.children[1].textContent])})""")


def test_speculative_run_in_the_page_equals_cpython(page):
    speaker, spec = doc("train_speaker"), doc("train_speculative")
    change(page, SPEC, {".c14-gamma": "3"}, ".c14-gamma")             # answered by the build
    want = calc.speculate("子曰：“", "3", "0", speaker, spec)
    got = spec_shown(page)
    assert got["steps"] == [[s["accepted"], s["own"]] for s in want["steps"]]
    assert {k: got["fields"][k] for k in ("n_tokens", "n_steps", "per_step", "alpha", "expected")} == \
        {k: want[k] for k in ("n_tokens", "n_steps", "per_step", "alpha", "expected")}
    change(page, SPEC, {".c14-seed": "7"}, ".c14-seed")               # numpy in the page's worker
    want = calc.speculate("子曰：“", "3", "7", speaker, spec)
    got = spec_shown(page)
    assert got["steps"] == [[s["accepted"], s["own"]] for s in want["steps"]]
    assert got["fields"]["per_step"] == want["per_step"] and "c14-speculate.seed=7" in page.url
    change(page, SPEC, {".c14-seed": "-3"}, ".c14-seed")
    error = page.locator(f"{SPEC} > .widget-error")
    assert error.is_visible() and "随机种子" in error.inner_text()
    change(page, SPEC, {".c14-seed": "0"}, ".c14-seed")
    assert not error.is_visible()


def test_phone_width(guarded_pages, site):
    p = guarded_pages(viewport={"width": 375, "height": 800}, is_mobile=True)
    p.goto(site + PAGE)
    p.wait_for_selector(".widget[data-widget=c14-speculate][data-mounted]", state="attached")
    assert p.evaluate("document.documentElement.scrollWidth") <= 375
    assert p.eval_on_selector(SERVE, "r => r.getBoundingClientRect().right") <= 375
