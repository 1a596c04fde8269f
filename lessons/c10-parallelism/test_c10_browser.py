"""Lesson C10's widgets in real headless Chromium, compared with CPython's calculators for the same inputs.

One guarded page (console errors, page errors and non-local requests fail the module) loads the lesson. The planner
answers a built-in model's choice and a typed GPU count and batch exactly as calc.planner does here, and names what
does not divide; the simulated ranks run the course trainer's step in the browser's Python (numpy) and show the
same bytes, shards and verdict as CPython, and name what does not divide for 3 ranks. With the runtime held back,
the choices the build answered still answer. axe finds nothing moderate or worse.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_fixtures import (
    axe_problems,
    change,
    open_lesson,
    open_without_python,
    table,
    text,
)
from experiments.lessons.c10_parallelism import PLANNER_DEFAULTS, calc

ROOT = Path(__file__).resolve().parents[2]
PAGE = "c10-parallelism.html"
CONTROLS = ("gpus", "cluster", "seq", "batch", "recompute")


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(module_guard, site):
    return open_lesson(module_guard, site + PAGE, ".c10-cluster", ".c10-layout")



def plan_expected(model_id: str, **changes) -> dict:
    args = {k: PLANNER_DEFAULTS[k] for k in CONTROLS} | changes
    return calc.planner(cfg(model_id), *(args[k] for k in CONTROLS))


def expect_plan(page, want: dict) -> None:
    assert table(page, ".c10-planner .c10-plan-rows") == [
        [r["layout"], r["ep"], r["zero"], r["memory"], r["comm"], r["bubble"], r["step"], r["mfu"], r["top"]]
        for r in want["rows"]]
    assert text(page, ".c10-planner", "c10-fitting") == want["fitting"]
    assert text(page, ".c10-planner", "c10-plan-message") == want["message"]


def test_planner_answers_like_cpython(page):
    change(page, ".c10-planner", {".c10-model": "llama70b", ".c10-recompute": "none"}, ".c10-recompute")
    expect_plan(page, plan_expected("llama-2-70b", recompute="none"))
    change(page, ".c10-planner", {".c10-gpus": "64", ".c10-batch": "512", ".c10-cluster": "h100"}, ".c10-batch")
    expect_plan(page, plan_expected("llama-2-70b", recompute="none", gpus="64", batch="512", cluster="h100"))
    assert "c10-planner.gpus=64" in page.url and "c10-planner.model=llama70b" in page.url
    # nothing fits: the answer says so, with the least any layout needs
    change(page, ".c10-planner", {".c10-gpus": "8", ".c10-batch": "8", ".c10-seq": "131072"}, ".c10-seq")
    want = plan_expected("llama-2-70b", recompute="none", gpus="8", batch="8", cluster="h100", seq="131072")
    expect_plan(page, want)
    assert "都装不下" in want["message"]


def test_planner_names_what_does_not_divide(page):
    page.evaluate("""() => {
      const r = document.querySelector('.c10-planner');
      r.querySelector('.c10-gpus').value = '1000';
      r.querySelector('.c10-batch').value = '511';
      r.querySelector('.c10-batch').dispatchEvent(new Event('change'));
    }""")
    page.wait_for_function("() => !document.querySelector('.c10-planner > .widget-error').hidden", timeout=60_000)
    message = page.locator(".c10-planner > .widget-error").inner_text()
    assert "全局 batch 511" in message and "GPU 数 1,000" in message and "Error" not in message


def test_ranks_step_in_the_browser_equals_cpython(page):
    change(page, ".c10-ranks", {".c10-layout": "tp", ".c10-k": "2"}, ".c10-k")
    want = calc.ranks_step("tp", "2")
    assert table(page, ".c10-ranks .c10-rank-rows") == [
        [r["rank"], r["data"], r["holds"], r["total"]] for r in want["rows"]]
    assert text(page, ".c10-ranks", "c10-ranks-split") == f"按集合通信分开数：{want['split']}。"
    assert text(page, ".c10-ranks", "c10-formula") == want["formula"]
    assert text(page, ".c10-ranks", "c10-same") == want["same"] and want["same"].startswith("相同")
    assert "c10-ranks.layout=tp" in page.url
    page.evaluate("""() => {
      const r = document.querySelector('.c10-ranks');
      r.querySelector('.c10-k').value = '3';
      r.querySelector('.c10-k').dispatchEvent(new Event('change'));
    }""")
    page.wait_for_function("() => !document.querySelector('.c10-ranks > .widget-error').hidden", timeout=60_000)
    message = page.locator(".c10-ranks > .widget-error").inner_text()
    assert "注意力头数 4 不能被 3 整除" in message and "FFN 宽度 172 不能被 3 整除" in message


def test_build_answers_before_python(module_guard, site):
    p = open_without_python(module_guard.new_page(), site + PAGE, "c10-ranks")
    change(p, ".c10-planner", {".c10-model": "gpt3"}, ".c10-model")
    expect_plan(p, plan_expected("gpt3-175b"))
    change(p, ".c10-planner", {".c10-model": "deepseek_v3", ".c10-cluster": "h100"}, ".c10-cluster")
    expect_plan(p, plan_expected("deepseek-v3", cluster="h100"))
    change(p, ".c10-ranks", {".c10-layout": "dp"}, ".c10-layout")
    want = calc.ranks_step("dp", "4")
    assert table(p, ".c10-ranks .c10-rank-rows")[0][3] == want["rows"][0]["total"]
    p.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_clean(module_guard, site, scheme):
    bad = axe_problems(module_guard.context, site + PAGE, scheme)
    assert not bad, "\n".join(bad)
