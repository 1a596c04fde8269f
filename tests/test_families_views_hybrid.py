"""Views of the chunked, hybrid and state-space families (llama4, nemotron_h, jamba, falcon_h1), computed by hand
from the published configs in tests/fixtures/models/ and compared with the engine.

- KV cache: attention layers grow with T (chunked layers only up to attention_chunk_size); Mamba layers keep a
  fixed state (SSM state heads × head_dim × d_state plus the conv buffer (conv_kernel − 1) × conv_dim);
- per-token score FLOPs and the crossover T count only the layers whose attention spans the whole context;
- active parameters per token of interleaved MoE with a shared expert (Llama 4 Scout);
- a text-only llama4_text config (Scout's text_config on its own) is exact against transformers' Llama4ForCausalLM;
- a missing or inconsistent family key is a ConfigError naming that key.
"""
import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.errors import ConfigError
from experiments.ledger import build_ledger, views

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"


def config_of(model_id: str) -> dict:
    return json.loads((MODELS / model_id / "config.json").read_text(encoding="utf-8"))


# -- nemotron_h: Mamba-2 layers keep a constant state, attention layers grow --------------------------------------
def nemotron_cache_by_hand(c: dict, T: int) -> int:
    pattern = c["hybrid_override_pattern"]
    n_attn, n_mamba = pattern.count("*"), pattern.count("M")
    kv_per_token = 2 * c["num_key_value_heads"] * c.get("head_dim", c.get("attention_head_dim"))
    d_inner = c["mamba_num_heads"] * c["mamba_head_dim"]
    conv_dim = d_inner + 2 * c["n_groups"] * c["ssm_state_size"]
    state = c["mamba_num_heads"] * c["mamba_head_dim"] * c["ssm_state_size"] + (c["conv_kernel"] - 1) * conv_dim
    return 2 * (n_attn * kv_per_token * T + n_mamba * state)


@pytest.mark.parametrize("T", [1024, 8192])
def test_nemotron_h_cache_by_hand(T):
    c = config_of("nemotron-h-56b")
    ledger = build_ledger(c)
    assert views.cache_bytes_per_sequence(ledger, T) == nemotron_cache_by_hand(c, T)


def test_nemotron_h_cache_numbers():
    """Nemotron-H-56B: 10 attention layers × 2·8·128 K/V elements per token; 54 Mamba-2 layers × (256·64·256 SSM
    state + 3 × 20,480 conv buffer) = 54 × 4,255,744 elements, in BF16."""
    ledger = build_ledger(config_of("nemotron-h-56b"))
    fixed = 54 * (256 * 64 * 256 + 3 * (256 * 64 + 2 * 8 * 256)) * 2
    assert fixed == 459_620_352
    assert views.cache_bytes_per_sequence(ledger, 1024) == 10 * 2048 * 1024 * 2 + fixed
    assert views.cache_bytes_per_sequence(ledger, 8192) == 10 * 2048 * 8192 * 2 + fixed
    # only the attention layers grow: the difference is theirs alone
    assert (views.cache_bytes_per_sequence(ledger, 8192) - views.cache_bytes_per_sequence(ledger, 1024)
            == 10 * 2048 * (8192 - 1024) * 2)
    assert views.kv_bytes_per_token(ledger) == 10 * 2048 * 2


def test_nemotron_h_layers_and_views():
    ledger = build_ledger(config_of("nemotron-h-56b"))
    assert ledger.layer_types == ["mamba", "mlp", "full_attention"]
    assert [ledger.layer(t).n for t in ledger.layer_types] == [54, 54, 10]
    assert views.score_flops_per_context_token(ledger) == 10 * 2 * (2 * 64 * 128)
    parts = views.breakdown(ledger)
    assert sum(parts.values()) == ledger.total
    mamba_layer = 8192 * 37120 + 20480 * 4 + 20480 + 3 * 256 + 16384 + 8192 * 16384
    assert parts["mamba"] == 54 * mamba_layer
    assert views.mixer_per_layer(ledger, "mamba") == mamba_layer
    assert views.mixer_per_layer(ledger, "mlp") == 0


