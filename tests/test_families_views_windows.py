"""Sliding-window layers, parallel blocks and norm placements (gemma, gemma2, gemma3_text, gemma3, cohere, cohere2,
olmo, olmo2, exaone4, smollm3): what the ledger's views make of their layers, beyond the counts test_families.py checks.

- sliding-window layers: the KV cache and the score FLOPs of gemma2 (alternating), gemma3 (every 6th layer
  global), exaone4 ("LLLG") and cohere2 (every 4th global) at a context below and above the window, computed
  by hand from the config: each sliding layer stops at `sliding_window` tokens, each global one keeps growing;
- gemma3's vision part is exactly transformers' vision tower + multi_modal_projector, the text part exactly its
  language model;
- cohere's parallel block (one norm, kind "parallel"), olmo's parameter-free LayerNorms, olmo2's all-head q/k
  norms, smollm3's NoPE layers (same tensors, transformers' layer types);
- bad input: a missing or malformed family key is a ConfigError naming that key.

No published config.json of OLMo-1B/7B-hf (olmo) or c4ai-command-r7b (cohere2) could be found in the stored
public sources, so those two families are checked here on configs derived from the transformers 5.23
configuration classes' defaults (OlmoConfig(), Cohere2Config(); `_class_default_config`), against transformers
on the meta device like the published fixtures are.
"""
import json
from pathlib import Path

import pytest

from experiments.errors import ConfigError
from experiments.ledger import build_ledger, views

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "models"


def fixture(model_id: str) -> dict:
    return json.loads((FIXTURES / model_id / "config.json").read_text(encoding="utf-8"))


