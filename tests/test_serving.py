"""The serving arithmetic (experiments/toolkit/serving.py), recounted here from each config's own keys with the
textbook formulas, for a dense MHA model (Llama-2-7B), a GQA one (Qwen3-8B) and an MoE (Qwen3-30B-A3B), on the H100
SXM: weight bytes per scheme (group scales included), KV cache per token, the decode roofline's bytes, FLOPs and
times, the crossover batch (peak FLOP/s × bytes per weight / (2 × bandwidth)), sequences that fit beside the
weights, MoE experts touched, and the monotone shapes (time per token grows with context, tokens per second per
user fall with the batch, per device rise until the step turns compute-bound).
"""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from experiments.ledger import build_ledger, views
from experiments.toolkit import devices as DV
from experiments.toolkit import serving as S

ROOT = Path(__file__).resolve().parent.parent
H100 = DV.H100


def config(model_id: str) -> dict:
    return json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text(encoding="utf-8"))


def recount(model_id: str) -> dict:
    """Matrix weights (all and one token's active share), every other parameter, and KV elements per token,
    from the config's keys: attention q/k/v/o, SwiGLU (3 matrices), router d×E, lm_head V×d; RMSNorm weights
    (2 per layer + final; Qwen3 adds q_norm and k_norm of head_dim), the embedding V×d."""
    c = config(model_id)
    d, L, H, kvh, V = (c[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                      "num_key_value_heads", "vocab_size"))
    hd = c.get("head_dim") or d // H
    attn = 2 * d * H * hd + 2 * d * kvh * hd
    if "num_experts" in c:
        E, k, w = c["num_experts"], c["num_experts_per_tok"], c["moe_intermediate_size"]
        ffn_all, ffn_active = d * E + E * 3 * d * w, d * E + k * 3 * d * w
    else:
        E = k = 0
        ffn_all = ffn_active = 3 * d * c["intermediate_size"]
    qk_norm = 2 * hd if c["model_type"].startswith("qwen3") else 0
    return {"all": L * (attn + ffn_all) + V * d, "active": L * (attn + ffn_active) + V * d,
            "other": V * d + L * (2 * d + qk_norm) + d, "kv_per_token": 2 * L * kvh * hd, "L": L,
            "E": E, "k": k, "d": d, "H": H, "hd": hd}


MODELS = ("llama-2-7b", "qwen3-8b", "qwen3-30b-a3b")


@pytest.fixture(scope="module", params=MODELS)
def model(request):
    return request.param, build_ledger(config(request.param)), recount(request.param)


def test_device_speeds_are_the_datasheets_dense_figures():
    assert (H100.bandwidth, H100.bf16_flops, H100.fp8_flops) == (3.35e12, 989e12, 1979e12)
    for dev in DV.DEVICES.values():
        assert dev.bandwidth > 0 and "http" in dev.speed_source
        if dev.bf16_flops and dev.fp8_flops:
            assert abs(dev.fp8_flops - 2 * dev.bf16_flops) <= 10**12     # FP8 doubles BF16 (rounded figures)
    with pytest.raises(ValueError, match="FP8"):
        S.peak_flops(DV.DEVICES["40"], "FP8")       # A100: no FP8 tensor cores


def test_weight_bytes_per_scheme_with_group_scales(model):
    _, led, r = model
    assert S.text_params(led) == r["all"] + r["other"]
    for scheme, bits in (("BF16", 16), ("FP8", 8), ("INT8", 8 + Fraction(16, 128)), ("INT4", 4 + Fraction(1, 8))):
        assert S.bits_per_weight(scheme) == bits
        assert S.quantized_weight_bytes(led, scheme) == r["all"] * Fraction(bits) / 8 + r["other"] * 2
    assert S.bits_per_weight("INT4", 32) == 4 + Fraction(16, 32)


def test_kv_cache_per_token_and_what_fits(model):
    _, led, r = model
    assert S.kv_bytes(led, 1) == 2 * r["kv_per_token"] and S.kv_bytes(led, 1, "FP8") == r["kv_per_token"]
    for T in S.CONTEXTS + (1000,):
        f = S.fits_kv(led, H100, T)
        paged = math.ceil(T / 16) * 16
        free = 85_520_809_984 - (r["all"] + r["other"]) * 2
        assert f["per_sequence"] == paged * 2 * r["kv_per_token"]
        assert f["sequences"] == free // (paged * 2 * r["kv_per_token"])
        fp8 = S.kv_fp8_effect(led, H100, T, 1)
        assert fp8["FP8"]["per_sequence"] * 2 == fp8["BF16"]["per_sequence"]
        assert fp8["FP8"]["sequences"] >= 2 * fp8["BF16"]["sequences"]
        assert fp8["FP8"]["step_time"] < fp8["BF16"]["step_time"]


