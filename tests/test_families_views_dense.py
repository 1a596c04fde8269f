"""Dense families with their own attention, norm and MLP conventions (phi, phi3, gpt_neox, falcon, starcoder2,
granite, glm4, ernie4_5, hunyuan_v1_dense): what the views read from their ledgers, computed by hand from the
configs, plus the cases the published fixtures in tests/fixtures/models/ do not cover, each checked against
transformers on the meta device.

Configs derived here, and where their values come from (no verbatim published config.json of these was found in
the stored sources):
- STARCODER2_3B: the architecture keys of bigcode/starcoder2-3b's config.json as quoted key-for-key in public test
  code ("golden values from bigcode/starcoder2-3b's real config.json"); keys it does not quote take the
  Starcoder2Config defaults (use_bias true, tied head).
- GRANITE: GraniteConfig's defaults with biases switched on and the four Granite multipliers set (they have no
  parameters), to exercise attention_bias and mlp_bias.
- GLM4: Glm4Config's defaults (the GLM-4-9B-0414 shapes: 40 layers, d 4096, GQA 32/2, head_dim 128).
- FALCON_40B_LIKE: the new decoder architecture (grouped KV, two LayerNorms per parallel block) with
  Falcon-40B's sizes (60 layers, d 8192, 128 heads, 8 KV heads, vocab 65024) as public conversion code lists them;
  variants with one LayerNorm, a sequential block and ALiBi with biases (Falcon-RW style) follow from it.
"""
import json
from pathlib import Path

import pytest

from experiments.errors import ConfigError
from experiments.ledger import build_ledger, views
from hf_reference import hf_param_count
from hf_tree import tree_mismatches

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "fixtures" / "models"


def fixture(name: str) -> dict:
    return json.loads((MODELS / name / "config.json").read_text(encoding="utf-8"))


STARCODER2_3B = {"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2", "vocab_size": 49152,
                 "hidden_size": 3072, "intermediate_size": 12288, "num_hidden_layers": 30,
                 "num_attention_heads": 24, "num_key_value_heads": 2, "max_position_embeddings": 16384,
                 "norm_epsilon": 1e-05, "rope_theta": 999999.4420358813, "sliding_window": 4096, "use_bias": True}
GRANITE = {"architectures": ["GraniteForCausalLM"], "model_type": "granite", "vocab_size": 32000,
           "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "attention_bias": True, "mlp_bias": True, "embedding_multiplier": 12.0,
           "residual_multiplier": 0.22, "attention_multiplier": 0.0078125, "logits_scaling": 8.0}
GLM4 = {"architectures": ["Glm4ForCausalLM"], "model_type": "glm4", "vocab_size": 151552, "hidden_size": 4096,
        "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2,
        "head_dim": 128, "attention_bias": True, "partial_rotary_factor": 0.5, "tie_word_embeddings": False}
FALCON_40B_LIKE = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "vocab_size": 65024,
                   "hidden_size": 8192, "num_hidden_layers": 60, "num_attention_heads": 128, "num_kv_heads": 8,
                   "new_decoder_architecture": True, "parallel_attn": True, "bias": False, "alibi": False}
FALCON_ONE_NORM = dict(FALCON_40B_LIKE, num_ln_in_parallel_attn=1)
FALCON_SEQUENTIAL_ALIBI = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "vocab_size": 50304,
                           "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 32,
                           "multi_query": False, "parallel_attn": False, "new_decoder_architecture": False,
                           "alibi": True, "bias": True, "tie_word_embeddings": True}
PHI_QK_TIED = dict(fixture("phi-2"), qk_layernorm=True, tie_word_embeddings=True)
NEOX_SEQUENTIAL = dict(fixture("pythia-1b"), use_parallel_residual=False, attention_bias=False)
HUNYUAN_UNTIED_BIAS = dict(fixture("hunyuanimage-2.1-reprompt"), tie_word_embeddings=False, attention_bias=True)
ERNIE_BIAS = dict(fixture("ernie-4.5-0.3b-pt"), use_bias=True, tie_word_embeddings=False)

