"""Lesson C9's widgets in real headless Chromium, compared with CPython's calculators for the same inputs.

One guarded page (console errors, page errors and non-local requests fail the module) loads the lesson. Each test
changes controls the way a learner would, waits for the widget's "course:updated" event and compares what the page
shows with this folder's calc.py run here: the step's bar, verdict and rows (a built-in
model and a pasted config), the activations-over-length chart and table, and the trainer's real step run in the
browser's Python, whose measured bytes must equal CPython's (the peak, which depends on numpy's temporaries, is
not compared). The pickers and selects the build answered work while the runtime is held back; the URL keeps the
state; axe finds nothing moderate or worse.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import COUNT_UPDATES, axe_problems, change, open_lesson, updates, wait_runtime_ready, wait_update
from experiments.lessons.c9_training_memory import calc

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c9-training-memory.html"
ROW_CELLS = "rs => rs.map(r => [...r.cells].map(c => c.textContent.trim()))"    # each table row's cells' text
KEYS = ("recipe", "batch", "seq", "recompute", "kernel", "zero", "ranks", "tp", "gpu")
DEFAULTS = {"recipe": "mixed_adamw", "batch": "1", "seq": "4096", "recompute": "none", "kernel": "fused", "zero": "0",
            "ranks": "1", "tp": "1", "gpu": "80"}


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c9-recipe", ".c9-m-run", ".c9-run")



def step_shown(page) -> dict:
    return page.eval_on_selector(".c9-step", """r => ({
      verdict: r.querySelector('.c9-verdict').textContent.trim(),
      total: r.querySelector('tfoot [data-f=total]').textContent.trim(),
      rows: [...r.querySelectorAll('.c9-rows tbody tr')].map(t => [...t.cells].map(c => c.textContent.trim())),
      bars: [...r.querySelectorAll('rect[data-testid]')].map(b => [b.getAttribute('x'), b.getAttribute('width')]),
      gpu: r.querySelector('.c9-gpu-line').getAttribute('x1'),
      facts: r.querySelector('.c9-facts').textContent.replace(/\\s+/g, ' ').trim()})""")


def step_expected(config, **changes) -> dict:
    args = {**DEFAULTS, **changes}
    x = calc.step_memory(config, *(args[k] for k in KEYS))
    return {"verdict": x["verdict"], "total": x["total"],
            "rows": [[r["label"], r["bytes"], r["share"]] for r in x["rows"]],
            "bars": [[b["x"], b["w"]] for b in x["bars"]], "gpu": x["gpu_x"]}


def expect_step(page, config, **changes) -> None:
    got = step_shown(page)
    want = step_expected(config, **changes)
    assert {k: got[k] for k in want} == want


def test_step_controls_answer_like_cpython(page):
    change(page, ".c9-step", {".c9-model": "llama7b", ".c9-seq": "32768", ".c9-recompute": "full"}, ".c9-recompute")
    expect_step(page, cfg("llama-2-7b"), seq="32768", recompute="full")
    assert "c9-step.model=llama7b" in page.url and "c9-step.recompute=full" in page.url
    change(page, ".c9-step", {".c9-model": "anchor", ".c9-zero": "3", ".c9-ranks": "64", ".c9-tp": "4+SP",
                              ".c9-seq": "4096", ".c9-recompute": "none"}, ".c9-tp")
    expect_step(page, cfg("qwen3.8-27b"), zero="3", ranks="64", tp="4+SP")
    facts = step_shown(page)["facts"]
    assert "每步优化器看到 262,144 个 token" in facts


def test_a_pasted_config(page):
    text = (ROOT / "data" / "models" / "gemma-2-9b" / "config.json").read_text(encoding="utf-8")
    page.locator(".c9-step .c9-paste summary").click()
    page.fill(".c9-step .c9-config", text)
    before = updates(page, "c9-step")
    page.click(".c9-step .c9-run")
    wait_update(page, "c9-step", before)
    expect_step(page, text, zero="3", ranks="64", tp="4+SP")
    page.fill(".c9-step .c9-config", '{"model_type": "llama", "hidden_size": -5}')
    before = updates(page, "c9-step")
    page.click(".c9-step .c9-run")
    page.wait_for_function("() => !document.querySelector('.c9-step > .widget-error').hidden", timeout=60_000)
    message = page.locator(".c9-step > .widget-error").inner_text()
    assert "hidden_size" in message and "Error" not in message


# the ZeRO select's state: disabled, aria-disabled, its reason line's text and visibility, and whether the select's
# aria-describedby names that line
ZERO = """() => {
  const c = document.querySelector(".c9-step .c9-zero");
  const why = document.querySelector(".c9-step .widget-why[data-why=disabled]");
  return { disabled: c.disabled, aria: c.getAttribute("aria-disabled"), text: why.textContent,
           shown: why.checkVisibility(), named: (c.getAttribute("aria-describedby") || "").split(" ").includes(why.id),
           value: c.value };
}"""


def test_zero_is_disabled_with_its_reason_on_one_card(page):
    """ZeRO splits the model states over the data-parallel cards: with one card it is disabled and the reason shows
    beside it, named by its aria-describedby; with more it is enabled and the reason gone. The stage chosen stays
    (in the select and the URL), and the answer is CPython's for the state as it is (issue #49, widgets.js moot())."""
    reason = json.loads((ROOT / "data" / "messages_zh.json").read_text(encoding="utf-8"))["c9.step.zero_one_card"]
    change(page, ".c9-step", {".c9-model": "qwen3_8b", ".c9-zero": "2", ".c9-ranks": "8", ".c9-tp": "1"}, ".c9-ranks")
    on = page.evaluate(ZERO)
    assert (on["disabled"], on["aria"], on["shown"], on["named"]) == (False, None, False, False)
    expect_step(page, cfg("qwen3-8b"), zero="2", ranks="8")
    change(page, ".c9-step", {".c9-ranks": "1"}, ".c9-ranks")
    off = page.evaluate(ZERO)
    assert (off["disabled"], off["aria"], off["shown"], off["named"], off["value"]) == (True, "true", True, True, "2")
    assert off["text"] == reason and "c9-step.zero=2" in page.url
    expect_step(page, cfg("qwen3-8b"), zero="2", ranks="1")
    change(page, ".c9-step", {".c9-ranks": "64"}, ".c9-ranks")
    back = page.evaluate(ZERO)
    assert (back["disabled"], back["aria"], back["shown"], back["named"]) == (False, None, False, False)
    expect_step(page, cfg("qwen3-8b"), zero="2", ranks="64")