def test_decode_roofline_recounted(model):
    _, led, r = model
    for B, T in ((1, 4096), (64, 32768), (512, 0)):
        got = S.roofline(led, H100, B, T)
        if r["E"]:
            touched = r["E"] * (1 - (1 - Fraction(r["k"], r["E"])) ** B)    # C11's expected experts per layer
            expert = 3 * r["d"] * config("qwen3-30b-a3b")["moe_intermediate_size"]
            read = r["active"] + r["L"] * (touched - r["k"]) * expert
        else:
            read = r["all"]
        assert got["weight_bytes"] == read * 2
        assert got["kv_bytes"] == B * T * 2 * r["kv_per_token"]
        flops = B * (2 * r["active"] + r["L"] * 2 * 2 * r["H"] * r["hd"] * T)  # q·k and p·v over T cached tokens
        assert got["flops"] == flops
        mem, comp = Fraction(read * 2 + B * T * 2 * r["kv_per_token"], 3_350 * 10**9), Fraction(flops, 989 * 10**12)
        assert got["step_time"] == max(mem, comp)
        assert got["bound"] == ("memory" if mem >= comp else "compute")
        assert got["tokens_per_s"] == B / max(mem, comp) == B * got["tokens_per_s_per_user"]


def test_crossover_batch_is_flops_over_bandwidth_times_bytes_per_weight():
    led = build_ledger(config("llama-2-7b"))
    for scheme, bpw, peak in (("BF16", 2, 989e12), ("FP8", 1, 1979e12), ("INT4", Fraction(33, 64), 989e12)):
        want = math.ceil(Fraction(int(peak)) * bpw / (2 * 3_350 * 10**9))
        assert S.crossover_batch(led, H100, 0, scheme) == want
    assert S.crossover_batch(led, H100, 0) == 296                      # 989e12 × 2 / (2 × 3.35e12) = 295.2
    r = S.roofline(led, H100, 295, 0)
    assert r["bound"] == "memory" and S.roofline(led, H100, 296, 0)["bound"] == "compute"
    # a long context adds B·T cache bytes for B·T score FLOPs: at 4K the step never turns compute-bound
    assert S.crossover_batch(led, H100, 4096) is None
    # an MoE's batch touches more experts, so its crossover is far beyond the dense one of its active size
    moe = build_ledger(config("qwen3-30b-a3b"))
    xo = S.crossover_batch(moe, H100, 0)
    assert xo is not None and xo > 296
    assert S.roofline(moe, H100, xo, 0)["bound"] == "compute" and S.roofline(moe, H100, xo - 1, 0)["bound"] == "memory"


def test_monotone_shapes(model):
    _, led, _ = model
    times = [S.roofline(led, H100, 8, T)["step_time"] for T in (0, 1024, 4096, 32768, 131072)]
    assert times == sorted(times) and times[0] < times[-1]
    curve = S.batch_curve(led, H100, [1, 2, 4, 16, 64, 256, 1024], 1024)
    per_user = [c["tokens_per_s_per_user"] for c in curve]
    per_device = [c["tokens_per_s"] for c in curve]
    assert all(a > b for a, b in zip(per_user, per_user[1:]))
    assert all(a < b for a, b in zip(per_device, per_device[1:]))
    room = S.fits_kv(led, H100, 1024)["sequences"]
    assert [c["fits"] for c in curve] == [c["batch"] <= room for c in curve]


def test_prefill_counts_causal_attention_once(model):
    _, led, r = model
    T = 4096
    p = S.prefill(led, H100, T)
    assert p["flops"] == T * 2 * r["active"] + r["L"] * 2 * 2 * r["H"] * r["hd"] * T * (T + 1) // 2
    assert p["bound"] == "compute" and p["time_per_token"] < S.roofline(led, H100, 1, T)["step_time"] / 10


def test_quantization_speeds_up_bandwidth_bound_decode(model):
    _, led, _ = model
    rows = {q["scheme"]: q for q in S.quantization_table(led, H100)}
    assert list(rows) == list(S.SCHEMES)
    assert rows["BF16"]["speedup"] == 1
    assert 1 < rows["INT8"]["speedup"] < rows["FP8"]["speedup"] < 2 < rows["INT4"]["speedup"] < 4
    assert all(q["bound"] == "memory" for q in rows.values())


