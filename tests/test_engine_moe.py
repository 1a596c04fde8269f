"""The MoE / hybrid families (qwen3_moe, gpt_oss, deepseek_v3, qwen3_next): exact counts, active counts, MTP,
the hf_buffer rule, ledger invariants on every model in data/, views that keep working, and bad input.

Expected numbers are written out as arithmetic on the config values (one layer at a time), so a wrong shape in
the engine cannot be copied into the test; tests/test_hf_crosscheck.py checks the same models against
transformers itself.
"""
import json
from pathlib import Path

import pytest

from experiments.errors import ConfigError
from experiments.ledger import build_ledger, views
from experiments.ledger.arch import MoE
from experiments.ledger.cli import main
from sitegen.models import load_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "data" / "models").glob("*/config.json"))
PUBLISHED = json.loads((ROOT / "data" / "published_counts.json").read_text(encoding="utf-8"))


def doc(model_id):
    return load_model(ROOT / "data" / "models" / model_id)


def config(model_id):
    return doc(model_id)["config"]


def ledger(model_id):
    return build_ledger(config(model_id))


# -- exact totals, by hand ---------------------------------------------------------------------------------------
def gqa(d, h, kv, dh, *, gate=False, qk_norm=True, bias=False, sinks=False):
    """One GQA attention block: q (x2 with an output gate), k, v, o (+ biases, per-head norms, sinks)."""
    q = h * dh * (2 if gate else 1)
    n = d * q + 2 * d * kv * dh + h * dh * d
    if bias:
        n += q + 2 * kv * dh + d
    return n + (2 * dh if qk_norm else 0) + (h if sinks else 0)


def expert(d, i, bias=False):
    return 3 * d * i + ((2 * i + d) if bias else 0)


def test_qwen3_235b_a22b():
    L = ledger("qwen3-235b-a22b")
    d, V, n_layers, E, k, i = 4096, 151936, 94, 128, 8, 1536
    layer = gqa(d, 64, 4, 128) + E * d + E * expert(d, i) + 2 * d
    assert layer == 2_487_755_008
    total = n_layers * layer + 2 * V * d + d
    assert L.total == L.hf_count == L.text_backbone == total == 235_093_634_560
    assert L.mtp == 0 and L.hf_buffers == 0
    assert L.active_per_token == total - n_layers * (E - k) * expert(d, i) == 22_190_763_520
    assert L.layer_types == ["full_attention"] and L.layer("full_attention").per_copy == layer


def test_qwen3_30b_a3b():
    L = ledger("qwen3-30b-a3b")
    d, V, n_layers, E, k, i = 2048, 151936, 48, 128, 8, 768
    layer = gqa(d, 32, 4, 128) + E * d + E * expert(d, i) + 2 * d
    assert layer == 623_120_640
    total = n_layers * layer + 2 * V * d + d
    assert L.total == L.hf_count == total == 30_532_122_624
    assert L.active_per_token == total - n_layers * (E - k) * expert(d, i) == 3_353_032_704


def test_gpt_oss_120b():
    L = ledger("gpt-oss-120b")
    d, V, n_layers, E, k, i = 2880, 201088, 36, 128, 4, 2880
    layer = gqa(d, 64, 8, 64, qk_norm=False, bias=True, sinks=True) + (E * d + E) + E * expert(d, i, True) + 2 * d
    assert layer == 3_213_080_192
    total = n_layers * layer + 2 * V * d + d
    assert L.total == L.hf_count == total == 116_829_156_672
    assert L.active_per_token == total - n_layers * (E - k) * expert(d, i, True) == 5_711_982_912
    assert L.layer_types == ["sliding_attention", "full_attention"]
    assert L.layer("sliding_attention").n == L.layer("full_attention").n == 18
    assert L.layer("sliding_attention").per_copy == L.layer("full_attention").per_copy == layer
    mlp = L.root.find("text/layers/full_attention/mlp")
    assert [c.name for c in mlp.children] == ["router", "experts"]
    assert mlp.find("text/layers/full_attention/mlp/router").kind == "router"
    assert L.root.find("text/layers/full_attention/self_attn/sinks").shape == (64,)


def mla_params(d=7168, h=128, q_rank=1536, kv_rank=512, nope=128, rope=64, v=128):
    q = d * q_rank + q_rank + q_rank * h * (nope + rope) if q_rank else d * h * (nope + rope)
    return q + d * (kv_rank + rope) + kv_rank + kv_rank * h * (nope + v) + h * v * d