def test_activations_over_sequence_length(page):
    change(page, ".c9-seq", {".c9-seq-model": "qwen3_8b"}, ".c9-seq-model")
    want = calc.seq_curve(cfg("qwen3-8b"))
    assert page.locator(".c9-seq [data-testid=c9-seq-sentence]").inner_text() == want["sentence"]
    shown_rows = page.eval_on_selector_all(".c9-seq-rows tbody tr", ROW_CELLS)
    assert shown_rows == [[r["seq"], *(r[f"{m}_{k}"] for m, k, _ in calc.CURVE_MODES)] for r in want["rows"]]
    spec = json.loads(page.eval_on_selector(".c9-seq script.chart-spec", "n => n.textContent"))
    assert spec == json.loads(json.dumps(want["chart"]))
    assert "c9-seq.model=qwen3_8b" in page.url


def test_the_trainers_step_measured_in_the_browser_equals_cpython(page):
    change(page, ".c9-measured", {".c9-m-batch": "2", ".c9-m-seq": "16"}, ".c9-m-seq")
    want = calc.predicted(cfg("baseline"), "2", "16")      # the ledger's column at once, the measured one waiting
    got = page.eval_on_selector_all(".c9-m-rows tbody tr", ROW_CELLS)
    assert got == [[r["label"], r["ledger"], r["measured"], r["same"]] for r in want["rows"]]
    assert "c9-measured.batch=2" in page.url
    before = updates(page, "c9-measured")
    page.click(".c9-measured .c9-m-run")
    wait_update(page, "c9-measured", before)
    assert page.eval_on_selector(".c9-measured", "r => r.dataset.ran") == "here"
    want = calc.measure(cfg("baseline"), "2", "16")
    got = page.eval_on_selector_all(".c9-m-rows tbody tr", ROW_CELLS)
    assert got == [[r["label"], r["ledger"], r["measured"], r["same"]] for r in want["rows"]]
    assert all(row[3] == "相等" for row in got) and len(got) >= 20
    held = page.locator(".c9-measured [data-testid=c9-m-held]").inner_text()
    assert held == want["held"]
    assert page.locator(".c9-measured [data-testid=c9-m-ledger]").inner_text() == want["ledger_total"]


