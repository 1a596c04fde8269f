"""The fork card (experiments/ledger/forks.py) of every course model and published fixture, against the engine's
ledger: every field is the engine's own count or the config's key, and the cost models agree with the views and
with the formulas written out here by hand for DeepSeek-V3.2's config."""
import json
from pathlib import Path

import pytest

from experiments.ledger import forks as F
from experiments.ledger import ledger_of, views

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "data" / "models").glob("*/config.json")) + [
    ROOT / "tests" / "fixtures" / "models" / m / "config.json"
    for m in ("glm-5.2", "gemma-4-26b-a4b", "smollm3-3b", "olmo-2-1124-13b", "gemma-3-27b-it")]


def _config(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.parent.name for p in CONFIGS])
def test_card_agrees_with_the_ledger(path):
    config = _config(path)
    ledger = ledger_of(config)
    card = F.fork_card(config)
    a = ledger.arch
    assert sum(run["layers"] for run in card["attention"]) == a.n_layers == card["layers"]
    assert card["full_layers"] == a.n_full and card["full_layers"] + card["bounded_layers"] == a.n_layers
    assert card["total"] == ledger.total and card["active"] == ledger.active_per_token
    assert card["embedding"]["vocab"] == a.vocab_size and card["embedding"]["tied"] == a.tied_embeddings
    parts = views.breakdown(ledger)
    assert card["embedding"]["params"] == parts["embedding"] + parts.get("lm_head", 0)
    assert card["mtp"]["params"] == ledger.mtp
    assert card["ffn"]["gated"] == (a.ffn_matrices == 3)
    assert card["kv_bytes_per_token"] == views.kv_bytes_per_token(ledger)
    if a.moe is None:
        assert card["moe"] is None
    else:
        assert (card["moe"]["experts"], card["moe"]["top_k"], card["moe"]["shared"]) == \
            (a.moe.n_experts, a.moe.top_k, a.moe.n_shared)
    for T in (4096, 131072):
        assert F.kv_bytes_at(ledger, T) == views.cache_bytes_per_sequence(ledger, T)
        f = F.attention_flops(config, ledger, T)
        assert f["total"] == f["indexer"] + f["attend"]
        if card["indexer"] is None:      # (with one on MLA, the sparse layers count in MQA mode: the tests below)
            assert f["total"] == f["dense"] == views.attention_score_flops(ledger, T)
    # past every window and top_k, one more cached token costs the per-token slope
    T = max(a.context_length, 1 << 21)
    slope = F.attention_flops(config, ledger, T + 1)["total"] - F.attention_flops(config, ledger, T)["total"]
    assert F.attention_flops_per_context_token(config, ledger) == slope
    assert F.mixer_params(ledger) == sum(g.n * c.count for g in ledger.root.find("text/layers").children
                                         for c in g.children if c.kind in views.MIXER_KINDS)


@pytest.mark.parametrize("model_id", ["deepseek-v3.2", "glm-5"])
def test_dsa_runs_on_mla_in_mqa_mode(model_id):
    """The V3.2-Exp report runs DSA on MLA's MQA mode: each head scores the shared latent and rotary key
    (kv_lora_rank + qk_rope_head_dim) and sums the latents (kv_lora_rank), for the top-k tokens; dense MLA in the
    same mode over all T. Written out from the config keys."""
    config = _config(ROOT / "data" / "models" / model_id / "config.json")
    ledger = ledger_of(config)
    L, h = config["num_hidden_layers"], config["num_attention_heads"]
    HI, dI, k = config["index_n_heads"], config["index_head_dim"], config["index_topk"]
    key, value = config["kv_lora_rank"] + config["qk_rope_head_dim"], config["kv_lora_rank"]
    T = 131072
    f = F.attention_flops(config, ledger, T)
    assert f["indexer"] == L * (2 * HI * dI * T + 2 * HI * T)
    assert f["attend"] == L * h * (2 * key + 2 * value) * k
    assert f["dense"] == L * h * (2 * key + 2 * value) * T
    # beyond top_k only the indexer grows; the crossover is where L·h·2(key + value)·(T - k) passes the indexer's
    assert F.attention_flops_per_context_token(config, ledger) == L * 2 * HI * (dI + 1)
    cross = F.sparse_crossover_T(config, ledger)
    per_T = L * h * 2 * (key + value)
    assert cross == next(T for T in range(k, 4 * k) if per_T * T > L * 2 * HI * (dI + 1) * T + per_T * k)


def test_deepseek_v32_by_hand():
    """DSA's cost written out from DeepSeek-V3.2's config keys."""
    config = _config(ROOT / "data" / "models" / "deepseek-v3.2" / "config.json")
    ledger = ledger_of(config)
    card = F.fork_card(config)
    assert card["kinds"] == ["sparse"]
    L = config["num_hidden_layers"]
    HI, dI, k = config["index_n_heads"], config["index_head_dim"], config["index_topk"]
    assert card["indexer"] == {"heads": HI, "head_dim": dI, "top_k": k, "own_layers": L, "sparse_layers": L}
    T = 131072
    f = F.attention_flops(config, ledger, T)
    # the cache: latent + rotary key + index key per layer per token
    assert card["kv_bytes_per_token"] == L * (config["kv_lora_rank"] + config["qk_rope_head_dim"] + dI) * 2
    d, q_lora = config["hidden_size"], config["q_lora_rank"]
    one = q_lora * HI * dI + d * dI + 2 * dI + d * HI
    assert F.indexer_params(ledger) == L * one          # (the text backbone's; the MTP layer holds one more)
    cross = F.sparse_crossover_T(config, ledger)
    assert cross is not None
    below, at = F.attention_flops(config, ledger, cross - 1), F.attention_flops(config, ledger, cross)
    assert below["total"] >= below["dense"] and at["total"] < at["dense"]
    # MTP: the module's matmul weights, it carries its own head
    assert card["mtp"]["modules"] == config["num_nextn_predict_layers"]
    assert card["mtp"]["shared_head"] is False
    x = F.what_if(config, "no_indexer", T)
    assert x["swapped"]["attn_flops"] == f["dense"]
    assert x["base"]["total"] - x["swapped"]["total"] == L * one
    assert x["base"]["cache_bytes"] - x["swapped"]["cache_bytes"] == L * dI * T * 2


