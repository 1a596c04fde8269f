"""Lesson C10's numbers and calculators against independent recounts: Llama 3 405B's parameters from its paper's
shapes, DeepSeek-V3's all-to-all from its config keys, the simulated ranks' measured bytes against the lesson's
formula numbers, the published layouts among the planner's layouts that fit, and every bad input answered in
Chinese naming what does not divide or fit."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.ledger import ledger_of
from experiments.lessons.c10_parallelism import PUBLISHED_DEFAULTS, calc
from experiments.toolkit import parallel as P
from experiments.toolkit import ranks as R
from experiments.toolkit.devices import FABRICS, H100

ROOT = Path(__file__).resolve().parents[2]


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def numbers():
    import claim_inputs as CI
    return CI.compute(*CI.load_inputs())


def test_llama3_405b_parameters_from_its_shapes(numbers):
    o = PUBLISHED_DEFAULTS
    h, F, L, V = o["hidden_size"], o["intermediate_size"], o["num_hidden_layers"], o["vocab_size"]
    hd = h // o["num_attention_heads"]
    kv = o["num_key_value_heads"] * hd
    layer = 2 * h * h + 2 * h * kv + 3 * h * F + 2 * h      # q, o; k, v; gate, up, down; two norms
    assert numbers["c10.l3.params"].value == 2 * V * h + L * layer + h == 405_853_388_800


def test_deepseek_v3_all_to_all_from_its_keys(numbers):
    c = cfg("deepseek-v3")
    assert numbers["c10.ds.dispatch"].value == c["num_experts_per_tok"] * c["hidden_size"]     # FP8: 1 byte
    assert numbers["c10.ds.cross_node_dispatch"].value == c["topk_group"] * c["hidden_size"]
    assert numbers["c10.ds.experts"].value == c["n_routed_experts"]
    assert numbers["c10.ds.groups"].value == c["n_group"]


def test_simulated_bytes_equal_the_lessons_formula_numbers(numbers):
    k = numbers["c10.sim.k"].value
    for layout in R.LAYOUTS:
        x = R.run(layout, k)
        assert x["per_rank"] == [numbers[f"c10.sim.{layout}"].value] * k
    assert numbers["c10.sim.params"].value == x["params"]


def test_the_implied_step_of_deepseek_v3(numbers):
    # 15,360 sequences x 4,096 tokens per step at 10^12 tokens per 180,000 GPU hours over 2,048 GPUs
    assert numbers["c10.ds.implied"].value == Fraction(15360 * 4096 * 180000 * 3600, 10**12 * 2048)


def test_published_llama3_layout_is_among_the_planners_layouts():
    config = calc.llama3_config(PUBLISHED_DEFAULTS)
    x = calc.planner(config, "16384", "h100", "8192", "2048", "none")
    ledger_plans = P.plan(ledger_of(config), 16384, H100, 8192, 2048, fab=FABRICS["h100"])
    assert x["fitting"] == f"{len(ledger_plans):,}" and len(x["rows"]) == min(calc.SHOWN, len(ledger_plans))
    published = [p for p in ledger_plans if (p.layout.tp, p.layout.pp, p.layout.cp, p.layout.dp) == (8, 16, 1, 128)]
    assert published and {p.layout.zero for p in published} == {3}
    assert x["rows"][0] == calc.plan_row(ledger_plans[0])
    steps = [p.timing.step for p in ledger_plans]
    assert steps == sorted(steps)


def test_published_table_rows():
    rows = calc.published_rows(PUBLISHED_DEFAULTS, cfg("deepseek-v3"))
    # the 128K row needs more than an H100 holds by the ledger without recomputation (the lesson says so)
    assert [r["fits"] for r in rows] == ["装得下", "装得下", "装不下", "装得下"]
    assert (rows[1]["layout"], rows[1]["ep"], rows[1]["zero"]) == ("8·16·1·128", "—", "3")
    assert (rows[3]["layout"], rows[3]["ep"], rows[3]["zero"]) == ("1·16·1·128", "64", "1")
    assert [r["measured"] for r in rows] == ["实测 43%", "实测 41%", "实测 38%", "报告没给 MFU"]


def test_planner_bad_input_names_what_does_not_divide_or_fit():
    c = cfg("llama-2-70b")
    with pytest.raises(ValueError, match="GPU 数：应为 1 到 131,072 的整数，实际是「12a」"):
        calc.planner(c, "12a", "h100", "4096", "512", "none")
    with pytest.raises(ValueError, match="GPU 数：应为 1 到 131,072 的整数"):
        calc.planner(c, "1000000", "h100", "4096", "512", "none")
    with pytest.raises(ValueError, match="全局 batch 511"):
        calc.planner(c, "1000", "h100", "4096", "511", "none")
    with pytest.raises(ValueError, match="集群"):
        calc.planner(c, "64", "tpu", "4096", "512", "none")
    x = calc.planner(c, "8", "h100", "131072", "8", "none")
    assert x["rows"] == [] and x["fitting"] == "0"
    assert x["message"].startswith(f"{x['candidates']} 种切法都装不下：最省显存的")
    assert "一张 H100 SXM 80GB 只有 85.5 GB" in x["message"]


def test_ranks_step_answers_and_refuses():
    x = calc.ranks_step("tp", "2")
    assert x["agree"] == "一致" and x["same"].startswith("相同")
    assert [r["total"] for r in x["rows"]] == [x["formula"]] * 2
    assert "注意力头 3–4，FFN 第 87–172 列" in x["rows"][1]["data"]
    assert calc.ranks_step("dp", "1")["split"] == "一张卡不用发任何东西"
    assert x["split"] == "每张卡都一样：前向 all-reduce 262,144；反向 all-reduce 262,144"
    with pytest.raises(ValueError, match="张量并行分到 3 张卡上分不开：注意力头数 4 不能被 3 整除；FFN 宽度 172"):
        calc.ranks_step("tp", "3")
    with pytest.raises(ValueError, match="卡数：应为 1 到 64 的整数"):
        calc.ranks_step("dp", "0")


def test_the_first_planner_state_puts_layouts_without_experts_first():
    """The lesson says so beside the widget: the model's fastest layouts for DeepSeek-V3's setting use no expert
    parallelism (no all-to-all to wait for), while DeepSeek-V3 itself uses EP 64."""
    from experiments.lessons.c10_parallelism import PLANNER_DEFAULTS as D
    x = calc.planner(cfg("deepseek-v3"), D["gpus"], D["cluster"], D["seq"], D["batch"], D["recompute"])
    assert x["rows"] and all(r["ep"] == "—" for r in x["rows"][:3])