DERIVED = {"starcoder2-3b": STARCODER2_3B, "granite": GRANITE, "glm4": GLM4, "falcon-40b-like": FALCON_40B_LIKE,
           "falcon-one-norm": FALCON_ONE_NORM, "falcon-sequential-alibi": FALCON_SEQUENTIAL_ALIBI,
           "phi-qk-tied": PHI_QK_TIED, "neox-sequential": NEOX_SEQUENTIAL, "hunyuan-untied-bias": HUNYUAN_UNTIED_BIAS,
           "ernie-bias": ERNIE_BIAS}


@pytest.mark.parametrize("name", list(DERIVED))
def test_derived_configs_match_transformers(name):
    config = DERIVED[name]
    ledger = build_ledger(config)
    assert ledger.hf_count == ledger.total == hf_param_count(config)
    assert tree_mismatches(config) == []


# -- parallel blocks ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config, parallel", [
    (fixture("phi-2"), True), (fixture("pythia-1b"), True), (fixture("falcon-7b-instruct"), True),
    (FALCON_40B_LIKE, True), (NEOX_SEQUENTIAL, False), (FALCON_SEQUENTIAL_ALIBI, False),
    (fixture("phi-4"), False), (STARCODER2_3B, False)])
def test_parallel_blocks_are_marked(config, parallel):
    ledger = build_ledger(config)
    [layer_type] = ledger.layer_types
    assert (ledger.layer(layer_type).kind == "parallel") is parallel
    layers = ledger.to_json()["tree"]["children"][0]["children"][1]
    assert (layers["children"][0].get("kind") == "parallel") is parallel


def test_falcon_norms_follow_the_block_wiring():
    names = lambda config: sorted(c.name for c in build_ledger(config).layer("full_attention").children
                                  if c.kind == "norm")
    assert names(fixture("falcon-7b-instruct")) == ["input_layernorm"]
    assert names(FALCON_40B_LIKE) == ["ln_attn", "ln_mlp"]
    assert names(FALCON_ONE_NORM) == ["input_layernorm"]
    assert names(FALCON_SEQUENTIAL_ALIBI) == ["input_layernorm", "post_attention_layernorm"]


# -- KV cache: multi-query, grouped, sliding window -----------------------------------------------------------------
def test_falcon_7b_multi_query_caches_one_kv_head():
    c = fixture("falcon-7b-instruct")
    ledger = build_ledger(c)
    head_dim = c["hidden_size"] // c["num_attention_heads"]          # 4544 / 71 = 64
    per_token = c["num_hidden_layers"] * 2 * 1 * head_dim * 2         # K and V of one head, BF16
    assert views.kv_bytes_per_token(ledger) == per_token == 8192
    qkv = ledger.root.find("text/layers/full_attention/self_attention/query_key_value.weight")
    assert qkv.shape == (c["hidden_size"] + 2 * head_dim, c["hidden_size"])


def test_falcon_new_architecture_caches_its_kv_heads():
    ledger = build_ledger(FALCON_40B_LIKE)
    c = FALCON_40B_LIKE
    head_dim = c["hidden_size"] // c["num_attention_heads"]
    assert views.kv_bytes_per_token(ledger) == c["num_hidden_layers"] * 2 * c["num_kv_heads"] * head_dim * 2


@pytest.mark.parametrize("config, window_key", [(STARCODER2_3B, "sliding_window"),
                                                (fixture("phi-3-mini-4k-instruct"), "sliding_window")])