def test_stability_devices_and_positions():
    gemma = ledger_of(_config(ROOT / "data" / "models" / "gemma-2-9b" / "config.json"))
    cfg = _config(ROOT / "data" / "models" / "gemma-2-9b" / "config.json")
    card = F.card_of(cfg, gemma)
    assert card["norm"]["placement"] == "sandwich"
    assert card["norm"]["softcap"] == {"attn_logit_softcapping": cfg["attn_logit_softcapping"],
                                       "final_logit_softcapping": cfg["final_logit_softcapping"]}
    assert F.stability_params(gemma)["extra_norms"] == cfg["num_hidden_layers"] * 2 * cfg["hidden_size"]
    oss_cfg = _config(ROOT / "data" / "models" / "gpt-oss-120b" / "config.json")
    oss = ledger_of(oss_cfg)
    assert F.stability_params(oss)["sinks"] == oss_cfg["num_hidden_layers"] * oss_cfg["num_attention_heads"]
    anchor_cfg = _config(ROOT / "data" / "models" / "qwen3.8-27b" / "config.json")
    anchor = ledger_of(anchor_cfg)
    t = anchor_cfg["text_config"]
    n_full = sum(1 for x in anchor.arch.layer_types if x == "full_attention")
    assert F.stability_params(anchor)["qk_norm"] == n_full * 2 * t["head_dim"]
    assert F.fork_card(anchor_cfg)["norm"]["qk_norm"] is True
    scout = _config(ROOT / "data" / "models" / "llama-4-scout-17b-16e" / "config.json")
    L = scout["text_config"]["num_hidden_layers"]
    assert F.fork_card(scout)["position"]["nope_layers"] == L // 4
    gpt2 = F.fork_card(_config(ROOT / "data" / "models" / "gpt2" / "config.json"))
    assert gpt2["position"]["scheme"] == "learned" and gpt2["ffn"] == {"gated": False, "act": "gelu_new"}
    assert gpt2["norm"]["type"] == "layernorm"
    assert card["ffn"] == {"gated": True, "act": cfg["hidden_activation"]}
    olmo = F.fork_card(_config(ROOT / "tests" / "fixtures" / "models" / "olmo-2-1124-13b" / "config.json"))
    assert olmo["norm"]["placement"] == "post"


def test_what_if_no_linear_equals_an_all_full_attention_config():
    """Swapping the anchor's GDN layers for its own full attention gives what the engine counts for the same
    config with every layer full attention."""
    cfg = _config(ROOT / "data" / "models" / "qwen3.8-27b" / "config.json")
    T = 32768
    x = F.what_if(cfg, "no_linear", T)["swapped"]
    full = json.loads(json.dumps(cfg))
    full["text_config"]["layer_types"] = ["full_attention"] * full["text_config"]["num_hidden_layers"]
    ledger = ledger_of(full)
    assert x["total"] == ledger.total - ledger.mtp + ledger_of(cfg).mtp
    assert x["cache_bytes"] == views.cache_bytes_per_sequence(ledger, T)
    assert x["attn_flops"] == views.attention_score_flops(ledger, T)


def test_what_if_no_shared_removes_the_shared_experts():
    cfg = _config(ROOT / "data" / "models" / "deepseek-v3" / "config.json")
    ledger = ledger_of(cfg)
    x = F.what_if(cfg, "no_shared", 4096)["swapped"]
    no_shared = dict(cfg, n_shared_experts=0)
    other = ledger_of(no_shared)
    assert x["total"] - ledger.mtp == other.total - other.mtp
    assert x["active"] == other.active_per_token


def test_rotary_share_from_every_spelling():
    """partial_rotary_factor nested in rope_parameters (Qwen3.5), MiniMax-M2's rotary_dim / head_dim, MLA's rotary
    part of the query-key width, and transformers' default where the config names none (Qwen3.8)."""
    def share(model_id):
        return F.fork_card(_config(ROOT / "data" / "models" / model_id / "config.json"))["position"]["rope_share"]
    q35 = _config(ROOT / "data" / "models" / "qwen3.5-35b-a3b" / "config.json")
    assert share("qwen3.5-35b-a3b") == q35["text_config"]["rope_parameters"]["partial_rotary_factor"]
    mm = _config(ROOT / "data" / "models" / "minimax-m2.5" / "config.json")
    assert share("minimax-m2.5") == mm["rotary_dim"] / mm["head_dim"]
    ds = _config(ROOT / "data" / "models" / "deepseek-v3.2" / "config.json")
    assert share("deepseek-v3.2") == ds["qk_rope_head_dim"] / (ds["qk_rope_head_dim"] + ds["qk_nope_head_dim"])
    assert "partial_rotary_factor" not in json.dumps(_config(ROOT / "data" / "models" / "qwen3.8-27b" / "config.json"))
    assert share("qwen3.8-27b") == F.ROTARY_DEFAULTS["qwen3_5"]
    assert share("llama-2-7b") == 1.0
