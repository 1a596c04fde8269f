"""The FFN deep-read lesson's six experiments in real headless Chromium, checked against CPython's experiments.ffn.

The whole course is built from the repo into a temporary folder (build.build: pages, Pyodide + numpy, the
experiments zip, data/models.json) and served on 127.0.0.1. One guarded page (console errors, page errors and
non-local requests fail the module) loads the lesson; each test drives one widget the way a learner would, waits
for the widget's "course:updated" event and compares every number it shows with what experiments.ffn computes in
CPython for the same inputs, string for string. The INT4 probe must give the same strings AND the same float reprs
(bit-identical) in the browser as at build time and in CPython, for the same seed.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import COUNT_UPDATES, open_lesson, table, text, updates, wait_runtime_ready, wait_update
from experiments.lessons.c4_ffn_deep_read import calc as ffn
from sitegen.models import load_model

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c4-ffn-deep-read.html"



def _doc(model_id: str) -> dict:
    return load_model(ROOT / "data" / "models" / model_id)


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".q-run", ".sw-d")




def set_values(page, root: str, values: dict) -> None:
    """Set controls without firing events (the test then fires one change, so exactly one update runs)."""
    page.evaluate("""([root, values]) => {
      const r = document.querySelector(root);
      for (const [sel, v] of Object.entries(values)) {
        const c = r.querySelector(sel);
        if (c.type === "checkbox") c.checked = Boolean(v); else c.value = String(v);
      }
    }""", [root, values])


def fire_change(page, root: str, selector: str) -> None:
    page.evaluate("([root, sel]) => document.querySelector(root).querySelector(sel)"
                  ".dispatchEvent(new Event('change'))", [root, selector])


# -- SwiGLU budget explorer ----------------------------------------------------------------------------------------
def test_swiglu_budget(page):
    root = ".ffn-swiglu"
    known = json.loads(page.eval_on_selector(root, "n => n.dataset.known"))
    before = updates(page, "ffn-swiglu")
    set_values(page, root, {".sw-d": 1024, ".sw-ratio": "3.5", ".sw-matrices": 3, ".sw-align": 128})
    fire_change(page, root, ".sw-d")
    wait_update(page, "ffn-swiglu", before)
    b = ffn.swiglu_budget(1024, "3.5", 3, 128, known)
    for testid, key in (("sw-dff", "d_ff"), ("sw-nominal", "nominal"), ("sw-ffn", "ffn"), ("sw-vs", "vs_8d2"),
                        ("sw-over", "over_8d2"), ("sw-share", "layer_share")):
        assert text(page, root, testid) == b["mine"][key], testid
    assert text(page, root, "sw-8d2") == b["eight_d2"] and text(page, root, "sw-attn") == b["attn"]
    assert table(page, ".sw-refs") == [[r["label"], str(r["matrices"]), r["d_ff"], r["ffn"], r["vs_8d2"],
                                        r["over_8d2"], r["layer_share"]] for r in b["refs"]]
    assert table(page, ".sw-alignment") == [[r["d"], r["nominal"], r["d_ff"], r["added"], r["error"], r["models"]]
                                            for r in b["alignment"]]
    fam = ffn.config_family(ffn.FAMILY, "3.5", 128)
    assert table(page, ".sw-family") == [[str(r["L"]), r["d"], r["d_ff"], r["width"], r["share_layer"],
                                          r["share_total"], r["total"]] for r in fam["rows"]]
    assert "ffn-swiglu-budget.ratio=3.5" in page.url and "ffn-swiglu-budget.d=1024" in page.url


def test_swiglu_state_from_the_url(module_guard, site):
    p = module_guard.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.goto(site + PAGE + "?ffn-swiglu-budget.d=2048&ffn-swiglu-budget.ratio=4"
                         "&ffn-swiglu-budget.matrices=2&ffn-swiglu-budget.align=1")
    wait_runtime_ready(p)
    p.wait_for_function("() => (window.__updates['ffn-swiglu'] || 0) > 0", timeout=60_000)
    b = ffn.swiglu_budget(2048, "4", 2, 1)
    assert text(p, ".ffn-swiglu", "sw-dff") == b["mine"]["d_ff"] == "8,192"
    assert text(p, ".ffn-swiglu", "sw-share") == b["mine"]["layer_share"] == "66.7%"
    p.close()


# -- memory and decode ---------------------------------------------------------------------------------------------
def _memory_matches(page, expected: dict, series: dict) -> None:
    root = ".ffn-memory"
    for testid, key in (("mem-params", "params"), ("mem-weights-gb", "weights"), ("mem-ffn-gb", "ffn_weights"),
                        ("mem-ffn-share", "ffn_share"), ("mem-read", "read"), ("mem-read-ffn", "read_ffn_share"),
                        ("mem-tmem", "t_mem"), ("mem-tcmp", "t_compute"), ("mem-tstep", "t_step"),
                        ("mem-bound", "bound"), ("mem-tps", "tok_s_stream"), ("mem-tps-total", "tok_s_total"),
                        ("mem-takeover", "takeover")):
        assert text(page, root, testid) == expected[key], testid
    assert table(page, ".mem-batches") == [[r["batch"], r["t_step"], r["tok_s_stream"], r["tok_s_total"], r["bound"]]
                                           for r in series["rows"]]


def test_memory_calculator_moe_model(page):
    root = ".ffn-memory"
    before = updates(page, "ffn-memory")
    page.select_option(f"{root} .mem-gpu", "a100")            # the preset fills bandwidth and peak, then updates
    wait_update(page, "ffn-memory", before)
    assert page.input_value(f"{root} .mem-bw") == "2.039" and page.input_value(f"{root} .mem-peak") == "312"
    before = updates(page, "ffn-memory")
    set_values(page, root, {".mem-model": "qwen3_30b_a3b", ".mem-dtype": "INT4", ".mem-batch": 64})
    fire_change(page, root, ".mem-batch")
    wait_update(page, "ffn-memory", before)
    cfg = _doc("qwen3-30b-a3b")["config"]
    _memory_matches(page, ffn.decode(cfg, "INT4", "2.039", 64, "312"), ffn.batch_series(cfg, "INT4", "2.039", "312"))
    assert "ffn-memory.model=qwen3_30b_a3b" in page.url


def test_memory_calculator_pasted_config(page):
    root = ".ffn-memory"
    page.click(f"{root} .mem-paste summary")
    page.fill(f"{root} .mem-config", json.dumps(_doc("llama-2-13b")))   # a data/ file: {meta, config}
    before = updates(page, "ffn-memory")
    set_values(page, root, {".mem-dtype": "FP16", ".mem-batch": 1, ".mem-bw": "3.35", ".mem-peak": "989.4"})
    page.click(f"{root} .mem-use-config")
    wait_update(page, "ffn-memory", before)
    cfg = _doc("llama-2-13b")["config"]
    _memory_matches(page, ffn.decode(cfg, "FP16", "3.35", 1, "989.4"), ffn.batch_series(cfg, "FP16", "3.35", "989.4"))
    assert text(page, root, "mem-weights-gb") == "26.0 GB"


def test_memory_calculator_bad_pasted_config_is_named_in_chinese(page):
    """Bad JSON and a config the engine refuses: an inline Chinese message, the same CPython gives (issue #13:
    no English, no exception class), then a good config computes again."""
    root = ".ffn-memory"
    error = page.locator(f"{root} .mem-error")
    if not page.locator(f"{root} .mem-config").is_visible():
        page.click(f"{root} .mem-paste summary")
    good = _doc("llama-2-13b")["config"]
    set_values(page, root, {".mem-dtype": "FP16", ".mem-batch": 1, ".mem-bw": "3.35", ".mem-peak": "989.4"})
    for pasted in ('{"model_type": "llama",', json.dumps(dict(good, num_key_value_heads=7)), '{"model_type": "bert"}'):
        with pytest.raises(ValueError) as e:
            ffn.decode(pasted, "FP16", "3.35", 1, "989.4")
        page.fill(f"{root} .mem-config", pasted)
        page.click(f"{root} .mem-use-config")
        page.wait_for_function("([sel, want]) => document.querySelector(sel).textContent.includes(want)",
                               arg=[f"{root} .mem-error", str(e.value)], timeout=60_000)
        shown = error.inner_text()
        assert shown.startswith("计算失败：这份 config 有问题：") and "Error" not in shown and "expected" not in shown
    assert "键 'model_type'：应为本课程支持的模型家族之一" in shown
    before = updates(page, "ffn-memory")
    page.fill(f"{root} .mem-config", json.dumps(good))
    page.click(f"{root} .mem-use-config")
    wait_update(page, "ffn-memory", before)
    assert error.is_hidden() and text(page, root, "mem-weights-gb") == "26.0 GB"


# -- training memory -----------------------------------------------------------------------------------------------
def test_training_memory(page):
    root = ".ffn-training"
    before = updates(page, "ffn-training")
    set_values(page, root, {".tr-model": "llama70b", ".tr-recipe": "mixed_adamw_8bit", ".tr-batch": 8,
                            ".tr-seq": 2048, ".tr-ckpt": True})
    fire_change(page, root, ".tr-ckpt")
    wait_update(page, "ffn-training", before)
    t = ffn.training_memory(_doc("llama-2-70b")["config"], "mixed_adamw_8bit", 8, 2048, True)
    for key in ("params", "per_param", "states", "ffn_states", "ffn_share", "tokens", "act_full", "act_ckpt", "total"):
        assert text(page, root, "tr-" + key.replace("_", "-")) == t[key], key
    assert text(page, root, "tr-act") == t["activations"] == t["act_ckpt"]
    assert table(page, ".tr-parts") == [[r["label"], r["bytes"], r["total"]] for r in t["rows"]]
    assert table(page, ".tr-recipes") == [[r["label"], r["bytes"], r["total"]] for r in t["recipes"]]


# -- FLOPs and GPU-days --------------------------------------------------------------------------------------------
def test_flops(page):
    root = ".ffn-flops"
    chin = page.eval_on_selector(f"{root} .fl-readout", "n => n.dataset.chinchilla")
    before = updates(page, "ffn-flops")
    set_values(page, root, {".fl-model": "deepseek_v3", ".fl-tokens": "14800", ".fl-tflops": "350", ".fl-gpus": 2048})
    fire_change(page, root, ".fl-gpus")
    wait_update(page, "ffn-flops", before)
    f = ffn.flops_budget(_doc("deepseek-v3")["config"], "14800", "350", 2048, chin)
    for testid, key in (("fl-params", "params"), ("fl-active", "active"), ("fl-fwd", "fwd"),
                        ("fl-fwd-matmul", "fwd_matmul"), ("fl-ffn-share", "ffn_flops_share"), ("fl-train", "train"),
                        ("fl-D", "tokens"), ("fl-gpu-days", "gpu_days"), ("fl-gpus-out", "gpus"),
                        ("fl-wall", "wall_days"), ("fl-tpp", "tokens_per_param"),
                        ("fl-chin-tokens", "chinchilla_tokens")):
        assert text(page, root, testid) == f[key], testid
    assert chin == "20"


# -- MoE explorer --------------------------------------------------------------------------------------------------
def test_moe_explorer(page):
    root = ".ffn-moe"
    before = updates(page, "ffn-moe")
    page.select_option(f"{root} .moe-model", "deepseek_v3")    # takes DeepSeek-V3's own experts / top-k / width
    wait_update(page, "ffn-moe", before)
    assert page.input_value(f"{root} .moe-experts") == "256"
    before = updates(page, "ffn-moe")
    set_values(page, root, {".moe-experts": 64, ".moe-top-k": 6})
    fire_change(page, root, ".moe-top-k")
    wait_update(page, "ffn-moe", before)
    x = ffn.moe_explore(_doc("deepseek-v3")["config"], 64, 6, 2048)
    assert [row[1:] for row in table(page, ".moe-compare")] == [
        [f"{x['base']['experts']} / {x['base']['top_k']} / {x['base']['width']}",
         f"{x['now']['experts']} / {x['now']['top_k']} / {x['now']['width']}"],
        [x["base"]["total"], x["now"]["total"]], [x["base"]["active"], x["now"]["active"]],
        [x["base"]["ratio"], x["now"]["ratio"]], [x["base"]["ffn_share_total"], x["now"]["ffn_share_total"]],
        [x["base"]["ffn_share_active"], x["now"]["ffn_share_active"]],
        [x["base"]["weights_bf16"], x["now"]["weights_bf16"]], [x["base"]["active_bf16"], x["now"]["active_bf16"]]]
    # top-k above the expert count is refused with a message, and the table keeps the last good state
    set_values(page, root, {".moe-top-k": 100})
    fire_change(page, root, ".moe-top-k")
    page.wait_for_selector(f"{root} .moe-error:not([hidden])")
    assert "不能多于" in page.text_content(f"{root} .moe-error")


# -- INT4 probe: build time == browser == CPython, for the same seed --------------------------------------------------
def _probe_rows(p: dict) -> list[list[str]]:
    return [[g["group_label"], g["bits"], g["rms"], g["rel"], g["rel_normal"], g["rel_plain"]] for g in p["groups"]]


def _raw(page) -> list[dict]:
    return page.eval_on_selector_all(".q-table tbody tr", "rows => rows.map(r => JSON.parse(r.dataset.raw))")


def test_int4_probe_build_time_equals_browser_equals_cpython(page):
    root = ".ffn-int4"
    expected = ffn.int4_probe(1024, 64, "1", "10", 0)
    built_rows, built_raw = table(page, ".q-table"), _raw(page)                   # the build-time page
    assert built_rows == _probe_rows(expected)
    assert built_raw == [g["raw"] for g in expected["groups"]]
    before = updates(page, "ffn-int4")
    page.click(f"{root} .q-run")                                                   # numpy in the page, same seed
    wait_update(page, "ffn-int4", before)
    assert text(page, root, "q-status") == "以下是刚才在浏览器里算出的结果。"
    assert table(page, ".q-table") == built_rows
    assert _raw(page) == built_raw
    assert text(page, root, "q-checksum") == expected["checksum"]


def test_int4_probe_other_seed_matches_cpython(page):
    root = ".ffn-int4"
    before = updates(page, "ffn-int4")
    set_values(page, root, {".q-rows": 512, ".q-cols": 32, ".q-pct": "2.5", ".q-scale": "20", ".q-seed": 7})
    fire_change(page, root, ".q-seed")
    wait_update(page, "ffn-int4", before)
    expected = ffn.int4_probe(512, 32, "2.5", "20", 7)
    assert table(page, ".q-table") == _probe_rows(expected)
    assert _raw(page) == [g["raw"] for g in expected["groups"]]
    for testid, key in (("q-outliers", "outliers"), ("q-rms-w", "rms_w"), ("q-checksum", "checksum"),
                        ("q-weights", "weights")):
        assert text(page, root, testid) == expected[key], testid
    # the chart draws the same series (charts.js "lines")
    page.eval_on_selector(f"{root} .chart", "n => n.scrollIntoView()")
    page.wait_for_selector(f"{root} .chart.drawn", timeout=60_000)
    spec = json.loads(page.eval_on_selector(f"{root} .chart script.chart-spec", "n => n.textContent"))
    assert spec == json.loads(json.dumps(expected["chart"]))