def test_sliding_window_caps_cache_and_score_work(config, window_key):
    ledger = build_ledger(config)
    W, L = config[window_key], config["num_hidden_layers"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = config["hidden_size"] // heads
    assert ledger.layer_types == ["sliding_attention"]
    assert ledger.arch.mixer("sliding_attention").window == W
    for T in (W // 2, W, 4 * W):
        assert views.cache_bytes_per_sequence(ledger, T) == L * 2 * kv * head_dim * min(T, W) * 2
        assert views.attention_score_flops(ledger, T) == L * 2 * (2 * heads * head_dim) * min(T, W)
    assert views.cache_bytes_per_sequence(ledger, 4 * W) == views.cache_bytes_per_sequence(ledger, W)
    assert views.kv_bytes_per_token(ledger) == 0        # no layer's cache grows past the window
    assert views.crossover_T(ledger) is None


def test_phi4_without_window_grows_with_context():
    c = fixture("phi-4")
    ledger = build_ledger(c)
    head_dim = c["hidden_size"] // c["num_attention_heads"]
    assert ledger.layer_types == ["full_attention"]
    assert views.cache_bytes_per_sequence(ledger, 16384) == 16384 * views.kv_bytes_per_token(ledger) \
        == 16384 * c["num_hidden_layers"] * 2 * c["num_key_value_heads"] * head_dim * 2


# -- family details ------------------------------------------------------------------------------------------------
def test_phi_head_keeps_its_bias_when_tied():
    V = PHI_QK_TIED["vocab_size"]
    head = build_ledger(PHI_QK_TIED).root.find("text/lm_head")
    assert [(c.name, c.shape) for c in head.children] == [("bias", (V,))]


def test_fused_projections_hold_the_same_weights_as_separate_ones():
    c = fixture("phi-3-mini-4k-instruct")
    d, d_ff = c["hidden_size"], c["intermediate_size"]
    layer = build_ledger(c).layer("sliding_attention")
    assert layer.find("text/layers/sliding_attention/self_attn/qkv_proj.weight").count == 3 * d * d
    assert layer.find("text/layers/sliding_attention/mlp/gate_up_proj.weight").count == 2 * d_ff * d
    assert build_ledger(c).arch.ffn_matrices == 3


def test_glm4_has_four_norms_per_layer_and_no_o_bias():
    layer = build_ledger(GLM4).layer("full_attention")
    assert sorted(c.name for c in layer.children if c.kind == "norm") == [
        "input_layernorm", "post_attention_layernorm", "post_mlp_layernorm", "post_self_attn_layernorm"]
    attn = [c.name for c in layer.find("text/layers/full_attention/self_attn").children]
    assert "q_proj.bias" in attn and "o_proj.bias" not in attn


def test_hunyuan_normalises_q_and_k_per_head():
    c = fixture("hunyuanimage-2.1-reprompt")
    attn = build_ledger(c).root.find("text/layers/full_attention/self_attn")
    shapes = {n.name: n.shape for n in attn.children}
    assert shapes["query_layernorm.weight"] == shapes["key_layernorm.weight"] == (c["head_dim"],)


def test_granite_multipliers_add_no_parameters():
    plain = {k: v for k, v in GRANITE.items() if not k.endswith(("multiplier", "scaling"))}
    assert build_ledger(plain).total == build_ledger(GRANITE).total


# -- bad input ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("config, key", [
    ({k: v for k, v in fixture("falcon-7b-instruct").items() if k != "hidden_size"}, "hidden_size"),
    (dict(FALCON_40B_LIKE, num_kv_heads=7), "num_kv_heads"),
    (dict(fixture("falcon-7b-instruct"), num_attention_heads=70), "num_attention_heads"),
    ({k: v for k, v in STARCODER2_3B.items() if k != "intermediate_size"}, "intermediate_size"),
    (dict(STARCODER2_3B, sliding_window="4k"), "sliding_window"),
    ({k: v for k, v in GLM4.items() if k != "num_attention_heads"}, "num_attention_heads"),
    (dict(fixture("phi-2"), qk_layernorm="yes"), "qk_layernorm"),
    (dict(fixture("pythia-1b"), use_parallel_residual=1), "use_parallel_residual"),
    (dict(fixture("ernie-4.5-0.3b-pt"), use_bias="no"), "use_bias"),
    (dict(fixture("hunyuanimage-2.1-reprompt"), num_key_value_heads=5), "num_key_value_heads"),
])
def test_bad_family_key_names_the_key(config, key):
    with pytest.raises(ConfigError) as e:
        build_ledger(config)
    assert key in [p.key for p in e.value.problems]