def test_deepseek_v3():
    L = ledger("deepseek-v3")
    d, V, E, k, i, dense_ff = 7168, 129280, 256, 8, 2048, 18432
    attn = mla_params()
    assert attn == 187_107_328
    dense = attn + 3 * d * dense_ff + 2 * d
    moe_params = attn + E * d + E * expert(d, i) + 1 * expert(d, i) + 2 * d      # router + routed + 1 shared
    assert (dense, moe_params) == (583_483_392, 11_507_286_016)                   # = transformers' layers
    hf = 3 * dense + 58 * moe_params + 2 * V * d + d
    assert L.hf_count == hf == 671_026_404_352
    # the checkpoint also stores each MoE router's e_score_correction_bias (a buffer in transformers)
    assert L.text_backbone == L.hf_count + 58 * 256 == L.hf_count + 14_848
    assert L.hf_buffers == 14_848
    # MTP module: own embed_tokens, enorm, hnorm, eh_proj (2d -> d), one MoE layer (+ its bias), shared_head
    mtp = V * d + 2 * d + 2 * d * d + (moe_params + E) + d + V * d
    assert L.mtp == mtp == 13_463_426_304
    assert L.total == L.text_backbone + L.mtp == 684_489_845_504
    assert L.active_per_token == L.text_backbone - 58 * (E - k) * expert(d, i) == 37_552_297_472
    assert [(t, L.layer(t).n) for t in L.layer_types] == [("full_attention_dense", 3), ("full_attention_moe", 58)]
    assert L.layer("full_attention_moe").per_copy == moe_params + E
    assert L.root.find("mtp/layers/full_attention_moe/embed_tokens.weight").shape == (V, d)
    assert L.root.find("mtp/layers/full_attention_moe/shared_head/head.weight").shape == (V, d)
    bias = L.root.find("text/layers/full_attention_moe/mlp/gate/e_score_correction_bias")
    assert bias.kind == "hf_buffer" and bias.shape == (256,)
    a = L.arch
    assert (a.kv_elems_per_token, a.score_width, a.head_dim, a.d_ff) == (576, 128 * (192 + 128), 192, dense_ff)
    assert a.moe == MoE(n_experts=256, top_k=8, n_shared=1, expert_d_ff=2048, shared_d_ff=2048, n_moe_layers=58,
                        n_dense_layers=3, experts_key="n_routed_experts", top_k_key="num_experts_per_tok",
                        expert_d_ff_key="moe_intermediate_size", shared_key="n_shared_experts",
                        shared_d_ff_key="moe_intermediate_size", dense_layers_key="first_k_dense_replace",
                        expert_d_ff_own=True)


def test_qwen3_next_80b_a3b():
    L = ledger("qwen3-next-80b-a3b")
    d, V, E, k, i, shared = 2048, 151936, 512, 10, 512, 512
    ffn = E * d + E * expert(d, i) + expert(d, shared) + d              # router, routed, shared, shared gate
    key_dim, value_dim, heads_v = 16 * 128, 32 * 128, 32
    gdn = (d * (2 * key_dim + 2 * value_dim) + d * 2 * heads_v + (2 * key_dim + value_dim) * 4 + 2 * heads_v
           + 128 + value_dim * d)
    linear_layer, full_layer = gdn + ffn + 2 * d, gqa(d, 16, 2, 256, gate=True) + ffn + 2 * d
    assert (linear_layer, full_layer) == (1_648_531_648, 1_642_076_672)
    hf = 36 * linear_layer + 12 * full_layer + 2 * V * d + d
    assert L.hf_count == L.text_backbone == hf == 79_674_391_296
    mtp = full_layer + 2 * d * d + 3 * d
    assert L.mtp == mtp == 1_650_471_424
    assert L.total == 81_324_862_720 == doc("qwen3-next-80b-a3b")["meta"]["checkpoint_total"]
    assert L.active_per_token == hf - 48 * (E - k) * expert(d, i) == 3_874_929_408
    assert [(t, L.layer(t).n) for t in L.layer_types] == [("linear_attention", 36), ("full_attention", 12)]
    mlp = L.root.find("text/layers/linear_attention/mlp")
    assert [c.name for c in mlp.children] == ["gate", "experts", "shared_expert", "shared_expert_gate"]
    assert mlp.find("text/layers/linear_attention/mlp/experts").n_active == k
    names = [c.name for c in L.root.find("text/layers/linear_attention/linear_attn").children]
    assert names[:2] == ["in_proj_qkvz.weight", "in_proj_ba.weight"]
    assert L.arch.linear_state_elems == 32 * 128 * 128 + 3 * (2 * key_dim + value_dim)


