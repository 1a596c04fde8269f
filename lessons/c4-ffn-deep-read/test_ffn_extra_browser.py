"""The FFN deep read's three added widgets in real headless Chromium, checked against CPython's extra.py.

The course is built from the repo into a temporary folder and served on 127.0.0.1; one guarded page (console errors,
page errors and requests to other hosts fail the module) loads the lesson. Each test changes a control the way a
learner would, waits for the widget's "course:updated" event and compares what it shows with what
this folder's extra.py answers in CPython for the same inputs, string for string.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from browser_fixtures import open_lesson, table, text, updates, wait_update
from experiments.lessons.c4_ffn_deep_read import extra
from sitegen.models import load_model

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c4-ffn-deep-read.html"



def _config(model_id: str) -> dict:
    return load_model(ROOT / "data" / "models" / model_id)["config"]


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".pd-model", ".sf-m", ".dw-L")




def test_prefill_decode_follows_its_controls(page):
    root = ".ffn-prefill-decode"
    before = updates(page, "ffn-prefill-decode")
    page.evaluate("""() => { const r = document.querySelector('.ffn-prefill-decode');
      r.querySelector('.pd-prompt').value = '8192'; r.querySelector('.pd-batch').value = '64';
      r.querySelector('.pd-dtype').value = 'INT4'; }""")
    page.select_option(f"{root} .pd-model", "llama70b")
    wait_update(page, "ffn-prefill-decode", before)
    want = extra.prefill_decode(_config("llama-2-70b"), "INT4", "3.35", "989.4", 8192, 64)
    for side, prefix in (("prefill", "pd-pre"), ("decode", "pd-dec")):
        for key, testid in (("tokens", "tokens"), ("read", "read"), ("flops", "flops"), ("intensity", "intensity"),
                            ("t_mem", "tmem"), ("t_compute", "tcmp"), ("bound", "bound"), ("use", "use"),
                            ("tok_s", "tps")):
            assert text(page, root, f"{prefix}-{testid}") == want[side][key], (side, key)
    assert text(page, root, "pd-ridge") == want["ridge"] and text(page, root, "pd-crossover") == want["crossover"]
    assert text(page, root, "pd-speedup") == want["speedup"]
    assert table(page, ".pd-rows") == [[r["tokens"], r["intensity"], r["t_mem"], r["t_compute"], r["tok_s"], r["bound"]]
                                       for r in want["rows"]]
    assert "ffn-prefill-decode.model=llama70b" in page.url


def test_prefill_decode_bad_input_shows_an_inline_error(page):
    root = ".ffn-prefill-decode"
    before = updates(page, "ffn-prefill-decode")
    page.fill(f"{root} .pd-prompt", "0")
    page.dispatch_event(f"{root} .pd-prompt", "change")
    wait_update(page, "ffn-prefill-decode", before)
    error = page.eval_on_selector(f"{root} > .widget-error", "n => n.hidden ? '' : n.textContent")
    assert "提示词长度" in error
    before = updates(page, "ffn-prefill-decode")
    page.fill(f"{root} .pd-prompt", "2048")
    page.dispatch_event(f"{root} .pd-prompt", "change")
    wait_update(page, "ffn-prefill-decode", before)
    assert page.eval_on_selector(f"{root} > .widget-error", "n => n.hidden")


def test_share_formula_switches_the_curve(page):
    root = ".ffn-share-formula"
    points = page.evaluate("() => JSON.parse(document.querySelector('script.sf-points').textContent)")
    before = updates(page, "ffn-share-formula")
    page.select_option(f"{root} .sf-kv", "1/8")
    wait_update(page, "ffn-share-formula", before)
    want = extra.share_chart(3, "1/8", points)
    for testid, key in (("sf-attn", "attn_d2"), ("sf-r23", "r_two_thirds"), ("sf-r50", "r_half"),
                        ("sf-on", "on_curve")):
        assert text(page, root, testid) == want[key], testid
    assert "Llama" in want["on_curve"]
    spec = page.evaluate("() => JSON.parse(document.querySelector('.ffn-share-formula script.chart-spec').textContent)")
    assert spec["series"][0]["name"] == want["chart"]["series"][0]["name"]
    assert spec["series"][1]["text"] == want["chart"]["series"][1]["text"]
    before = updates(page, "ffn-share-formula")
    page.select_option(f"{root} .sf-m", "2")
    wait_update(page, "ffn-share-formula", before)
    assert text(page, root, "sf-r23") == extra.share_chart(2, "1/8", points)["r_two_thirds"]


def test_depth_width_slider(page):
    root = ".ffn-depth-width"
    budget = int(page.eval_on_selector(f"{root} .dw-budget", "n => n.value"))
    before = updates(page, "ffn-depth-width")
    page.eval_on_selector(f"{root} .dw-L", "n => { n.value = '64'; n.dispatchEvent(new Event('input')); }")
    wait_update(page, "ffn-depth-width", before)
    want = extra.depth_width(budget, 64, 4096)
    now = want["now"]
    for testid, key in (("dw-d", "d"), ("dw-heads", "heads"), ("dw-dff", "d_ff"), ("dw-total", "total"),
                        ("dw-off", "off"),
                        ("dw-share-layer", "share_layer"), ("dw-share-total", "share_total"), ("dw-emb", "emb_share"),
                        ("dw-score", "score"), ("dw-score-ratio", "score_vs_ffn"), ("dw-cross", "crossover"),
                        ("dw-kv", "kv"), ("dw-kv-T", "kv_T"), ("dw-L-out", "L")):
        assert text(page, root, testid) == now[key], testid
    assert now["d"] == "2,944"
    before = updates(page, "ffn-depth-width")
    page.fill(f"{root} .dw-T", "32768")
    page.dispatch_event(f"{root} .dw-T", "change")
    wait_update(page, "ffn-depth-width", before)
    want = extra.depth_width(budget, 64, 32768)
    assert text(page, root, "dw-score-ratio") == want["now"]["score_vs_ffn"]
    assert table(page, ".dw-rows") == [[r["L"], r["d"], r["d_ff"], r["total"], r["share_total"], r["score_vs_ffn"],
                                        r["crossover"], r["kv"]] for r in want["rows"]]
    assert "ffn-depth-width.T=32768" in page.url