def test_nemotron_h_moe_active_per_token():
    """Nemotron-3-Nano: 23 MoE layers, each: router 128·d, 6 of 128 relu² experts (up + down, 2·d·1856) and one
    shared expert (2·d·3712); the router's e_score_correction_bias is a transformers buffer."""
    c = config_of("nemotron-3-nano-30b-a3b")
    ledger = build_ledger(c)
    d, V = c["hidden_size"], c["vocab_size"]
    pattern = c["hybrid_override_pattern"]
    n_moe, n_attn, n_mamba = pattern.count("E"), pattern.count("*"), pattern.count("M")
    assert (n_moe, n_attn, n_mamba) == (23, 6, 23)
    moe_active = 128 * d + 128 + 6 * 2 * d * 1856 + 2 * d * 3712
    attn = d * 32 * 128 * 2 + d * 2 * 128 * 2
    d_inner, conv_dim = 64 * 64, 64 * 64 + 2 * 8 * 128
    mamba = d * (d_inner + conv_dim + 64) + conv_dim * 4 + conv_dim + 3 * 64 + d_inner + d_inner * d
    by_hand = 2 * V * d + d + n_moe * (moe_active + d) + n_attn * (attn + d) + n_mamba * (mamba + d)
    assert ledger.active_per_token == by_hand
    assert ledger.hf_buffers == 23 * 128


# -- llama4: chunked layers stop at the chunk, NoPE layers attend to everything -----------------------------------
def test_llama4_layer_types():
    ledger = build_ledger(config_of("llama-4-scout-17b-16e"))
    assert ledger.layer_types == ["chunked_attention", "full_attention"]
    assert ledger.layer("chunked_attention").n == 36 and ledger.layer("full_attention").n == 12
    assert ledger.arch.layer_types[3] == "full_attention" and ledger.arch.layer_types[:3] == ["chunked_attention"] * 3


@pytest.mark.parametrize("T", [4096, 8192, 16384, 1_000_000])
def test_llama4_cache_below_and_above_the_chunk(T):
    t = config_of("llama-4-scout-17b-16e")["text_config"]
    chunk = t["attention_chunk_size"]
    kv = 2 * t["num_key_value_heads"] * t["head_dim"]
    n_full = sum(1 for i in range(t["num_hidden_layers"]) if (i + 1) % 4 == 0)   # no_rope_layers [] -> every 4th
    n_chunked = t["num_hidden_layers"] - n_full
    by_hand = 2 * (n_full * kv * T + n_chunked * kv * min(T, chunk))
    ledger = build_ledger(config_of("llama-4-scout-17b-16e"))
    assert views.cache_bytes_per_sequence(ledger, T) == by_hand


def test_llama4_cache_numbers():
    ledger = build_ledger(config_of("llama-4-scout-17b-16e"))
    assert views.cache_bytes_per_sequence(ledger, 4096) == 48 * 2048 * 4096 * 2            # below the chunk
    assert views.cache_bytes_per_sequence(ledger, 16384) == (12 * 2048 * 16384 + 36 * 2048 * 8192) * 2
    assert views.kv_bytes_per_token(ledger) == 12 * 2048 * 2                               # only NoPE layers grow


def test_llama4_score_flops_and_crossover_use_the_real_spans():
    ledger = build_ledger(config_of("llama-4-scout-17b-16e"))
    score_width = 2 * 40 * 128
    assert views.score_flops_per_context_token(ledger) == 12 * 2 * score_width
    T = 20000
    assert views.attention_score_flops(ledger, T) == 2 * score_width * (12 * T + 36 * 8192)
    ffn_per_layer = 16 * 5120 + 3 * 5120 * 8192 + 3 * 5120 * 8192        # router + 1 routed + shared expert
    assert views.ffn_flops_per_token(ledger) == 2 * 48 * ffn_per_layer
    assert views.crossover_T(ledger) == Fraction(2 * 48 * ffn_per_layer, 12 * 2 * score_width)


def test_llama4_scout_active_per_token_by_hand():
    """Every layer of Scout is MoE (interleave_moe_layer_step 1): one of 16 routed experts plus the shared expert,
    both of width intermediate_size 8192; attention without biases, the qk L2 norm has no weights."""
    t = config_of("llama-4-scout-17b-16e")["text_config"]
    d, V, L, f = t["hidden_size"], t["vocab_size"], t["num_hidden_layers"], t["intermediate_size"]
    h, h_kv, d_h = t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"]
    attn = 2 * d * h * d_h + 2 * d * h_kv * d_h
    ffn_active = t["num_local_experts"] * d + t["num_experts_per_tok"] * 3 * d * f + 3 * d * f
    by_hand = V * d + L * (attn + ffn_active + 2 * d) + d + V * d
    ledger = build_ledger(config_of("llama-4-scout-17b-16e"))
    assert ledger.active_per_token == by_hand == 17_172_894_720
    assert ledger.arch.moe.n_shared == 1 and ledger.arch.moe.n_moe_layers == 48


