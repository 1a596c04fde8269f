"""The new model families in the browser: the bring-your-own-config box reads a published config of each kind of
architecture (sliding windows, MoE, MLA, Mamba hybrids, multimodal, a class-routed model_type) exactly as CPython
does, and the C4 comparison can put Gemma-2-9B, Mixtral-8x7B and the Jamba hybrid side by side."""
import json
from pathlib import Path

import pytest

from browser_fixtures import wait_runtime_ready
from experiments.ledger import build_ledger

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "models"
PASTED = ["gemma-3-4b-it", "mixtral-8x7b", "deepseek-v2-lite", "nemotron-h-56b", "jamba-v0.1",
          "llama-4-scout-17b-16e", "phi-4", "falcon-7b-instruct", "kimi-k2-instruct", "olmo-2-1124-13b"]


@pytest.fixture(scope="module")
def c4_page(repo_site, http_serve, module_guard):
    page = module_guard.new_page()
    page.goto(http_serve(repo_site.out) + "c4-transformer-block.html")
    wait_runtime_ready(page)
    yield page
    module_guard.assert_clean()


@pytest.mark.parametrize("model_id", PASTED)
def test_bring_your_own_config_reads_every_family(c4_page, model_id):
    text = (FIXTURES / model_id / "config.json").read_text(encoding="utf-8")
    expected = f"{build_ledger(json.loads(text)).total:,}"
    root = c4_page.locator('.widget[data-widget="byo-config"]')
    root.locator('[data-testid="byo-config-input"]').fill(text)
    root.locator('[data-testid="byo-config-run"]').click()
    c4_page.wait_for_function(
        "(want) => {"
        " const t = document.querySelector('[data-widget=\"byo-config\"] [data-testid=\"byo-config-total\"]');"
        " return t && t.textContent.includes(want); }", arg=expected, timeout=60_000)
    assert root.locator(".byo-error").is_hidden()


def test_unsupported_model_type_lists_the_supported_ones(c4_page):
    from experiments.ledger.registry import REGISTRY
    root = c4_page.locator('.widget[data-widget="byo-config"]')
    root.locator('[data-testid="byo-config-input"]').fill(json.dumps({"model_type": "bert", "hidden_size": 768}))
    root.locator('[data-testid="byo-config-run"]').click()
    root.locator(".byo-error").wait_for(state="visible")
    text = root.locator(".byo-error").inner_text()
    assert "model_type" in text
    assert all(f.model_type in text for f in REGISTRY)


def test_comparison_picks_new_families(c4_page, repo_site):
    models = json.loads((Path(repo_site.out) / "data" / "models.json").read_text(encoding="utf-8"))
    picks = ["gemma_2_9b", "mixtral_8x7b", "jamba_v0_1"]
    root = c4_page.locator('.widget[data-widget="ledger-compare"]')
    for select, alias in zip(root.locator("select.compare-model").all(), picks):
        select.select_option(alias)
    names = [models[a]["name"] for a in picks]
    c4_page.wait_for_function(
        "(names) => { const th = [...document.querySelectorAll('[data-widget=\"ledger-compare\"] thead th')]"
        ".slice(1).map((x) => x.textContent.trim()); return JSON.stringify(th) === JSON.stringify(names); }",
        arg=names, timeout=60_000)
    c4_page.wait_for_function(
        "() => !document.querySelector('[data-widget=\"ledger-compare\"] [data-busy]')", timeout=60_000)
    foot = root.locator("tfoot td").all_inner_texts()
    totals = [f"{build_ledger(models[a]['config']).total:,}" for a in picks]
    assert [cell.split("\n")[0].strip() for cell in foot] == totals
