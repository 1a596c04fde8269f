"""browser == build for the engine itself: experiments/ under Pyodide (wasm32) gives exactly what CPython gives.

The built course (repo_site: every lesson, every model) is served from a local port; one guarded page loads the
bundled Pyodide + numpy once for the module. For every config in data/models/, the API functions the widgets call
are run in the page and compared, as parsed JSON, with the same functions under CPython. A wasm32 pitfall such as
numpy's int32 default would show up as a different total (DeepSeek-V3 has 684,489,845,504 parameters).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from browser_fixtures import PageGuard, wait_runtime_ready
from experiments import api
from sitegen.models import load_models

ROOT = Path(__file__).resolve().parent.parent
DOCS = load_models(ROOT / "data" / "models")   # id -> {"meta", "config"}
COURSE = json.loads((ROOT / "data" / "course.json").read_text(encoding="utf-8"))
REFERENCE = json.loads((ROOT / "data" / "reference_counts.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def engine_page(browser, repo_site, http_serve):
    guard = PageGuard(browser.new_context())
    page = guard.new_page()
    page.goto(http_serve(repo_site.out) + "c4-transformer-block.html")   # (the outline page loads no runtime)
    wait_runtime_ready(page)
    yield page
    guard.context.close()
    guard.assert_clean()


def browser_calls(page, calls: list[tuple[str, list]]) -> list:
    """Run [(fn, args), ...] through courseRuntime.call in the page; [{ok, result | error}, ...] in order."""
    return page.evaluate("""(calls) => Promise.all(calls.map(([fn, args]) =>
        courseRuntime.call("experiments.api:" + fn, args).then(
          (result) => ({ok: true, result}), (e) => ({ok: false, error: e.message}))))""", [list(c) for c in calls])


def cpython(fn: str, args: list):
    return json.loads(getattr(api, fn)(json.dumps(args)))


def compare_all(page, calls):
    replies = browser_calls(page, calls)
    for (fn, args), reply in zip(calls, replies):
        assert reply["ok"], f"{fn} failed in the browser: {reply.get('error')}"
        assert reply["result"] == cpython(fn, args), f"{fn}: browser != CPython"
    return replies


def test_the_browser_runs_python_3_12_on_wasm32(engine_page):
    out = engine_page.evaluate("courseRuntime.run('import sys, platform; print(sys.maxsize, platform.machine())')")
    assert out["ok"] and out["stdout"].split()[0] == str(2**31 - 1)     # a 32-bit platform: int32 pitfalls apply


@pytest.mark.parametrize("model_id", sorted(DOCS))
def test_ledger_json_equals_cpython(engine_page, model_id):
    config = DOCS[model_id]["config"]
    (reply,) = compare_all(engine_page, [("ledger_json", [config])])
    assert isinstance(reply["result"]["total"], int) and reply["result"]["total"] > 0


@pytest.mark.parametrize("model_id", sorted(DOCS))
def test_ledger_views_and_crossover_equal_cpython(engine_page, model_id):
    doc = DOCS[model_id]
    config, name = doc["config"], doc["meta"]["name"]
    t_max = cpython("crossover_view", [config, name])["t_max_raw"]
    Ts = sorted({1, 2, 1000, 4096, max(1, t_max // 3), t_max - 1 or 1, t_max})
    compare_all(engine_page, [("ledger_views", [config, name]), ("crossover_view", [config, name])]
                + [("crossover_at", [config, T]) for T in Ts])


def test_side_by_side_and_tracker_equal_cpython(engine_page):
    models = [[i, DOCS[i]["meta"]["name"], DOCS[i]["config"]] for i in sorted(DOCS)]
    calls = [("ledger_compare", [models])]
    for model_id in sorted(DOCS):
        calls.append(("tracker", [DOCS[model_id]["config"], COURSE["tracker"], REFERENCE.get(model_id, {}),
                                  model_id == COURSE["tracker"]["model"]]))
    compare_all(engine_page, calls)


def test_numpy_baseline_forward_equals_cpython(engine_page):
    (reply,) = browser_calls(engine_page, [("baseline_forward", [0, COURSE["tracker"]])])
    assert reply["ok"], reply
    got, want = reply["result"], cpython("baseline_forward", [0, COURSE["tracker"]])
    assert math.isclose(got["summary"].pop("prob_sum"), want["summary"].pop("prob_sum"), rel_tol=1e-5)
    assert got == want
    assert got["params"] == "3,688,704" and all(a["match"] for a in got["actual"].values())


BYO_INPUTS = [
    json.dumps(DOCS["qwen3.8-27b"]["config"]),
    json.dumps(DOCS["deepseek-v3"]),
    '{"model_type": "llama",',
    "[1, 2, 3]",
    '{"model_type": "bert", "hidden_size": 8}',
    json.dumps({k: v for k, v in DOCS["llama-2-7b"]["config"].items() if k != "hidden_size"}),
    "",
]


@pytest.mark.parametrize("text", BYO_INPUTS, ids=["anchor", "deepseek-file", "bad-json", "list", "bert",
                                                   "missing-key", "empty"])
def test_bring_your_own_config_equals_cpython(engine_page, text):
    others = [["gpt2", "GPT-2", DOCS["gpt2"]["config"]]]
    compare_all(engine_page, [("byo_views", [text, others])])