def test_llama4_interleaved_moe_active_per_token():
    """interleave_moe_layer_step 2 (as Maverick): odd layers MoE, even layers a dense SwiGLU of
    intermediate_size_mlp; the dense layers count fully, the MoE layers count router + top-k + shared."""
    c = config_of("llama-4-scout-17b-16e")
    c["text_config"] = dict(c["text_config"], interleave_moe_layer_step=2)
    ledger = build_ledger(c)
    t = c["text_config"]
    d, V, f, f_mlp = t["hidden_size"], t["vocab_size"], t["intermediate_size"], t["intermediate_size_mlp"]
    attn = 2 * d * 40 * 128 + 2 * d * 8 * 128
    dense, moe_active = 3 * d * f_mlp, 16 * d + 3 * d * f + 3 * d * f
    assert ledger.active_per_token == 2 * V * d + d + 24 * (attn + dense + 2 * d) + 24 * (attn + moe_active + 2 * d)
    assert set(ledger.layer_types) == {"chunked_attention_dense", "chunked_attention_moe", "full_attention_moe"}


def test_llama4_text_config_on_its_own():
    """Scout's text_config as a llama4_text config (Llama4ForCausalLM): the same text backbone, and exact against
    transformers (tree and total)."""
    from hf_reference import hf_param_count
    from hf_tree import tree_mismatches

    scout = config_of("llama-4-scout-17b-16e")
    text = dict(copy.deepcopy(scout["text_config"]), architectures=["Llama4ForCausalLM"])
    assert text["model_type"] == "llama4_text"
    ledger = build_ledger(text)
    assert ledger.total == build_ledger(scout).text_backbone == ledger.hf_count
    assert ledger.vision == 0
    assert ledger.hf_count == hf_param_count(text)
    assert tree_mismatches(text) == []