MOE_IDS = ["qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b", "deepseek-v3", "qwen3-next-80b-a3b"]


@pytest.mark.parametrize("model_id", MOE_IDS)
def test_active_is_backbone_minus_idle_routed_experts(model_id):
    """active_per_token = text backbone with only top-k routed experts (router and shared experts always)."""
    L = ledger(model_id)
    idle = 0
    for node in L.root.find("text").walk():
        if node.name == "experts":
            idle += L.root.multiplicity(node.key) * (node.n - node.n_active) * node.per_copy
    assert idle > 0 and L.active_per_token == L.text_backbone - idle
    m = L.arch.moe
    assert m.n_moe_layers * (m.n_experts - m.top_k) * (L.root.find(
        next(n.key for n in L.root.walk() if n.name == "experts")).per_copy) == idle


def rounds_to(value, published, unit):
    """value rounds to the published figure at the published precision (unit = value of its last digit)."""
    return abs(value - published) * 2 <= unit


def test_published_figures_within_their_rounding():
    """data/published_counts.json: the publishers' rounded totals and active counts (their scopes noted)."""
    ds, oss = ledger("deepseek-v3"), ledger("gpt-oss-120b")
    assert all(entry["rounded"] for entry in PUBLISHED.values())
    assert rounds_to(ds.hf_count, PUBLISHED["deepseek-v3"]["total"], 10**9)            # 671B main model
    emb = views.breakdown(ds)["embedding"]
    assert rounds_to(ds.active_per_token - emb, PUBLISHED["deepseek-v3"]["active"], 10**9)   # 37B
    assert rounds_to(oss.total, PUBLISHED["gpt-oss-120b"]["total"], 10**7)             # 116.83B
    oss_emb = views.breakdown(oss)["embedding"]
    assert rounds_to(oss.active_per_token - oss_emb, PUBLISHED["gpt-oss-120b"]["active"], 10**7)   # 5.13B
    q235 = ledger("qwen3-235b-a22b")
    assert rounds_to(q235.total, PUBLISHED["qwen3-235b-a22b"]["total"], 10**9)
    assert rounds_to(q235.active_per_token, PUBLISHED["qwen3-235b-a22b"]["active"], 10**9)
    assert rounds_to(ledger("qwen3-30b-a3b").total, PUBLISHED["qwen3-30b-a3b"]["total"], 10**8)
    assert rounds_to(ledger("qwen3-next-80b-a3b").hf_count, PUBLISHED["qwen3-next-80b-a3b"]["total"], 10**9)


# -- invariants on every model in data/ --------------------------------------------------------------------------
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.parent.name)
def test_invariants_every_model(path):
    L = build_ledger(json.loads(path.read_text(encoding="utf-8")))
    for node in L.root.walk():                          # every subtotal is n x the sum of its children
        if node.children:
            assert node.count == node.n * sum(c.count for c in node.children), node.key
            assert node.active == (node.n if node.n_active is None else node.n_active) * \
                sum(c.active for c in node.children), node.key
        assert isinstance(node.count, int) and isinstance(node.active, int)
    assert sum(views.breakdown(L).values()) == L.total
    assert sum(views.breakdown(L, active=True).values()) == L.root.active
    gap = views.classic_gap(L)
    assert sum(v for _, v in gap) == L.total - views.classic_estimate(L)
    assert [name for name, _ in gap if name.startswith("mixer/")] == [f"mixer/{t}" for t in L.layer_types]
    assert L.total == L.text_backbone + L.mtp + L.vision
    assert L.hf_count == L.total - L.mtp - L.hf_buffers
    assert L.active_per_token <= L.text_backbone
    assert L.ffn == views.breakdown(L)["ffn"]          # buffers tagged hf_buffer still count as FFN
    assert sum(L.layer(t).n for t in L.layer_types) == L.arch.n_layers == len(L.arch.layer_types)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.parent.name)