def test_build_answers_before_python(module_guard, site):
    """With the worker held back, the model picker and every select of the step widget and the length chart's
    picker still answer (the build answered them)."""
    p = module_guard.context.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.route("**/worker.js", lambda route: None)
    p.goto(site + PAGE)
    assert p.eval_on_selector(".c9-step .c9-run", "n => n.disabled")
    change(p, ".c9-step", {".c9-model": "deepseek_v3"}, ".c9-model")
    expect_step(p, cfg("deepseek-v3"))
    change(p, ".c9-step", {".c9-model": "qwen3_8b"}, ".c9-model")
    for key, value in (("recipe", "adam_8bit"), ("kernel", "eager"), ("gpu", "24")):
        change(p, ".c9-step", {f".c9-{key}": value}, f".c9-{key}")
        expect_step(p, cfg("qwen3-8b"), **{key: value})
        change(p, ".c9-step", {f".c9-{key}": DEFAULTS[key]}, f".c9-{key}")
    assert p.eval_on_selector(".c9-step .c9-zero", "n => n.disabled")   # (one card: ZeRO waits for more cards)
    change(p, ".c9-step", {".c9-ranks": "8"}, ".c9-ranks")              # then each stage at that count
    change(p, ".c9-step", {".c9-zero": "3"}, ".c9-zero")
    expect_step(p, cfg("qwen3-8b"), ranks="8", zero="3")
    change(p, ".c9-measured", {".c9-m-batch": "8", ".c9-m-seq": "64"}, ".c9-m-batch")
    want_total = calc.predicted(cfg("baseline"), "8", "64")["ledger_total"]
    assert p.locator(".c9-measured [data-testid=c9-m-ledger]").inner_text() == want_total
    change(p, ".c9-seq", {".c9-seq-model": "anchor"}, ".c9-seq-model")
    want_sentence = calc.seq_curve(cfg("qwen3.8-27b"))["sentence"]
    assert p.locator(".c9-seq [data-testid=c9-seq-sentence]").inner_text() == want_sentence
    p.close()


def test_state_from_the_url(module_guard, site):
    p = module_guard.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.goto(site + PAGE + "?c9-step.model=gpt2&c9-step.batch=8&c9-step.seq=1024&c9-step.kernel=eager&c9-seq.model=gpt2")
    wait_runtime_ready(p)
    for w in ("c9-step", "c9-seq"):
        p.wait_for_function("(k) => (window.__updates[k] || 0) > 0", arg=w, timeout=60_000)
    expect_step(p, cfg("gpt2"), batch="8", seq="1024", kernel="eager")
    assert p.locator(".c9-seq [data-testid=c9-seq-sentence]").inner_text() == calc.seq_curve(cfg("gpt2"))["sentence"]
    p.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_clean(module_guard, site, scheme):
    bad = axe_problems(module_guard.context, site + PAGE, scheme)
    assert not bad, "\n".join(bad)