# -- jamba and falcon_h1: Mamba state beside (or instead of) a K/V cache ------------------------------------------
def test_jamba_state_and_cache():
    c = config_of("jamba-v0.1")
    ledger = build_ledger(c)
    d_inner = c["mamba_expand"] * c["hidden_size"]
    state = d_inner * c["mamba_d_state"] + (c["mamba_d_conv"] - 1) * d_inner
    n_attn = sum(1 for i in range(32) if i % c["attn_layer_period"] == c["attn_layer_offset"])
    assert n_attn == 4
    kv = 2 * c["num_key_value_heads"] * (c["hidden_size"] // c["num_attention_heads"])
    for T in (1, 4096, 262144):
        assert views.cache_bytes_per_sequence(ledger, T) == 2 * (n_attn * kv * T + (32 - n_attn) * state)
    # attention at i % 8 == 4 (even), MoE at odd i: the attention layers are all dense
    assert sorted(ledger.layer_types) == ["full_attention_dense", "mamba1_dense", "mamba1_moe"]
    assert ledger.active_per_token == 12_110_311_296


def test_falcon_h1_every_layer_has_both_mixers():
    c = config_of("falcon-h1-0.5b-instruct")
    ledger = build_ledger(c)
    layer = ledger.layer("hybrid")
    assert layer.n == 36 and [ch.name for ch in layer.children][:3] == ["self_attn", "mamba", "feed_forward"]
    kv = 2 * c["num_key_value_heads"] * c["head_dim"]
    conv_dim = c["mamba_d_ssm"] + 2 * c["mamba_n_groups"] * c["mamba_d_state"]
    state = c["mamba_n_heads"] * c["mamba_d_head"] * c["mamba_d_state"] + (c["mamba_d_conv"] - 1) * conv_dim
    for T in (100, 16384):
        assert views.cache_bytes_per_sequence(ledger, T) == 2 * 36 * (kv * T + state)
    assert views.kv_bytes_per_token(ledger) == 2 * 36 * kv
    assert views.score_flops_per_context_token(ledger) == 36 * 2 * (2 * 8 * 64)
    parts = views.breakdown(ledger)
    assert parts["mamba"] > 0 and parts["attention"] > 0 and sum(parts.values()) == ledger.total


# -- bad input ------------------------------------------------------------------------------------------------------
def problems_of(config: dict) -> str:
    with pytest.raises(ConfigError) as e:
        build_ledger(config)
    return str(e.value)


def test_nemotron_h_pattern_of_wrong_length_names_the_key():
    c = config_of("nemotron-h-56b")
    c["hybrid_override_pattern"] = c["hybrid_override_pattern"][:-1]
    message = problems_of(c)
    assert "hybrid_override_pattern" in message and "118" in message and "117 entries" in message


def test_nemotron_h_bad_pattern_character_names_the_key():
    c = config_of("nemotron-h-56b")
    c["hybrid_override_pattern"] = "M-X" + c["hybrid_override_pattern"][3:]
    assert "hybrid_override_pattern" in problems_of(c)


def test_nemotron_h_missing_mamba_num_heads_names_the_key():
    c = config_of("nemotron-h-56b")
    del c["mamba_num_heads"]
    assert "'mamba_num_heads'" in problems_of(c)


def test_llama4_missing_key_names_its_nested_path():
    c = config_of("llama-4-scout-17b-16e")
    del c["text_config"]["num_local_experts"]
    assert "text_config.num_local_experts" in problems_of(c)


def test_llama4_no_rope_layers_of_wrong_length_names_the_key():
    c = config_of("llama-4-scout-17b-16e")
    c["text_config"]["no_rope_layers"] = [1, 1, 1, 0]
    assert "text_config.no_rope_layers" in problems_of(c)


def test_jamba_offset_not_below_period_names_the_key():
    c = dict(config_of("jamba-v0.1"), attn_layer_offset=8)
    assert "attn_layer_offset" in problems_of(c)


def test_falcon_h1_head_width_that_does_not_tile_names_the_key():
    c = dict(config_of("falcon-h1-0.5b-instruct"), mamba_d_head=32)
    assert "mamba_d_head" in problems_of(c)


# -- gemma4: sliding layers stop at the window, full layers have their own (global) K/V width ----------------------
@pytest.mark.parametrize("T", [512, 1024, 4096, 262144])
def test_gemma4_cache_below_and_above_the_window(T):
    c = config_of("gemma-4-26b-a4b")
    t = c["text_config"]
    n_full = t["layer_types"].count("full_attention")
    n_sliding = t["num_hidden_layers"] - n_full
    kv_sliding = 2 * t["num_key_value_heads"] * t["head_dim"]
    kv_full = 2 * t["num_global_key_value_heads"] * t["global_head_dim"]     # K and V cached though k_proj is shared
    by_hand = 2 * (n_sliding * kv_sliding * min(T, t["sliding_window"]) + n_full * kv_full * T)
    assert (n_full, n_sliding, kv_sliding, kv_full) == (5, 25, 4096, 2048)
    assert views.cache_bytes_per_sequence(build_ledger(c), T) == by_hand


def test_gemma4_active_per_token_counts_the_dense_mlp_beside_the_experts():
    c = config_of("gemma-4-26b-a4b")
    t = c["text_config"]
    d, V, E, k, f, f_e = (t["hidden_size"], t["vocab_size"], t["num_experts"], t["top_k_experts"],
                          t["intermediate_size"], t["moe_intermediate_size"])
    sliding_attn = d * 16 * 256 + 2 * d * 8 * 256 + 16 * 256 * d + 2 * 256
    full_attn = d * 16 * 512 + d * 2 * 512 + 16 * 512 * d + 2 * 512            # no v_proj
    per_layer = 3 * d * f + E * d + d + E + k * 3 * d * f_e + 7 * d + 1         # + layer_scalar buffer
    by_hand = V * d + 25 * (sliding_attn + per_layer) + 5 * (full_attn + per_layer) + d      # tied lm_head
    ledger = build_ledger(c)
    assert ledger.active_per_token == by_hand
    assert ledger.hf_buffers == 30 + 2 * c["vision_config"]["hidden_size"]


def test_gemma4_unsupported_per_layer_inputs_name_the_key():
    c = config_of("gemma-4-26b-a4b")
    c["text_config"]["hidden_size_per_layer_input"] = 256
    assert "text_config.hidden_size_per_layer_input" in problems_of(c)