def test_views_work_for_every_model(path):
    L = build_ledger(json.loads(path.read_text(encoding="utf-8")))
    a = L.arch
    assert views.ffn_flops_per_token(L) > 0 and views.param_flops_per_token(L) > views.ffn_flops_per_token(L)
    cross = views.crossover_T(L)
    assert (cross is None) == (a.n_full == 0) and (cross is None or cross > 0)
    full = a.mixers.get("full_attention")   # (its own width where the full layers differ, as MiMo-V2-Flash's do)
    assert views.kv_bytes_per_token(L) == a.n_full * (full or a).kv_elems_per_token * 2
    for T in (1, 4096, a.context_length):
        assert views.cache_bytes_per_sequence(L, T) >= views.kv_bytes_per_token(L) * T
        assert views.attention_score_flops(L, T) >= 0
    assert a.kv_elems_per_token > 0 and a.score_width > 0 and a.d_ff > 0
    for t in L.layer_types:
        assert 0 < views.mixer_per_layer(L, t) < L.layer(t).per_copy
    for symbol in ("d", "L", "V", "d_ff", "h", "T_max"):
        assert symbol in a.symbols
    if a.moe:
        assert isinstance(a.moe, MoE)
        assert 0 < a.moe.top_k <= a.moe.n_experts and 0 < a.moe.n_moe_layers <= a.n_layers
        assert a.moe.n_moe_layers + a.moe.n_dense_layers <= a.n_layers


def test_moe_views_specifics():
    ds, oss, nxt = ledger("deepseek-v3"), ledger("gpt-oss-120b"), ledger("qwen3-next-80b-a3b")
    assert views.kv_bytes_per_token(ds) == 61 * (512 + 64) * 2                 # MLA caches the compressed latent
    assert views.score_flops_per_context_token(ds) == 61 * 2 * 128 * (192 + 128)
    # gpt-oss: 18 full layers grow with T, 18 sliding layers stop at their 128-token window
    assert views.kv_bytes_per_token(oss) == 18 * 2 * 8 * 64 * 2
    assert views.cache_bytes_per_sequence(oss, 1000) == (18 * 1000 + 18 * 128) * 2 * 8 * 64 * 2
    assert oss.arch.sliding_window == 128
    # qwen3-next: only 12 full layers cache K/V; 36 linear layers keep a fixed state
    assert views.kv_bytes_per_token(nxt) == 12 * 2 * 2 * 256 * 2
    # routed experts count once per token only top-k times in compute
    ffn_active = ds.root.find("text").sum_where(lambda leaf, kinds: "ffn" in kinds and leaf.matmul, True)
    assert views.ffn_flops_per_token(ds) == 2 * ffn_active
    assert views.breakdown(ds)["ffn"] == ds.ffn                                  # incl. the 14,848 bias values


# -- variants and bad input --------------------------------------------------------------------------------------
def variant(model_id, **changes):
    cfg = dict(config(model_id))
    for k, v in changes.items():
        if v is ...:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    return cfg


def test_deepseek_plain_q_proj_when_q_lora_rank_is_null():
    L = build_ledger(variant("deepseek-v3", q_lora_rank=None))
    attn = L.root.find("text/layers/full_attention_moe/self_attn")
    assert attn.count == mla_params(q_rank=None)
    assert [c.name for c in attn.children][0] == "q_proj.weight"


def test_qwen3_moe_dense_and_sparse_layers():
    L = build_ledger(variant("qwen3-30b-a3b", num_hidden_layers=6, mlp_only_layers=[0], decoder_sparse_step=2))
    # MoE where (i + 1) % 2 == 0 and i not in mlp_only_layers: layers 1, 3, 5
    assert [(t, L.layer(t).n) for t in L.layer_types] == [("full_attention_dense", 3), ("full_attention_moe", 3)]
    assert L.root.find("text/layers/full_attention_dense/mlp").count == 3 * 2048 * 6144
    assert L.arch.d_ff == 6144 and L.arch.moe.n_moe_layers == 3


def test_gpt_oss_default_layer_types_alternate():
    L = build_ledger(variant("gpt-oss-120b", layer_types=..., num_hidden_layers=4))
    assert L.arch.layer_types == ["sliding_attention", "full_attention"] * 2


