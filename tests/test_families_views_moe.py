"""Views of the MoE families: mixtral, qwen2_moe, deepseek_v2, glm4_moe, granitemoe,
minimax_m2, hunyuan_v1_moe, ernie4_5_moe, and Kimi-K2 read through its architectures class.

Expected numbers are written out as arithmetic on the config values read from the fixture files
(tests/fixtures/models/<id>/config.json), one layer at a time, so a wrong shape in the engine cannot be copied into
the test: active parameters per token (routed experts top-k only; shared experts, dense first layers and routers
always), Arch.moe, MLA's latent cache, sliding-window caches, and a missing family-specific key naming itself.
ERNIE-4.5 MoE has no published config.json fixture (none could be found); it is checked against transformers
on Ernie4_5_MoeConfig's own defaults, which are ERNIE-4.5-21B-A3B's sizes.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.errors import ConfigError
from experiments.ledger import build_ledger, views

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "models"


def moe_counts(moe) -> dict:
    """The counts of a model's MoE facts (their config keys are checked in tests/test_engine_moe.py)."""
    return {k: getattr(moe, k)
            for k in ("n_experts", "top_k", "n_shared", "expert_d_ff", "shared_d_ff", "n_moe_layers")}


def fixture(model_id: str) -> dict:
    return json.loads((FIXTURES / model_id / "config.json").read_text(encoding="utf-8"))


def without(cfg: dict, key: str) -> dict:
    return {k: v for k, v in cfg.items() if k != key}


def gqa(d, h, kv, dh, *, qkv_bias=False, o_bias=False, qk_norm=0):
    """q, k, v, o of grouped-query attention, optional biases and per-head (or whole-width) q/k norm weights."""
    n = d * h * dh + 2 * d * kv * dh + h * dh * d
    if qkv_bias:
        n += h * dh + 2 * kv * dh
    if o_bias:
        n += d
    return n + qk_norm


def gated(d, width):
    return 3 * d * width


# -- active parameters per token, by hand ------------------------------------------------------------------------
def test_mixtral_active_per_token():
    c = fixture("mixtral-8x7b")
    d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    h, kv = c["num_attention_heads"], c["num_key_value_heads"]
    dh = d // h
    E, k, ff = c["num_local_experts"], c["num_experts_per_tok"], c["intermediate_size"]
    layer_active = gqa(d, h, kv, dh) + d * E + k * gated(d, ff) + 2 * d
    layer_total = gqa(d, h, kv, dh) + d * E + E * gated(d, ff) + 2 * d
    ledger = build_ledger(c)
    assert ledger.active_per_token == L * layer_active + V * d + d + V * d
    assert ledger.total == L * layer_total + V * d + d + V * d
    assert moe_counts(ledger.arch.moe) == {"n_experts": 8, "top_k": 2, "n_shared": 0, "expert_d_ff": 14336,
                               "shared_d_ff": 0, "n_moe_layers": 32}


def test_qwen2_moe_active_per_token_counts_the_shared_expert_and_its_gate():
    c = fixture("qwen2-57b-a14b")
    d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    h, kv = c["num_attention_heads"], c["num_key_value_heads"]
    dh = d // h
    E, k = c["num_experts"], c["num_experts_per_tok"]
    ff_e, ff_s = c["moe_intermediate_size"], c["shared_expert_intermediate_size"]
    attn = gqa(d, h, kv, dh, qkv_bias=True)                 # Qwen2: q/k/v biases, o without
    always = attn + d * E + gated(d, ff_s) + d * 1 + 2 * d  # router, shared expert, its sigmoid gate, 2 norms
    ledger = build_ledger(c)
    assert ledger.active_per_token == L * (always + k * gated(d, ff_e)) + 2 * V * d + d
    assert ledger.total == L * (always + E * gated(d, ff_e)) + 2 * V * d + d
    assert moe_counts(ledger.arch.moe) == {"n_experts": 64, "top_k": 8, "n_shared": 1, "expert_d_ff": 2560,
                               "shared_d_ff": 20480, "n_moe_layers": 28}
    assert ledger.layer_types == ["full_attention"]      # use_sliding_window false: no window