def test_bad_inputs_are_refused_in_chinese():
    led = build_ledger(config("llama-2-7b"))
    with pytest.raises(ValueError, match="权重精度"):
        S.roofline(led, H100, 1, 0, "INT3")
    with pytest.raises(ValueError, match="KV cache 精度"):
        S.fits_kv(led, H100, 1, kv="INT4")
    with pytest.raises(ValueError, match="批大小"):
        S.roofline(led, H100, 0, 0)


@pytest.mark.parametrize("model_id", ("gemma-2-9b", "mistral-7b-v0.1", "qwen3.8-27b"))
def test_prefill_attention_is_the_sum_over_positions(model_id):
    """The closed form (windowed layers: W(W+1)/2 + (T − W)·W) against a token-by-token sum, past the window."""
    led = build_ledger(config(model_id))
    for T in (1000, 5000):
        assert S.causal_score_flops(led, T) == sum(views.attention_score_flops(led, t) for t in range(1, T + 1))


ALL = sorted(p.name for p in (ROOT / "data" / "models").iterdir() if (p / "config.json").exists())


@pytest.mark.parametrize("model_id", ALL)
def test_every_config_is_served(model_id):
    """Every model: the crossover is where the bound flips (or the step stays bandwidth-bound), fewer sequences
    fit at longer contexts, each lower-precision scheme stores fewer bytes than the one before (INT8's group
    scales make it a little larger than FP8), and the H100's numbers are finite and positive."""
    led = build_ledger(config(model_id))
    xo = S.crossover_batch(led, H100, 0)
    if xo is None:
        assert S.roofline(led, H100, S.MAX_BATCH, 0)["bound"] == "memory"
    else:
        assert S.roofline(led, H100, xo, 0)["bound"] == "compute"
        assert xo == 1 or S.roofline(led, H100, xo - 1, 0)["bound"] == "memory"
    seqs = [S.fits_kv(led, H100, T)["sequences"] for T in S.CONTEXTS]
    assert seqs == sorted(seqs, reverse=True) and min(seqs) >= 0
    w = {q["scheme"]: q["weights"] for q in S.quantization_table(led, H100)}
    assert w["BF16"] > w["INT8"] > w["FP8"] > w["INT4"] > 0
    assert S.prefill(led, H100, 4096)["time_per_token"] > 0


def test_paging_against_contiguous_reservation(model):
    """A request that uses 1,000 tokens of a 32K reservation: contiguous reservation holds 32,768 tokens of cache
    for it, paging 1,008 (63 blocks of 16); the sequences that fit and the unused shares, recounted by hand."""
    _, led, r = model
    per_token = 2 * r["kv_per_token"]
    g = S.paging(led, H100, 1000, 32768)
    free = 85_520_809_984 - (r["all"] + r["other"]) * 2
    assert g["block_bytes"] == 16 * per_token and g["needed"] == 1000 * per_token
    assert g["contiguous"]["tokens"] == 32768 and g["paged"]["tokens"] == 1008
    assert g["contiguous"]["sequences"] == free // (32768 * per_token)
    assert g["paged"]["sequences"] == free // (1008 * per_token)
    assert g["contiguous"]["waste"] == 1 - Fraction(1000, 32768) and g["paged"]["waste"] == Fraction(8, 1008)
    assert g["paged"]["sequences"] > 30 * g["contiguous"]["sequences"]
    full = S.paging(led, H100, 32768, 32768)        # a request that fills its reservation: nothing to save
    assert full["paged"]["sequences"] == full["contiguous"]["sequences"] and full["paged"]["waste"] == 0
    with pytest.raises(ValueError, match="实际长度"):
        S.paging(led, H100, 5000, 4096)


def test_paging_on_a_sliding_window_model():
    """Gemma 2's local layers keep at most 4,096 tokens: past the window their cache stops growing, so the paged
    bytes are the engine's per-sequence count at the paged length, not a multiple of one token's."""
    led = build_ledger(config("gemma-2-9b"))
    g = S.paging(led, H100, 10000, 131072)
    assert g["paged"]["per_sequence"] == views.cache_bytes_per_sequence(led, 10000, 2)      # 10,000 = 625 blocks
    assert g["paged"]["per_sequence"] < 10000 * S.kv_bytes(led, 1)