def test_qwen3_next_mtp_count_keys():
    assert build_ledger(variant("qwen3-next-80b-a3b", num_nextn_predict_layers=0)).mtp == 0
    two = build_ledger(variant("qwen3-next-80b-a3b", num_nextn_predict_layers=2))
    one = ledger("qwen3-next-80b-a3b")
    assert two.mtp - one.mtp == one.layer("full_attention").per_copy
    assert build_ledger(variant("qwen3-next-80b-a3b", mtp_num_hidden_layers=2)).mtp == two.mtp


def problems(cfg):
    with pytest.raises(ConfigError) as e:
        build_ledger(cfg)
    return {p.key: p for p in e.value.problems}, str(e.value)


BAD = [
    ("qwen3_moe top-k > experts", "qwen3-30b-a3b", {"num_experts_per_tok": 129}, "num_experts_per_tok",
     "expected an integer <= num_experts (128), got 129"),
    ("gpt_oss top-k > experts", "gpt-oss-120b", {"num_experts_per_tok": 200}, "num_experts_per_tok",
     "expected an integer <= num_local_experts (128), got 200"),
    ("deepseek top-k > experts", "deepseek-v3", {"n_routed_experts": 4}, "num_experts_per_tok",
     "expected an integer <= n_routed_experts (4), got 8"),
    ("qwen3_next top-k > experts", "qwen3-next-80b-a3b", {"num_experts": 8}, "num_experts_per_tok",
     "expected an integer <= num_experts (8), got 10"),
    ("heads do not divide width", "qwen3-30b-a3b", {"head_dim": ..., "num_attention_heads": 30},
     "num_attention_heads", "expected a divisor of the hidden size (2048), got 30"),
    ("kv heads do not divide heads", "qwen3-235b-a22b", {"num_key_value_heads": 5}, "num_key_value_heads",
     "expected a divisor of num_attention_heads (64), got 5"),
    ("gpt_oss kv heads", "gpt-oss-120b", {"num_key_value_heads": 7}, "num_key_value_heads",
     "expected a divisor of num_attention_heads (64), got 7"),
    ("deepseek kv heads", "deepseek-v3", {"num_key_value_heads": 3}, "num_key_value_heads",
     "expected a divisor of num_attention_heads (128), got 3"),
    ("missing kv_lora_rank", "deepseek-v3", {"kv_lora_rank": ...}, "kv_lora_rank", "(the key is missing)"),
    ("missing q_lora_rank", "deepseek-v3", {"q_lora_rank": ...}, "q_lora_rank",
     "or null for a plain q_proj (the key is missing)"),
    ("bad qk_rope_head_dim", "deepseek-v3", {"qk_rope_head_dim": "64"}, "qk_rope_head_dim", "got '64'"),
    ("first_k_dense_replace too big", "deepseek-v3", {"first_k_dense_replace": 62}, "first_k_dense_replace",
     "expected an integer <= num_hidden_layers (61), got 62"),
    ("missing moe_intermediate_size", "qwen3-235b-a22b", {"moe_intermediate_size": ...}, "moe_intermediate_size",
     "(the key is missing)"),
    ("zero experts per token", "qwen3-30b-a3b", {"num_experts_per_tok": 0}, "num_experts_per_tok",
     "expected an integer >= 1, got 0"),
    ("mlp_only_layers out of range", "qwen3-30b-a3b", {"mlp_only_layers": [48]}, "mlp_only_layers",
     "layer indices < num_hidden_layers (48), got 48"),
    ("mlp_only_layers not a list", "qwen3-next-80b-a3b", {"mlp_only_layers": "0"}, "mlp_only_layers",
     "a list of integers"),
    ("dense layer needs intermediate_size", "qwen3-30b-a3b", {"mlp_only_layers": [0], "intermediate_size": ...},
     "intermediate_size", "(the key is missing)"),
    ("gpt_oss layer_types length", "gpt-oss-120b", {"layer_types": ["full_attention"] * 3}, "layer_types",
     "a list of 36 entries"),
    ("gpt_oss layer_types value", "gpt-oss-120b", {"layer_types": ["linear_attention"] * 36}, "layer_types",
     "sliding_attention / full_attention"),
    ("qwen3_next layer_types value", "qwen3-next-80b-a3b", {"layer_types": ["sliding_attention"] * 48},
     "layer_types", "full_attention / linear_attention"),
    ("qwen3_next gdn heads", "qwen3-next-80b-a3b", {"linear_num_value_heads": 24}, "linear_num_value_heads",
     "a multiple of linear_num_key_heads (16)"),
    ("negative mtp layers", "deepseek-v3", {"num_nextn_predict_layers": -1}, "num_nextn_predict_layers",
     "expected an integer >= 0, got -1"),
    ("missing shared expert width", "qwen3-next-80b-a3b", {"shared_expert_intermediate_size": ...},
     "shared_expert_intermediate_size", "(the key is missing)"),
]


