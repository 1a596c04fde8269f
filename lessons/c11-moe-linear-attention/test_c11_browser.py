"""Lesson C11's widgets in real headless Chromium, compared with CPython's calculators for the same inputs.

The course is built from the repo into a temporary folder and served on 127.0.0.1; one guarded page (console
errors, page errors and non-local requests fail the module) loads the lesson. Each test changes one control the
way a learner would, waits for the widget's "course:updated" event, and compares every [data-f] text outside the
rows (and the ledger's rows) with lessons/c11-moe-linear-attention/calc.py run here. Controls whose states the
build answered ahead of time (the widgets' `states`) answer before Python is ready (checked on a page whose
runtime is still loading); the others ask Python in the browser. The URL keeps each widget's state, and a page
opened on such a URL shows it. axe finds nothing moderate or worse.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import COUNT_UPDATES, axe_problems, change, open_lesson, updates, wait_runtime_ready, wait_update
from experiments.lessons.c11_moe_linear_attention import calc, recall

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c11-moe-linear-attention.html"


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c11-experts")





def shown(page, root: str) -> dict:
    return page.eval_on_selector(root, """r => Object.fromEntries([...r.querySelectorAll('[data-f]')]
      .filter(n => !n.parentElement.closest('[data-each]')).map(n => [n.dataset.f, n.textContent.trim()]))""")


def expect_fields(page, root: str, want: dict) -> None:
    got = shown(page, root)
    keys = [k for k in got if k in want]
    assert len(keys) >= 8
    assert {k: got[k] for k in keys} == {k: want[k] for k in keys}


def rows(page) -> list[list[str]]:
    return page.eval_on_selector_all(".c11-rows tbody tr",
                                     "rs => rs.map(r => [...r.cells].map(c => c.textContent.trim()))")


# -- the two ledgers ----------------------------------------------------------------------------------------------
def test_ledger_model_switch_and_experts(page):
    change(page, ".c11-ledger", {".c11-model": "deepseek_v3"}, ".c11-model")
    want = calc.moe_ledger(cfg("deepseek-v3"))
    expect_fields(page, ".c11-ledger", want)
    assert rows(page) == [[r["label"], r["total"], r["active"]] for r in want["rows"]]
    assert "c11-moe-ledger.model=deepseek_v3" in page.url
    # Python in the browser: another E and k on the same model
    change(page, ".c11-ledger", {".c11-experts": 64, ".c11-top-k": 4}, ".c11-top-k")
    want = calc.moe_ledger(cfg("deepseek-v3"), 64, 4)
    expect_fields(page, ".c11-ledger", want)
    assert rows(page) == [[r["label"], r["total"], r["active"]] for r in want["rows"]]
    assert "c11-moe-ledger.E=64" in page.url and "c11-moe-ledger.k=4" in page.url


def test_ledger_split_and_bad_input(page):
    change(page, ".c11-ledger", {".c11-model": "qwen3_30b_a3b"}, ".c11-model")
    change(page, ".c11-ledger", {".c11-split": "1/8"}, ".c11-split")
    expect_fields(page, ".c11-ledger", calc.moe_ledger(cfg("qwen3-30b-a3b"), None, None, "1/8"))
    assert "c11-moe-ledger.split=1%2F8" in page.url
    change(page, ".c11-ledger", {".c11-top-k": 500}, ".c11-top-k")
    error = page.locator(".c11-ledger > .widget-error")
    assert error.is_visible() and "不能多于" in error.inner_text() and "Error" not in error.inner_text()
    change(page, ".c11-ledger", {".c11-top-k": 8, ".c11-split": "1"}, ".c11-top-k")
    assert not error.is_visible()
    expect_fields(page, ".c11-ledger", calc.moe_ledger(cfg("qwen3-30b-a3b")))


# -- hybrids ------------------------------------------------------------------------------------------------------
def test_hybrid_presets_and_custom(page):
    anchor = cfg("qwen3.8-27b")
    change(page, ".c11-hybrid", {".c11-preset": "64", ".c11-t": "262144"}, ".c11-t")
    expect_fields(page, ".c11-hybrid", calc.hybrid_memory(anchor, 64, 262144))
    assert "c11-hybrid-memory.n=64" in page.url and "c11-hybrid-memory.T=262144" in page.url
    change(page, ".c11-hybrid", {".c11-n-full": "12"}, ".c11-n-full")
    expect_fields(page, ".c11-hybrid", calc.hybrid_memory(anchor, 12, 262144))
    assert page.eval_on_selector(".c11-hybrid .c11-preset", "s => s.value") == "custom"
    page.wait_for_function("""() => JSON.parse(document.querySelector('.c11-hybrid script.chart-spec').textContent)
      .series.length === 6""", timeout=60_000)
    spec = json.loads(page.eval_on_selector(".c11-hybrid script.chart-spec", "n => n.textContent"))
    assert spec == json.loads(json.dumps(calc.hybrid_chart(anchor, current=12)))
    # an emptied field is not read as 0 layers: Python's message, the last good answer kept (issue #49)
    change(page, ".c11-hybrid", {".c11-n-full": ""}, ".c11-n-full")
    assert "全注意力层数" in page.eval_on_selector(".c11-hybrid .widget-error", "n => n.hidden ? '' : n.textContent")
    expect_fields(page, ".c11-hybrid", calc.hybrid_memory(anchor, 12, 262144))


# -- batch -> experts -> bytes ---------------------------------------------------------------------------------
def test_batch_slider_model_and_precision(page):
    change(page, ".c11-batch", {".c11-b": "6"}, ".c11-b", "input")
    expect_fields(page, ".c11-batch", calc.batch_read(cfg("qwen3-30b-a3b"), 64))
    assert "c11-batch-experts.B=64" in page.url
    change(page, ".c11-batch", {".c11-model": "gpt_oss_120b"}, ".c11-model")
    expect_fields(page, ".c11-batch", calc.batch_read(cfg("gpt-oss-120b"), 64))
    change(page, ".c11-batch", {".c11-dtype": "INT4"}, ".c11-dtype")
    expect_fields(page, ".c11-batch", calc.batch_read(cfg("gpt-oss-120b"), 64, "INT4"))
    page.wait_for_function("""() => JSON.parse(document.querySelector('.c11-batch script.chart-spec').textContent)
      .ytitle.includes('INT4')""", timeout=60_000)
    assert "c11-batch-experts.dtype=INT4" in page.url


# -- the recall experiment: numpy at build time, in the page's worker for another seed, the same counts -------------
def recall_shown(page) -> dict:
    return page.eval_on_selector(".c11-recall", """r => ({
      summary: r.querySelector('[data-f=summary]').textContent,
      d_k: r.querySelector('[data-f=d_k]').textContent, seed: r.querySelector('[data-f=seed]').textContent,
      gate: r.querySelector('[data-f=gate]').textContent,
      rows: [...r.querySelectorAll('.c11-recall-table tbody tr')].map(t => [...t.cells].map(c => c.textContent))})""")


def recall_expected(d_k: str, seed: str, gate: str) -> dict:
    x = recall.recall_experiment(d_k, seed, gate)
    return {"summary": x["summary"], "d_k": x["d_k"], "seed": x["seed"], "gate": x["gate"],
            "rows": [[r["n"], r["over"], r["softmax"], r["linear"], r["delta"]] for r in x["rows"]]}


def test_recall_build_time_browser_and_cpython_agree(page):
    assert recall_shown(page) == recall_expected("32", "0", "1")          # the build's numpy
    change(page, ".c11-recall", {".c11-seed": "7"}, ".c11-seed")          # Pyodide's numpy in the page's worker
    assert recall_shown(page) == recall_expected("32", "7", "1")
    assert "c11-recall.seed=7" in page.url
    change(page, ".c11-recall", {".c11-gate": "0.95", ".c11-dk": "64"}, ".c11-dk")
    assert recall_shown(page) == recall_expected("64", "7", "0.95")
    change(page, ".c11-recall", {".c11-seed": "0", ".c11-gate": "1", ".c11-dk": "32"}, ".c11-dk")
    assert recall_shown(page) == recall_expected("32", "0", "1")


def test_recall_bad_seed_shows_a_chinese_error(page):
    change(page, ".c11-recall", {".c11-seed": "-3"}, ".c11-seed")
    err = page.locator(".c11-recall .widget-error")
    assert err.is_visible() and "随机种子" in err.inner_text()
    change(page, ".c11-recall", {".c11-seed": "0"}, ".c11-seed")
    assert not err.is_visible()
    assert recall_shown(page) == recall_expected("32", "0", "1")


# -- the code cell -------------------------------------------------------------------------------------------------
def test_code_cell_runs_in_the_browser(page):
    from experiments.ledger import build_ledger
    led = build_ledger(cfg("qwen3-30b-a3b"))
    out = run_cell(page, 1)
    assert f"{led.total:,}" in out and f"{led.active_per_token:,}" in out


def run_cell(page, index: int) -> str:
    cell = page.locator(".code-cell").nth(index)
    before = updates(page, "code-cell")
    cell.locator(".code-run").click()
    wait_update(page, "code-cell", before)
    return cell.locator(".code-output").inner_text()


def test_the_delta_rule_cell_prints_what_cpython_prints(page):
    import contextlib
    import io

    from .test_c11 import code_cell_source
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code_cell_source(0), "cell", "exec"), {})   # noqa: S102 - the lesson's own code cell
    assert run_cell(page, 0).strip() == out.getvalue().strip()


# -- state from the URL, build-time answers before Python, axe ---------------------------------------------------------
def test_state_from_the_url(module_guard, site):
    p = module_guard.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.goto(site + PAGE + "?c11-moe-ledger.model=mixtral_8x7b&c11-moe-ledger.k=1"
           "&c11-hybrid-memory.n=0&c11-hybrid-memory.T=4096&c11-batch-experts.B=256&c11-batch-experts.model=deepseek_v3")
    wait_runtime_ready(p)
    for w in ("c11-ledger", "c11-hybrid", "c11-batch"):
        p.wait_for_function("(k) => (window.__updates[k] || 0) > 0", arg=w, timeout=60_000)
    expect_fields(p, ".c11-ledger", calc.moe_ledger(cfg("mixtral-8x7b"), None, 1))
    expect_fields(p, ".c11-hybrid", calc.hybrid_memory(cfg("qwen3.8-27b"), 0, 4096))
    expect_fields(p, ".c11-batch", calc.batch_read(cfg("deepseek-v3"), 256))


def test_enumerated_states_answer_before_python(module_guard, site):
    """With the Python worker held back, the model pickers, presets, T and the batch slider still answer."""
    ctx = module_guard.context
    p = ctx.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.route("**/worker.js", lambda route: None)      # never answered: the runtime stays loading
    p.goto(site + PAGE)
    assert p.eval_on_selector(".c11-ledger .c11-experts", "n => n.disabled")
    change(p, ".c11-ledger", {".c11-model": "qwen3_235b_a22b"}, ".c11-model")
    expect_fields(p, ".c11-ledger", calc.moe_ledger(cfg("qwen3-235b-a22b")))
    change(p, ".c11-hybrid", {".c11-preset": "8", ".c11-t": "4096"}, ".c11-preset")
    expect_fields(p, ".c11-hybrid", calc.hybrid_memory(cfg("qwen3.8-27b"), 8, 4096))
    change(p, ".c11-batch", {".c11-b": "10"}, ".c11-b", "input")
    expect_fields(p, ".c11-batch", calc.batch_read(cfg("qwen3-30b-a3b"), 1024))
    assert p.eval_on_selector(".c11-recall .c11-seed", "n => n.disabled")
    change(p, ".c11-recall", {".c11-dk": "128"}, ".c11-dk")
    assert recall_shown(p) == recall_expected("128", "0", "1")
    change(p, ".c11-recall", {".c11-dk": "32", ".c11-gate": "0.9"}, ".c11-gate")
    assert recall_shown(p) == recall_expected("32", "0", "0.9")
    p.close()


def test_one_change_writes_the_url_once(module_guard, site):
    """A model change sets four of the widget's keys (model, E, k, split): the URL is written once for all four."""
    p = module_guard.context.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.add_init_script("""window.__replaced = [];
      const replace0 = history.replaceState;
      history.replaceState = function (state, title, url) {
        window.__replaced.push(String(url));
        return replace0.apply(this, arguments);
      };""")
    p.route("**/worker.js", lambda route: None)      # (the model picker answers from the build's answers)
    p.goto(site + PAGE + "?c11-moe-ledger.k=1")
    p.wait_for_load_state("load")
    p.evaluate("window.__replaced = []")
    change(p, ".c11-ledger", {".c11-model": "qwen3_235b_a22b"}, ".c11-model")
    replaced = p.evaluate("window.__replaced")
    assert len(replaced) == 1, replaced
    assert p.evaluate("location.search") == "?c11-moe-ledger.model=qwen3_235b_a22b"   # (k back to its default)
    expect_fields(p, ".c11-ledger", calc.moe_ledger(cfg("qwen3-235b-a22b")))
    p.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_clean(module_guard, site, scheme):
    bad = axe_problems(module_guard.context, site + PAGE, scheme)
    assert not bad, "\n".join(bad)