def _class_default_config(model_type: str) -> dict:
    """The config transformers' configuration class gives with no arguments, as a config.json would hold it."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    config = CONFIG_MAPPING[model_type]().to_dict()
    for key in ("id2label", "label2id"):              # classifier-head bookkeeping, not architecture
        config.pop(key, None)
    return config


def cache_by_hand(n_sliding: int, n_full: int, kv_per_token: int, window: int, T: int) -> int:
    """Bytes (BF16) of the K/V cache of one sequence of T tokens."""
    return 2 * kv_per_token * (n_sliding * min(T, window) + n_full * T)


# -- sliding windows ---------------------------------------------------------------------------------------------
SLIDING = [
    # id, layers sliding, layers global, KV heads, head_dim, window
    ("gemma-2-9b", 21, 21, 8, 256, 4096),          # 42 layers, even ones slide
    ("gemma-3-1b-it", 22, 4, 1, 256, 512),          # 26 layers, layers 6, 12, 18, 24 (1-based) global
    ("gemma-3-27b-it", 52, 10, 16, 128, 1024),      # text_config: 62 layers, every 6th global
    ("exaone-4.0-32b", 48, 16, 8, 128, 4096),       # "LLLG" x 16
]


@pytest.mark.parametrize("model_id, n_sliding, n_full, n_kv, head_dim, window", SLIDING, ids=[s[0] for s in SLIDING])
def test_sliding_layers_cache_and_scores_stop_at_the_window(model_id, n_sliding, n_full, n_kv, head_dim, window):
    ledger = build_ledger(fixture(model_id))
    types = ledger.arch.layer_types
    assert types.count("sliding_attention") == n_sliding and types.count("full_attention") == n_full
    assert ledger.arch.sliding_window == window
    kv = 2 * n_kv * head_dim
    for T in (window // 2, window, 8 * window):
        assert views.cache_bytes_per_sequence(ledger, T) == cache_by_hand(n_sliding, n_full, kv, window, T)
    # only the global layers add cache with every new token once the windows are full
    assert views.kv_bytes_per_token(ledger) == 2 * n_full * kv
    n_heads = ledger.arch.n_heads
    T = 4 * window
    assert views.attention_score_flops(ledger, T) == \
        2 * 2 * n_heads * head_dim * (n_sliding * window + n_full * T)
    assert views.score_flops_per_context_token(ledger) == n_full * 2 * 2 * n_heads * head_dim


def test_gemma2_without_layer_types_alternates_and_gemma3_pattern_key_is_read():
    config = fixture("gemma-2-9b")
    assert "layer_types" not in config
    assert build_ledger(config).arch.layer_types[:4] == ["sliding_attention", "full_attention"] * 2
    config = dict(fixture("gemma-3-1b-it"), sliding_window_pattern=2)
    config.pop("layer_types", None)
    types = build_ledger(config).arch.layer_types
    assert types.count("full_attention") == 13 and types[1] == "full_attention"


def test_exaone4_pattern_string_matches_its_layer_types():
    listed = build_ledger(fixture("exaone-4.0-32b")).arch.layer_types
    config = fixture("exaone-4.0-32b")
    del config["layer_types"]                       # "sliding_window_pattern": "LLLG" alone
    assert build_ledger(config).arch.layer_types == listed
    config["sliding_window"] = None                 # no window: every layer global
    assert set(build_ledger(config).arch.layer_types) == {"full_attention"}


# -- cohere / cohere2 --------------------------------------------------------------------------------------------
def test_cohere_layers_are_parallel_blocks_with_one_bias_free_layernorm():
    config = fixture("c4ai-command-r-v01")
    ledger = build_ledger(config)
    layer = ledger.layer("full_attention")
    assert layer.kind == "parallel" and layer.n == 40
    d, d_ff = config["hidden_size"], config["intermediate_size"]
    assert [c.name for c in layer.children] == ["self_attn", "mlp", "input_layernorm"]
    assert layer.per_copy == 4 * d * d + 3 * d * d_ff + d
    # the parallel shape changes no count and no FLOP: FFN and attention weights as in a sequential layer
    parts = views.breakdown(ledger)
    assert parts["attention"] == 40 * 4 * d * d and parts["ffn"] == 40 * 3 * d * d_ff
    assert parts["norm"] == 41 * d and "lm_head" not in parts          # tied
    assert views.ffn_flops_per_token(ledger) == 2 * 40 * 3 * d * d_ff


def test_cohere_qk_norm_is_per_head():
    config = dict(fixture("c4ai-command-r-v01"), use_qk_norm=True)
    attn = build_ledger(config).layer("full_attention").children[0]
    shapes = {c.name: c.shape for c in attn.children}
    assert shapes["q_norm.weight"] == (64, 128) and shapes["k_norm.weight"] == (64, 128)


@pytest.mark.parametrize("drop_layer_types", [False, True], ids=["layer_types", "pattern"])
def test_cohere2_from_class_defaults_matches_transformers(drop_layer_types):
    from hf_reference import hf_param_count
    from hf_tree import tree_mismatches

    config = _class_default_config("cohere2")
    if drop_layer_types:
        del config["layer_types"]
        config["sliding_window_pattern"] = 4
    ledger = build_ledger(config)
    assert ledger.hf_count == hf_param_count(config)
    assert tree_mismatches(config) == []
    types = ledger.arch.layer_types
    assert types.count("sliding_attention") == 30 and types[3::4] == ["full_attention"] * 10
    assert all(ledger.layer(t).kind == "parallel" for t in ledger.layer_types)
    d, h = config["hidden_size"], config["num_attention_heads"]
    kv = 2 * config["num_key_value_heads"] * (d // h)           # head_dim is always hidden_size / heads
    for T in (1000, 4096, 20000):
        assert views.cache_bytes_per_sequence(ledger, T) == cache_by_hand(30, 10, kv, 4096, T)


# -- olmo / olmo2 ------------------------------------------------------------------------------------------------
def test_olmo_from_class_defaults_matches_transformers_with_parameter_free_norms():
    from hf_reference import hf_param_count
    from hf_tree import tree_mismatches

    config = _class_default_config("olmo")
    ledger = build_ledger(config)
    assert ledger.hf_count == hf_param_count(config)
    assert tree_mismatches(config) == []
    d, L, V, d_ff = (config[k] for k in ("hidden_size", "num_hidden_layers", "vocab_size", "intermediate_size"))
    assert ledger.total == 2 * V * d + L * (4 * d * d + 3 * d * d_ff)       # untied; no norm weights at all
    assert views.breakdown(ledger)["norm"] == 0
    layer = ledger.layer("full_attention")
    assert {c.name: c.count for c in layer.children if c.kind == "norm"} == \
        {"input_layernorm": 0, "post_attention_layernorm": 0}


def test_olmo2_norms_come_after_each_block_and_qk_norms_span_all_heads():
    config = fixture("olmo-2-1124-13b")
    layer = build_ledger(config).layer("full_attention")
    assert sorted(c.name for c in layer.children if c.kind == "norm") == \
        ["post_attention_layernorm", "post_feedforward_layernorm"]
    attn = {c.name: c.shape for c in layer.children[0].children}
    assert attn["q_norm.weight"] == (40 * 128,) and attn["k_norm.weight"] == (40 * 128,)


# -- gemma3 vision / gemma tying / smollm3 NoPE --------------------------------------------------------------------
def test_gemma3_vision_part_is_the_vision_tower_plus_projector():
    from hf_reference import hf_param_shapes

    config = fixture("gemma-3-4b-it")
    ledger = build_ledger(config)
    numel = {n: _numel(s) for n, s in hf_param_shapes(config).items()}
    vision = sum(n for name, n in numel.items() if ".vision_tower." in f".{name}" or "multi_modal_projector." in name)
    assert ledger.vision == vision
    assert ledger.text_backbone == sum(numel.values()) - vision
    projector = ledger.root.find("vision/multi_modal_projector")
    assert projector.count == 1152 * 2560 + 1152


def test_gemma_ties_embeddings_and_counts_head_dim_256():
    config = fixture("gemma-2b")
    ledger = build_ledger(config)
    assert ledger.part("text").get("text/lm_head") is None and ledger.arch.tied_embeddings
    d, V, d_ff, L = 2048, 256000, 16384, 18
    attn = d * 8 * 256 + 2 * d * 1 * 256 + 8 * 256 * d
    assert ledger.total == V * d + L * (attn + 3 * d * d_ff + 2 * d) + d


def test_smollm3_nope_layers_keep_transformers_layer_types():
    config = fixture("smollm3-3b")
    ledger = build_ledger(config)
    assert ledger.layer_types == ["full_attention"] and ledger.arch.sliding_window is None
    config = {k: v for k, v in config.items() if k != "layer_types"}
    config.update(use_sliding_window=True, sliding_window=4096)    # SmolLM3Config: only RoPE layers slide
    types = build_ledger(config).arch.layer_types
    assert [i for i, t in enumerate(types) if t == "full_attention"] == [3, 7, 11, 15, 19, 23, 27, 31, 35]


# -- bad input ---------------------------------------------------------------------------------------------------
BAD = [
    ("gemma-2-9b", lambda c: c.pop("hidden_size"), "hidden_size"),
    ("gemma-3-1b-it", lambda c: c.update(layer_types=["sliding_attention"] * 3), "layer_types"),
    ("gemma-3-4b-it", lambda c: c["text_config"].update(num_hidden_layers="34"), "text_config.num_hidden_layers"),
    ("gemma-3-4b-it", lambda c: c["vision_config"].update(patch_size=0), "vision_config.patch_size"),
    ("c4ai-command-r-v01", lambda c: c.pop("intermediate_size"), "intermediate_size"),
    ("olmo-2-1124-13b", lambda c: c.pop("num_attention_heads"), "num_attention_heads"),
    ("exaone-4.0-32b", lambda c: (c.pop("layer_types"), c.update(sliding_window_pattern="LLXG")),
     "sliding_window_pattern"),
    ("smollm3-3b", lambda c: (c.pop("layer_types"), c.update(no_rope_layers=[1, 0])), "no_rope_layers"),
]


@pytest.mark.parametrize("model_id, spoil, key", BAD, ids=[f"{m}-{k}" for m, _, k in BAD])
def test_bad_family_key_is_reported_by_name(model_id, spoil, key):
    config = fixture(model_id)
    spoil(config)
    with pytest.raises(ConfigError) as e:
        build_ledger(config)
    assert [p.key for p in e.value.problems] == [key]


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
