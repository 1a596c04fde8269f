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


# one published config (or its class defaults, where none was found) of every model_type added for the 2026
# releases and the most downloaded decoder families, picked as a learner would, through the box's file input
NEW_FAMILIES = ["qwen3.5-35b-a3b", "qwen3-vl-2b-instruct", "qwen3-vl-30b-a3b-instruct", "deepseek-v3.2",
                "deepseek-v4-flash", "glm-5", "kimi-k2.5", "mimo-v2-flash", "step3p7-defaults", "minimax-m3-nvfp4",
                "mistral-small-3.2-24b-flux2", "ministral3-routed", "llava-1.5-7b-hf", "qwen2-vl-2b",
                "mamba-2.8b-hf", "falcon-mamba-7b", "mamba-codestral-7b", "phi-3.5-moe-instruct",
                "qwen2.5-vl-7b-instruct", "stablelm-3b-4e1t", "olmoe-defaults", "glm-defaults", "seed-oss-defaults",
                "olmo3-defaults", "gpt-bigcode-defaults"]


@pytest.mark.parametrize("model_id", NEW_FAMILIES)
def test_bring_your_own_config_reads_every_new_family(c4_page, model_id):
    """The total, and the 数字口径 table's transformers count and checkpoint buffers, as CPython computes them."""
    from experiments.ledger.views import denominators
    path = FIXTURES / model_id / "config.json"
    ledger = build_ledger(json.loads(path.read_text(encoding="utf-8")))
    f = denominators(ledger)
    root = c4_page.locator('.widget[data-widget="byo-config"]')
    root.locator(".byo-file").set_input_files(str(path))
    c4_page.wait_for_function(
        "(want) => { const t = document.querySelector("
        "'[data-widget=\"byo-config\"] [data-testid=\"byo-config-total\"]');"
        " return t && t.textContent.includes(want); }", arg=f"{ledger.total:,}", timeout=120_000)
    assert root.locator(".byo-error").is_hidden()
    rows = root.locator(".byo-denominators tbody tr")
    cells = {rows.nth(i).locator("th").inner_text(): rows.nth(i).locator("td").first.inner_text()
             for i in range(rows.count())}
    assert cells["transformers 的参数"] == f"{f['transformers']:,}"
    assert cells["其中缓冲区（buffer）"] == f"{f['buffers']:,}" and cells["其中 MTP 层"] == f"{f['mtp']:,}"
    assert cells["每个 token 激活（不含词嵌入表）"] == f"{f['active_without_embedding']:,}"
