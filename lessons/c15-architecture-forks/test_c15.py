"""Lesson C15 (分歧): the page shows each fork's costs as computed numbers, and some of them recounted here.

The lesson's prose is rendered the way the build renders it (sitegen.markdown with the course's numbers; the
widgets, which draw their own tables, are left empty) and its number spans are counted: every fork carries its
cache, FLOPs and parameters for each model that takes it, so the prose shows at least 80. A few of those figures
are then recounted from the configs' own keys (data/models/*/config.json read here), not through the engine or
this folder's Python.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sitegen import markdown

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "lessons" / "c15-architecture-forks" / "lesson.md"
WIDGET = re.compile(r"^```\{widget\} (\S+)", re.M)
T = 131072
DENSE = {"llama7b", "gemma_2_9b", "anchor"}      # the fork map's models without routed experts


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def numbers(course_numbers):
    return course_numbers


@pytest.fixture(scope="module")
def page(numbers):
    text = LESSON.read_text(encoding="utf-8")
    widgets = {name: (lambda options, ctx: "") for name in WIDGET.findall(text)}
    glossary = json.loads((ROOT / "data" / "glossary.json").read_text(encoding="utf-8"))   # the {term} roles
    page = markdown.Page("lessons/c15-architecture-forks/lesson.md", numbers, widgets=widgets,
                         data={"glossary": glossary})
    return markdown.render_lesson(text, page)


def value(numbers, name: str):
    return numbers[name].value


def test_the_page_shows_at_least_80_computed_numbers(page):
    shown = re.findall(r'<span class="num"[^>]*>', page.body)
    assert len(shown) >= 80, len(shown)
    assert len(page.used) >= 80        # distinct numbers, each with its entry in the page's 数字口径


def test_every_fork_has_its_costs_for_every_model_that_takes_it(page, numbers):
    """Each fork-map model's cache per token, attention FLOPs per further token and attention parameters; each
    DSA model's indexer FLOPs, index keys and parameters; each MTP model's module; each MoE model's total and active
    parameters: all cited on the page."""
    from experiments.lessons.c15_architecture_forks import FORK_MODELS
    used = set(page.used)
    for alias in FORK_MODELS:
        assert {f"c15.{alias}.kv_per_token", f"c15.{alias}.flops_per_context_token",
                f"c15.{alias}.mixer_params"} <= used, alias
        if f"c15.{alias}.mtp_params" in numbers:
            assert {f"c15.{alias}.mtp_params", f"c15.{alias}.mtp_flops_share"} <= used, alias
        if alias not in DENSE:
            assert {f"{alias}.total", f"{alias}.active_per_token"} <= used, alias
        for device in ("qk_norm", "sinks", "extra_norms"):
            if f"c15.{alias}.{device}_params" in numbers:
                assert f"c15.{alias}.{device}_params" in used, (alias, device)
    for p in ("c15.dsa", "c15.glm_5.dsa"):
        assert {f"{p}.indexer_t128k", f"{p}.attend_t128k", f"{p}.index_key_bytes", f"{p}.index_params"} <= used


def test_dsa_in_mla_mqa_mode_by_hand(numbers):
    """GLM-5 and DeepSeek-V3.2 as the V3.2-Exp report runs DSA: every head scores the shared latent + rotary key
    (kv_lora_rank + qk_rope_head_dim) and sums the latents (kv_lora_rank) of the top index_topk tokens."""
    for model_id, p in (("glm-5", "c15.glm_5.dsa"), ("deepseek-v3.2", "c15.dsa")):
        c = cfg(model_id)
        L, h, k = c["num_hidden_layers"], c["num_attention_heads"], c["index_topk"]
        key, val = c["kv_lora_rank"] + c["qk_rope_head_dim"], c["kv_lora_rank"]
        assert value(numbers, f"{p}.mqa_key_dim") == key and value(numbers, f"{p}.mqa_value_dim") == val
        assert value(numbers, f"{p}.attend_t128k") == L * h * (2 * key + 2 * val) * k
        assert value(numbers, f"{p}.dense_t128k") == L * h * (2 * key + 2 * val) * T
        assert value(numbers, f"{p}.indexer_t128k") == L * 2 * c["index_n_heads"] * (c["index_head_dim"] + 1) * T
        assert value(numbers, f"{p}.index_key_bytes") == L * c["index_head_dim"] * 2
    # the report's figures for DeepSeek-V3.2's MQA mode: keys of 576, values of 512
    assert value(numbers, "c15.dsa.mqa_key_dim") == 576 and value(numbers, "c15.dsa.mqa_value_dim") == 512


def test_new_costs_by_hand(numbers):
    """A few of the table's figures from the config keys alone."""
    kimi = cfg("kimi-k2.5")["text_config"]
    L, h = kimi["num_hidden_layers"], kimi["num_attention_heads"]
    assert value(numbers, "c15.kimi_k2_5.kv_per_token") == L * (kimi["kv_lora_rank"] + kimi["qk_rope_head_dim"]) * 2
    expanded = L * h * (kimi["qk_nope_head_dim"] + kimi["qk_rope_head_dim"] + kimi["v_head_dim"]) * 2
    assert value(numbers, "c15.kimi_k2_5.mha_kv_per_token") == expanded
    ds = cfg("deepseek-v3.2")       # past top_k only the indexer grows
    assert value(numbers, "c15.deepseek_v3_2.flops_per_context_token") == \
        ds["num_hidden_layers"] * 2 * ds["index_n_heads"] * (ds["index_head_dim"] + 1)
    mm = cfg("minimax-m2.5")        # GQA in every layer: q·k and the sum of v over every query head
    assert value(numbers, "c15.minimax_m2_5.flops_per_context_token") == \
        mm["num_hidden_layers"] * 2 * mm["num_attention_heads"] * 2 * mm["head_dim"]
    oss = cfg("gpt-oss-120b")       # only the full-attention layers grow
    full = oss["layer_types"].count("full_attention")
    assert value(numbers, "c15.gpt_oss_120b.flops_per_context_token") == \
        full * 2 * oss["num_attention_heads"] * 2 * oss["head_dim"]
    llama = cfg("llama-2-7b")       # q, k, v, o: d × d each, no bias
    assert value(numbers, "c15.llama7b.mixer_params") == llama["num_hidden_layers"] * 4 * llama["hidden_size"] ** 2


def test_the_kv_head_field_is_never_read_silently():
    """A count below 1 or past the field's max is refused whatever the swap. Every swap but MLA -> GQA gives the same
    answer for any count: the page disables the field under them, with that reason (message c15.what_if.kv_unused;
    issue #49); under MLA -> GQA the count changes the answer."""
    from experiments.ledger.forks import WHAT_IFS
    from experiments.lessons.c15_architecture_forks import calc
    c = cfg("deepseek-v3")
    for swap in ("none", "mla_to_gqa"):
        for bad in (0, -5, calc.KV_MAX + 1):
            with pytest.raises(ValueError, match="KV 头数应在 1 到"):
                calc.what_if_view(c, swap, 4096, bad)
    for model in ("deepseek-v3", "qwen3-next-80b-a3b", "gpt-oss-120b"):
        for swap in WHAT_IFS:
            if swap != "mla_to_gqa":
                assert calc.what_if_view(cfg(model), swap, 4096, 8) == calc.what_if_view(cfg(model), swap, 4096, 16)
    assert calc.what_if_view(c, "mla_to_gqa", 4096, 8)["rows"] != calc.what_if_view(c, "mla_to_gqa", 4096, 16)["rows"]
