"""Lesson C3's calculators and numbers in CPython, recounted here from the config keys: the KV cache of an MHA
(Llama 2 7B), a GQA (Llama 2 70B) and an MLA model (DeepSeek-V3), per token per layer and for a sequence; the
attention FLOPs table against the FFN's and its crossover; every bad input refused with one Chinese line and the
work bounded; the trained small model's attention maps (rows sum to 1, nothing above the diagonal), decoding with
and without the cache (the same characters), the stored mask experiment (the leak's training loss collapses, its
held-out loss with the mask does not); the exercise's reference against an attention written out here; the
build's states covering each model, context, layer and head.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from experiments.format import gb, n
from experiments.lessons.c3_attention import calc, exercises, trained

ROOT = Path(__file__).resolve().parents[2]


def cfg(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


def doc(name: str) -> dict:
    return json.loads((ROOT / "data" / f"{name}.json").read_text(encoding="utf-8"))


def kv_by_hand(c: dict) -> tuple[int, int]:
    """(bytes per token per layer, layers) read straight from the keys, BF16: 2·h_kv·d_h, or MLA's latent + RoPE key."""
    if "kv_lora_rank" in c:
        return (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * 2, c["num_hidden_layers"]
    hd = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    return 2 * c.get("num_key_value_heads", c["num_attention_heads"]) * hd * 2, c["num_hidden_layers"]


@pytest.mark.parametrize("model_id, kind, per_layer", [("llama-2-7b", "MHA", 16384), ("llama-2-70b", "GQA", 4096),
                                                       ("deepseek-v3", "MLA", 1152)])
def test_cache_recounted_from_the_keys(model_id, kind, per_layer):
    c = cfg(model_id)
    layer, L = kv_by_hand(c)
    assert layer == per_layer
    for T in calc.CONTEXTS:
        x = calc.kv(c, str(T))
        assert x["per_token"] == n(layer * L) and x["per_token_layer"] == n(layer)
        assert x["sequence"] == calc.size(layer * L * T)
        (row,) = x["rows"]
        assert kind in row["kind"] and row["per_token"] == n(layer) and row["layers"] == n(L)
        assert row["used"].endswith(f"= {n(layer // 2)}")


def test_lesson_numbers_recounted(course_numbers):
    nums = course_numbers
    for alias, model_id in (("llama7b", "llama-2-7b"), ("llama70b", "llama-2-70b"), ("dsv3", "deepseek-v3")):
        layer, L = kv_by_hand(cfg(model_id))
        assert nums[f"c3.{alias}.kv_layer"].value == layer
        if f"c3.{alias}.seq_32k_gb" in nums:
            assert nums[f"c3.{alias}.seq_32k_gb"].value == Fraction(layer * L * 32768, 10**9)
    c70 = cfg("llama-2-70b")
    assert nums["c3.llama70b.group"].value == c70["num_attention_heads"] // c70["num_key_value_heads"]
    hd = c70["hidden_size"] // c70["num_attention_heads"]
    assert nums["c3.llama70b.mha_layer"].value == 2 * c70["num_attention_heads"] * hd * 2
    assert nums["c3.llama70b.mqa_layer"].value == 2 * hd * 2
    v3 = cfg("deepseek-v3")      # MLA written out per head: K = nope + rope, V = v_head_dim, every head
    mha = v3["num_hidden_layers"] * v3["num_attention_heads"] * (v3["qk_nope_head_dim"] + v3["qk_rope_head_dim"]
                                                                 + v3["v_head_dim"]) * 2
    assert nums["c3.dsv3.mha_per_token"].value == mha
    assert nums["c3.dsv3.saving"].value == Fraction(mha, (v3["kv_lora_rank"] + v3["qk_rope_head_dim"]) * 2
                                                    * v3["num_hidden_layers"])
    mistral = cfg("mistral-7b-v0.1")
    w = 2 * mistral["num_key_value_heads"] * (mistral["hidden_size"] // mistral["num_attention_heads"]) * 2
    assert nums["c3.mistral.seq_32k_gb"].value == Fraction(w * mistral["num_hidden_layers"]
                                                           * mistral["sliding_window"], 10**9)
    run = doc("train_attention")["runs"]
    assert nums["c3.mask.leak.train"].value == Fraction(str(run["leak"]["loss"][-1][1]))
    assert nums["c3.mask.causal.held"].value == Fraction(str(run["causal"]["held_out"][-1][1]))


def test_flops_table_and_crossover():
    """Llama 2 7B: the FFN's 2·3·d·d_ff·L per token against full attention's 2·2·h·d_h·T·L; equal at the crossover."""
    c = cfg("llama-2-7b")
    ffn = 2 * 3 * c["hidden_size"] * c["intermediate_size"] * c["num_hidden_layers"]
    per_T = 2 * 2 * c["num_attention_heads"] * (c["hidden_size"] // c["num_attention_heads"]) * c["num_hidden_layers"]
    cross = Fraction(ffn, per_T)
    x = calc.kv(c, "4096")
    marked = [r for r in x["flops"] if r["mark"].startswith("交叉点")]
    assert len(marked) == 1 and marked[0]["T"] == n(cross) and marked[0]["ratio"] == "1.00"
    assert x["crossover"].startswith(f"上下文到 T = {n(cross)} 时")
    mistral = calc.kv(cfg("mistral-7b-v0.1"), "131072")     # every layer windowed: no crossover, flat past the window
    assert "没有看全部上下文" in mistral["crossover"]
    assert len({r["attention"] for r in mistral["flops"] if int(r["T"].replace(",", "")) >= 4096}) == 1


def test_bad_input_is_one_chinese_line():
    for context in ("abc", "0", str(calc.MAX_CONTEXT + 1), None):
        with pytest.raises(ValueError, match="上下文长度"):
            calc.kv(cfg("gpt2"), context)
    with pytest.raises(ValueError, match="这份 config 有问题"):
        calc.kv('{"model_type": "llama", "hidden_size": -5}', "4096")
    speaker = doc("train_speaker")
    for bad, said in (("", "是空的"), ("   ", "是空的"), ("子" * (speaker["context"] + 1), "超过了最多"),
                      ("abc", "都没有")):
        with pytest.raises(ValueError, match=said):
            trained.maps(bad, "1", "1", speaker)
    with pytest.raises(ValueError, match="头"):
        trained.maps("学而", "1", "99", speaker)
    with pytest.raises(ValueError, match="生成字数"):
        trained.decode("子曰", str(trained.MAX_NEW + 1), speaker)
    with pytest.raises(ValueError, match="开头有"):
        trained.decode("子" * 30, "5", speaker)


def test_maps_are_causal_probabilities():
    from experiments.train import model as M
    speaker = doc("train_speaker")
    params, cfg_, tok = trained.stored_model(speaker)
    ids = tok.encode("学而时习之，不亦说乎？")
    P = M.attention_maps(params, cfg_, ids)
    assert P.shape == (cfg_.n_layers, cfg_.n_heads, len(ids), len(ids))
    assert np.allclose(P.sum(-1), 1, atol=1e-5) and np.all(np.triu(P, k=1) == 0)
    x = trained.maps("学而时习之，不亦说乎？", "2", "3", speaker)
    assert x["chart"]["z"] == [[round(float(v), 4) for v in row] for row in P[1, 2]]
    assert x["above"] == "对角线以上（后面的字）的概率之和：0.0"
    assert trained.maps("学而时习之，不亦说乎？", "1", "3", speaker)["chart"]["z"] != x["chart"]["z"]


def test_decode_with_and_without_cache_agree():
    speaker = doc("train_speaker")
    x = trained.decode("子曰：", "20", speaker)
    assert x["same"] == "一样" and x["text"] == x["text_full"] and len(x["text"]) == 20
    assert float(x["tps_cached"]) > 0 and float(x["tps_full"]) > 0
    assert int(x["flops_full"].replace(",", "")) > int(x["flops_cached"].replace(",", ""))


def test_stored_mask_experiment():
    """Without the mask the training loss falls far below the masked run's; evaluated as generation sees it (the
    mask on), its held-out loss is worse than the masked run's."""
    runs = doc("train_attention")["runs"]
    leak, causal = runs["leak"], runs["causal"]
    assert leak["loss"][-1][1] < causal["loss"][-1][1] - 1
    assert leak["held_out"][-1][1] > causal["held_out"][-1][1]
    assert leak["held_out_leak"][-1][1] < causal["held_out"][-1][1]
    x = trained.mask("1", doc("train_attention"))
    assert x["train"] == f"{leak['loss'][-1][1]:.2f}" and x["held"] == f"{leak['held_out'][-1][1]:.2f}"


def test_exercise_reference_against_a_loop():
    """The reference (the trainer's mask, grouping and softmax) against attention written out position by position."""
    rng = np.random.default_rng(0)
    H, G, T, d = 6, 2, 5, 4
    q, k, v = rng.normal(size=(H, T, d)), rng.normal(size=(G, T, d)), rng.normal(size=(G, T, d))
    out, w = exercises.attention(q, k, v)
    for h in range(H):
        j = h // (H // G)
        for t in range(T):
            s = np.array([q[h, t] @ k[j, u] / math.sqrt(d) for u in range(t + 1)])
            p = np.exp(s - s.max())
            p /= p.sum()
            assert np.allclose(w[h, t, : t + 1], p) and np.all(w[h, t, t + 1:] == 0)
            assert np.allclose(out[h, t], p @ v[j, : t + 1])
    ns: dict = {}
    exec(exercises.SOLUTION, ns)     # the shown solution gives the same
    mine = ns["causal_gqa"](q, k, v)
    assert np.allclose(mine[0], out) and np.allclose(mine[1], w)


def test_states_cover_each_control():
    from experiments.lessons.c3_attention import KV_DEFAULTS, MAPS_DEFAULTS, widgets

    class Data:
        models = {"llama70b": None, "gpt2": None}

        def model(self, alias):
            return alias, None

        def choices(self):
            return [("gpt2", None), ("llama70b", None)]

    states = widgets.kv_states(KV_DEFAULTS, Data())
    assert [a[0]["$model"] for _, a in states[:2]] == ["gpt2", "llama70b"]
    assert sorted(a[1] for _, a in states if a[0]["$model"] == "llama70b") == sorted(map(str, calc.CONTEXTS))

    class Stored:
        train_speaker = doc("train_speaker")

    maps = widgets.maps_states(MAPS_DEFAULTS, Stored())
    m = Stored.train_speaker["spec"]["model"]
    assert len(maps) == m["n_layers"] * m["n_heads"] and len({tuple(a[1:3]) for _, a in maps}) == len(maps)
    assert gb(10**9) == "1.00 GB"