def mla_params(c):
    d, h = c["hidden_size"], c["num_attention_heads"]
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    r_kv = c["kv_lora_rank"]
    assert c["q_lora_rank"] is None                      # V2-Lite: one q_proj, no query bottleneck
    return (d * h * (nope + rope)                        # q_proj
            + d * (r_kv + rope) + r_kv                   # kv_a_proj_with_mqa, kv_a_layernorm
            + r_kv * h * (nope + v)                      # kv_b_proj
            + h * v * d)                                 # o_proj


def test_deepseek_v2_active_per_token_dense_first_layer_and_shared_experts():
    c = fixture("deepseek-v2-lite")
    d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    E, k, S = c["n_routed_experts"], c["num_experts_per_tok"], c["n_shared_experts"]
    ff, ff_e, dense = c["intermediate_size"], c["moe_intermediate_size"], c["first_k_dense_replace"]
    attn = mla_params(c)
    dense_layer = attn + gated(d, ff) + 2 * d
    moe_always = attn + d * E + S * gated(d, ff_e) + 2 * d
    ledger = build_ledger(c)
    assert ledger.active_per_token == (dense * dense_layer + (L - dense) * (moe_always + k * gated(d, ff_e))
                                       + 2 * V * d + d)
    assert ledger.total == dense * dense_layer + (L - dense) * (moe_always + E * gated(d, ff_e)) + 2 * V * d + d
    assert ledger.layer_types == ["full_attention_dense", "full_attention_moe"]
    assert moe_counts(ledger.arch.moe) == {"n_experts": 64, "top_k": 6, "n_shared": 2, "expert_d_ff": 1408,
                               "shared_d_ff": 1408, "n_moe_layers": 26}
    assert ledger.mtp == 0 and ledger.hf_buffers == 0     # softmax router: no correction-bias buffer


def test_glm4_moe_active_per_token_dense_layers_shared_expert_and_router_buffer():
    c = fixture("glm-4.7")
    d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    h, kv, dh = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    E, k, S = c["n_routed_experts"], c["num_experts_per_tok"], c["n_shared_experts"]
    ff, ff_e, dense = c["intermediate_size"], c["moe_intermediate_size"], c["first_k_dense_replace"]
    attn = gqa(d, h, kv, dh, qkv_bias=True, qk_norm=2 * dh)   # attention_bias on q/k/v only, use_qk_norm
    dense_layer = attn + gated(d, ff) + 2 * d
    # router weight + its e_score_correction_bias (a checkpoint tensor, a buffer in transformers) + shared expert
    moe_always = attn + d * E + E + S * gated(d, ff_e) + 2 * d
    ledger = build_ledger(c)
    assert ledger.active_per_token == (dense * dense_layer + (L - dense) * (moe_always + k * gated(d, ff_e))
                                       + 2 * V * d + d)
    assert ledger.hf_buffers == (L - dense) * E
    # one nextn MTP module: own embedding, enorm, hnorm, eh_proj, a MoE layer, shared_head norm + head
    n_mtp = c["num_nextn_predict_layers"]
    mtp_layer = V * d + 2 * d + 2 * d * d + moe_always + E * gated(d, ff_e) + d + V * d
    assert ledger.mtp == n_mtp * mtp_layer
    assert ledger.total == ledger.text_backbone + ledger.mtp
    assert moe_counts(ledger.arch.moe) == {"n_experts": 160, "top_k": 8, "n_shared": 1, "expert_d_ff": 1536,
                               "shared_d_ff": 1536, "n_moe_layers": 89}