@pytest.mark.parametrize("name,model_id,changes,key,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_the_key(name, model_id, changes, key, message):
    found, text = problems(variant(model_id, **changes))
    assert key in found, text
    assert message in found[key].describe(), found[key].describe()


def test_every_problem_is_collected():
    found, _ = problems(variant("deepseek-v3", kv_lora_rank=..., num_experts_per_tok=300, v_head_dim=0,
                                hidden_size="big"))
    assert {"kv_lora_rank", "num_experts_per_tok", "v_head_dim", "hidden_size"} <= set(found)


def test_cli_reports_moe_bad_input(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(variant("gpt-oss-120b", num_experts_per_tok=129)), encoding="utf-8")
    assert main([str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{path}: key 'num_experts_per_tok': expected an integer <= num_local_experts (128), got 129"]


def _moe_fixtures():
    folders = sorted((ROOT / "tests" / "fixtures" / "models").glob("*/config.json")) + \
        sorted((ROOT / "data" / "models").glob("*/config.json"))
    out = []
    for file in folders:
        folder = file.parent
        config = json.loads(file.read_text(encoding="utf-8"))
        if build_ledger(config).arch.moe:
            out.append(pytest.param(config, id=f"{folder.parent.name}/{folder.name}"))
    return out


@pytest.mark.parametrize("config", _moe_fixtures())
def test_moe_facts_name_the_config_keys_they_were_read_from(config):
    """Each key the MoE facts name holds that count in the config (a per-layer list, Hunyuan's, holds it on every
    layer), and setting a key changes the count the engine reads: the key is the one the family reads."""
    from experiments.toolkit.moe import get_key, set_key
    moe = build_ledger(config).arch.moe
    assert None not in (moe.experts_key, moe.top_k_key, moe.expert_d_ff_key)
    if moe.experts_key.split(".")[0] not in config:
        pytest.skip("a config of class defaults: the key (or the section it lives in) is absent")
    keyed = [(moe.experts_key, moe.n_experts), (moe.top_k_key, moe.top_k), (moe.expert_d_ff_key, moe.expert_d_ff)]
    if moe.shared_key:
        keyed.append((moe.shared_key, moe.n_shared))
    for key, value in keyed:
        got = get_key(config, key)
        assert (set(got) if isinstance(got, list) else got) in (value, {value}), key
    changed = json.loads(json.dumps(config))
    set_key(changed, moe.experts_key, moe.n_experts * 2)
    set_key(changed, moe.top_k_key, moe.top_k + 1)
    after = build_ledger(changed).arch.moe
    assert (after.n_experts, after.top_k) == (moe.n_experts * 2, moe.top_k + 1)
    if moe.expert_d_ff_own:
        set_key(changed, moe.expert_d_ff_key, moe.expert_d_ff * 2)
        again = build_ledger(changed)
        assert again.arch.moe.expert_d_ff == moe.expert_d_ff * 2
        assert again.arch.d_ff == build_ledger(config).arch.d_ff or not again.arch.moe.n_dense_layers


def test_expert_width_shared_with_dense_layers_is_not_its_own():
    """Jamba sizes its dense FFN layers and its experts by the one key intermediate_size: the width cannot change
    on its own; Mixtral (every layer MoE) reads the same key for its experts only."""
    def facts(model_id):
        return load_model(ROOT / "data" / "models" / model_id)["config"]
    jamba, mixtral = build_ledger(facts("jamba-v0.1")).arch.moe, build_ledger(facts("mixtral-8x7b")).arch.moe
    assert (jamba.expert_d_ff_key, jamba.expert_d_ff_own, jamba.n_dense_layers) == ("intermediate_size", False, 16)
    assert (mixtral.expert_d_ff_key, mixtral.expert_d_ff_own, mixtral.n_dense_layers) == ("intermediate_size", True, 0)
