"""Lesson C15's widgets in real headless Chromium, compared with CPython's calculators for the same inputs.

One guarded page (console errors, page errors and non-local requests fail the module) loads the lesson. Each test
changes one control the way a learner would, waits for the widget's "course:updated" event and compares the rows
and fields with lessons/c15-architecture-forks/calc.py run here: the fork map's order, the context slider, the
what-if's model and swap (all answered by the build, also with the runtime held back) and its KV-head count
(Python in the browser). The code cell builds a fork card in the page. axe finds nothing moderate or worse, and at
375 px the page does not scroll sideways.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import COUNT_UPDATES, axe_problems, change, open_lesson, table, updates, wait_update
from experiments.lessons.c15_architecture_forks import FORK_MODELS, calc

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c15-architecture-forks.html"
COURSE = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))


def model_id(alias: str) -> str:
    if alias in COURSE["aliases"]:
        return COURSE["aliases"][alias]
    ids = [p.name for p in (ROOT / "data" / "models").iterdir()]
    return next(i for i in ids if i.replace(".", "_").replace("-", "_") == alias)


def cfg(alias: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id(alias) / "config.json").read_text(encoding="utf-8"))


def name(alias: str) -> str:
    import yaml
    meta = ROOT / "data" / "models" / model_id(alias) / "meta.yaml"
    return yaml.safe_load(meta.read_text(encoding="utf-8"))["name"]


def pairs() -> list:
    return [[name(a), cfg(a)] for a in FORK_MODELS]


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c15-sort", ".c15-wt")   # (the KV-head field: per swap)



MAP_KEYS = ("name", "attention", "hybrid", "kv", "ffn", "moe", "active", "norm", "position", "vocab", "mtp")


def map_rows(x: dict) -> list[list[str]]:
    return [[r[k] for k in MAP_KEYS] for r in x["rows"]]


def test_fork_map_orders(page):
    assert table(page, ".c15-map") == map_rows(calc.fork_map(pairs(), "listed"))
    for sort in ("kv", "vocab"):
        change(page, ".c15-fork-map", {".c15-sort": sort}, ".c15-sort")
        assert table(page, ".c15-map") == map_rows(calc.fork_map(pairs(), sort))
        assert f"c15-fork-map.sort={sort}" in page.url


def test_context_slider(page):
    for i in (0, 8):
        change(page, ".c15-context", {".c15-t": i}, ".c15-t", "input")
        want = calc.context_rows(pairs(), calc.T_STOPS[i])
        assert table(page, ".c15-context-rows") == [[r["name"], r["cache"], r["flops"], r["dense"], r["note"]]
                                                    for r in want["rows"]]


def wi_rows(x: dict) -> list[list[str]]:
    return [[r["label"], r["base"], r["swapped"], r["change"]] for r in x["rows"]]


def test_what_if_swaps_and_kv_heads(page):
    change(page, ".c15-what-if", {".c15-model": "qwen3_5_35b_a3b"}, ".c15-model")
    assert page.eval_on_selector(".c15-what-if .c15-swap", "s => s.value") == "no_linear"
    assert table(page, ".c15-what-if-rows") == wi_rows(calc.what_if_view(cfg("qwen3_5_35b_a3b"), "no_linear",
                                                                          131072, 8))
    change(page, ".c15-what-if", {".c15-model": "deepseek_v3_2", ".c15-swap": "mla_to_gqa"}, ".c15-swap")
    change(page, ".c15-what-if", {".c15-kvh": 16}, ".c15-kvh")      # Python in the browser
    assert table(page, ".c15-what-if-rows") == wi_rows(calc.what_if_view(cfg("deepseek_v3_2"), "mla_to_gqa",
                                                                          131072, 16))
    assert "c15-what-if.kv=16" in page.url
    change(page, ".c15-what-if", {".c15-kvh": 3}, ".c15-kvh")       # 3 does not divide 128 heads: a Chinese error
    err = page.eval_on_selector(".c15-what-if .widget-error", "n => n.textContent")
    assert "KV 头数应能整除注意力头数" in err
    for bad in (0, -5):                                              # below the range: refused (#49)
        change(page, ".c15-what-if", {".c15-kvh": bad}, ".c15-kvh")
        assert "KV 头数应在 1 到" in page.eval_on_selector(".c15-what-if .widget-error", "n => n.textContent")
    change(page, ".c15-what-if", {".c15-kvh": 16}, ".c15-kvh")


# the KV-head field's state: disabled, aria-disabled, its reason line's text and visibility, whether the field's
# aria-describedby names that line, and the line's box
KV_FIELD = """() => {
  const c = document.querySelector(".c15-what-if .c15-kvh");
  const why = document.querySelector(".c15-what-if .widget-why[data-why=disabled]");
  const r = why.getBoundingClientRect();
  return { disabled: c.disabled, aria: c.getAttribute("aria-disabled"), text: why.textContent,
           shown: why.checkVisibility(), named: (c.getAttribute("aria-describedby") || "").split(" ").includes(why.id),
           left: r.left, right: r.right, width: window.innerWidth };
}"""


def test_the_kv_field_is_disabled_with_its_reason_under_other_swaps(page):
    """Only MLA -> GQA reads the KV-head count: under another swap the field is disabled and the reason shows beside
    it (in view at 375 px, named by its aria-describedby); back to MLA -> GQA it is enabled and the reason gone. The
    value chosen stays in the URL throughout (issue #49, widgets.js moot())."""
    reason = json.loads((ROOT / "data" / "messages_zh.json").read_text(encoding="utf-8"))["c15.what_if.kv_unused"]
    change(page, ".c15-what-if", {".c15-model": "deepseek_v3_2", ".c15-swap": "mla_to_gqa", ".c15-kvh": 16},
           ".c15-swap")
    on = page.evaluate(KV_FIELD)
    assert (on["disabled"], on["aria"], on["shown"], on["named"]) == (False, None, False, False)
    size = page.viewport_size
    page.set_viewport_size({"width": 375, "height": 800})
    try:
        change(page, ".c15-what-if", {".c15-swap": "no_indexer"}, ".c15-swap")
        page.locator(".c15-what-if .c15-kvh").scroll_into_view_if_needed()
        off = page.evaluate(KV_FIELD)
        assert (off["disabled"], off["aria"], off["shown"], off["named"]) == (True, "true", True, True)
        assert off["text"] == reason and 0 <= off["left"] < off["right"] <= off["width"]
        assert "c15-what-if.kv=16" in page.url and "c15-what-if.swap=" not in page.url   # (no_indexer: the default)
    finally:
        page.set_viewport_size(size)
    change(page, ".c15-what-if", {".c15-swap": "mla_to_gqa"}, ".c15-swap")
    back = page.evaluate(KV_FIELD)
    assert (back["disabled"], back["aria"], back["shown"], back["named"]) == (False, None, False, False)
    assert table(page, ".c15-what-if-rows") == wi_rows(calc.what_if_view(cfg("deepseek_v3_2"), "mla_to_gqa",
                                                                          131072, 16))


def test_code_cell_builds_a_card(page):
    cell = page.locator(".code-cell").first
    before = updates(page, "code-cell")
    cell.locator(".code-run").click()
    wait_update(page, "code-cell", before)
    out = cell.locator(".code-output").inner_text()
    assert "GQA × 36 层" in out and "词表： 151,936（占 15.2%），输入输出不共享" in out


def test_answers_before_python(module_guard, site):
    p = module_guard.context.new_page()
    p.add_init_script(COUNT_UPDATES)
    p.route("**/worker.js", lambda route: None)      # never answered: the runtime stays loading
    p.goto(site + PAGE)
    change(p, ".c15-fork-map", {".c15-sort": "active"}, ".c15-sort")
    assert table(p, ".c15-map") == map_rows(calc.fork_map(pairs(), "active"))
    change(p, ".c15-context", {".c15-t": 3}, ".c15-t", "input")
    assert table(p, ".c15-context-rows")[0][1] == calc.context_rows(pairs(), calc.T_STOPS[3])["rows"][0]["cache"]
    change(p, ".c15-what-if", {".c15-model": "gpt_oss_120b"}, ".c15-model")
    assert table(p, ".c15-what-if-rows") == wi_rows(calc.what_if_view(cfg("gpt_oss_120b"), "no_sliding", 131072, 8))
    p.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_clean(module_guard, site, scheme):
    bad = axe_problems(module_guard.context, site + PAGE, scheme)
    assert not bad, "\n".join(bad)


def test_phone_width(browser, site):
    ctx = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True, has_touch=True)
    p = ctx.new_page()
    p.goto(site + PAGE)
    p.wait_for_load_state("load")
    assert p.evaluate("document.documentElement.scrollWidth") <= 375
    ctx.close()