def test_granitemoe_and_minimax_and_hunyuan_active_per_token():
    c = fixture("granite-3.0-1b-a400m")               # tied embeddings, attention_bias false
    d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    h, kv = c["num_attention_heads"], c["num_key_value_heads"]
    E, k, ff = c["num_local_experts"], c["num_experts_per_tok"], c["intermediate_size"]
    granite = build_ledger(c)
    assert granite.active_per_token == L * (gqa(d, h, kv, d // h) + d * E + k * gated(d, ff) + 2 * d) + V * d + d

    c = fixture("minimax-m2.5-nvfp4")                 # q/k norm over the whole projection widths
    d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    h, kv, dh = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    E, k, ff = c["num_local_experts"], c["num_experts_per_tok"], c["intermediate_size"]
    minimax = build_ledger(c)
    attn = gqa(d, h, kv, dh, qk_norm=h * dh + kv * dh)
    assert minimax.active_per_token == L * (attn + d * E + E + k * gated(d, ff) + 2 * d) + 2 * V * d + d
    assert minimax.hf_buffers == L * E and minimax.mtp == 0   # the published checkpoint has no MTP weights

    c = fixture("hunyuan-a13b")                        # model_type "hunyuan", read through its class
    d, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    h, kv, dh = c["num_attention_heads"], c["num_key_value_heads"], c["attention_head_dim"]
    E, k, ff = c["num_experts"], c["moe_topk"][0], c["intermediate_size"]
    S = c["num_shared_expert"][0]
    hunyuan = build_ledger(c)
    assert hunyuan.via_class == "HunYuanMoEV1ForCausalLM" and hunyuan.arch.family == "hunyuan_v1_moe"
    attn = gqa(d, h, kv, dh, qk_norm=2 * dh)
    assert hunyuan.active_per_token == L * (attn + d * E + S * gated(d, ff) + k * gated(d, ff) + 2 * d) + V * d + d
    assert moe_counts(hunyuan.arch.moe) == {"n_experts": 64, "top_k": 8, "n_shared": 1, "expert_d_ff": 3072,
                                "shared_d_ff": 3072, "n_moe_layers": 32}


# -- caches ------------------------------------------------------------------------------------------------------
def test_deepseek_v2_lite_mla_caches_its_latent():
    c = fixture("deepseek-v2-lite")
    ledger = build_ledger(c)
    L, r_kv, rope = c["num_hidden_layers"], c["kv_lora_rank"], c["qk_rope_head_dim"]
    per_token = L * (r_kv + rope) * 2                   # BF16: the latent and the shared rotary key, per layer
    assert per_token == 27 * 576 * 2 == 31_104
    assert views.kv_bytes_per_token(ledger) == per_token
    assert views.cache_bytes_per_sequence(ledger, 4096) == 4096 * per_token
    # far less than expanded K and V for every head (what a plain MHA cache of these heads would hold)
    h, nope, v = c["num_attention_heads"], c["qk_nope_head_dim"], c["v_head_dim"]
    assert per_token * 7 < L * h * ((nope + rope) + v) * 2
    # score work per cached token: q·k over nope + rope dims and the weighted sum of v, every head, every layer
    assert views.score_flops_per_context_token(ledger) == L * 2 * h * (nope + rope + v)


def test_mixtral_sliding_window_cache_stops_at_the_window():
    c = dict(fixture("mixtral-8x7b"), sliding_window=4096)
    ledger = build_ledger(c)
    L, kv, dh, W = c["num_hidden_layers"], c["num_key_value_heads"], c["hidden_size"] // 32, 4096
    assert ledger.layer_types == ["sliding_attention"]
    assert views.cache_bytes_per_sequence(ledger, 1000) == L * 2 * kv * dh * 1000 * 2
    assert views.cache_bytes_per_sequence(ledger, 100_000) == L * 2 * kv * dh * W * 2
    assert views.kv_bytes_per_token(ledger) == 0       # nothing grows past the window
    assert build_ledger(fixture("mixtral-8x7b")).total == ledger.total


def test_qwen2_moe_sliding_layers_follow_transformers_rule():
    c = dict(fixture("qwen2-57b-a14b"), use_sliding_window=True, max_window_layers=4, sliding_window=1024)
    ledger = build_ledger(c)
    # Qwen2MoeConfig.layer_types: layer i slides when i is even and i < max_window_layers -> layers 0 and 2
    assert ledger.arch.layer_types[:5] == ["sliding_attention", "full_attention", "sliding_attention",
                                           "full_attention", "full_attention"]
    L, kv, dh = c["num_hidden_layers"], c["num_key_value_heads"], c["hidden_size"] // c["num_attention_heads"]
    T = 5000
    assert views.cache_bytes_per_sequence(ledger, T) == ((L - 2) * T + 2 * 1024) * 2 * kv * dh * 2


# -- Kimi-K2 through DeepseekV3ForCausalLM -----------------------------------------------------------------------
def test_kimi_k2_is_read_by_the_deepseek_v3_family_and_the_cli_says_so():
    path = FIXTURES / "kimi-k2-instruct" / "config.json"
    ledger = build_ledger(json.loads(path.read_text(encoding="utf-8")))
    assert ledger.via_class == "DeepseekV3ForCausalLM" and ledger.arch.family == "deepseek_v3"
    proc = subprocess.run([sys.executable, "-m", "experiments.ledger", str(path), "--depth", "1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "read as deepseek_v3, the family of DeepseekV3ForCausalLM" in proc.stdout


# -- ERNIE-4.5 MoE on transformers' defaults ---------------------------------------------------------------------
def test_ernie4_5_moe_matches_transformers_on_its_config_defaults():
    from transformers import Ernie4_5_MoeConfig

    from hf_reference import hf_param_count
    from hf_tree import tree_mismatches

    cfg = Ernie4_5_MoeConfig().to_dict()               # hidden 2560, 28 layers, 64 experts top-6, 2 shared
    ledger = build_ledger(cfg)
    assert ledger.hf_count == hf_param_count(cfg) == ledger.total
    assert tree_mismatches(cfg) == []
    d, L, V = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    h, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    E, k, S, ff_e = cfg["moe_num_experts"], cfg["moe_k"], cfg["moe_num_shared_experts"], cfg["moe_intermediate_size"]
    n_moe = cfg["moe_layer_end_index"] - cfg["moe_layer_start_index"] + 1
    assert n_moe == 27 and cfg["tie_word_embeddings"]
    attn = gqa(d, h, kv, d // h)
    dense_layer = attn + gated(d, cfg["intermediate_size"]) + 2 * d
    moe_always = attn + d * E + E + S * gated(d, ff_e) + 2 * d   # router, moe_statics bias (1 x E), shared
    assert ledger.active_per_token == ((L - n_moe) * dense_layer + n_moe * (moe_always + k * gated(d, ff_e))
                                       + V * d + d)


# -- bad input ---------------------------------------------------------------------------------------------------
MISSING = [
    ("mixtral-8x7b", "num_local_experts"),
    ("granite-3.0-1b-a400m", "num_local_experts"),
    ("minimax-m2.5-nvfp4", "num_local_experts"),
    ("qwen2-57b-a14b", "moe_intermediate_size"),
    ("qwen2-57b-a14b", "shared_expert_intermediate_size"),
    ("deepseek-v2-lite", "n_routed_experts"),
    ("deepseek-v2-lite", "moe_intermediate_size"),
    ("deepseek-v2-lite", "kv_lora_rank"),
    ("deepseek-v2-lite", "q_lora_rank"),
    ("glm-4.7", "n_routed_experts"),
    ("glm-4.7", "moe_intermediate_size"),
    ("hunyuan-a13b", "intermediate_size"),
]


@pytest.mark.parametrize("model_id,key", MISSING, ids=[f"{m}-{k}" for m, k in MISSING])
def test_missing_family_key_names_it(model_id, key):
    with pytest.raises(ConfigError) as e:
        build_ledger(without(fixture(model_id), key))
    found = {p.key: p.describe() for p in e.value.problems}
    assert key in found, str(e.value)
    assert "the key is missing" in found[key]


def test_ernie_missing_moe_num_experts_names_it():
    from transformers import Ernie4_5_MoeConfig

    with pytest.raises(ConfigError) as e:
        build_ledger(without(Ernie4_5_MoeConfig().to_dict(), "moe_num_experts"))
    assert "moe_num_experts" in {p.key for p in e.value.problems}


def test_hunyuan_per_layer_lists_must_agree():
    c = fixture("hunyuan-a13b")
    with pytest.raises(ConfigError) as e:
        build_ledger(dict(c, moe_topk=[8] * 31 + [4]))
    found = {p.key: p.describe() for p in e.value.problems}
    assert "a list of 32 equal integers" in found["moe_topk"]
