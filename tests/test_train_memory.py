"""The training-memory ledger (experiments/ledger/training.py) against what it claims to reproduce: the numpy
trainer's measured bytes (tensor by tensor), Korthikanti et al.'s per-layer formula under their assumptions,
ZeRO's 7.5B / 64-GPU example, and its own bookkeeping (subtotals, sharding, chunked cross-entropy)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.ledger import ledger_of
from experiments.ledger import training as T
from experiments.train import memory as MM
from experiments.train import model as M

ROOT = Path(__file__).resolve().parent.parent


def ledger(model_id: str):
    return ledger_of(json.loads((ROOT / "data" / "models" / model_id / "config.json").read_text()))


def ledger_bytes_by_key(mem: T.TrainMemory) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in mem.items:
        if not item.key.startswith("states/"):
            out[item.key] = out.get(item.key, 0) + item.bytes
    return out


@pytest.mark.parametrize(("batch", "seq"), [(4, 64), (2, 33)])
def test_ledger_equals_the_trainers_measured_bytes(batch, seq):
    config = json.loads((ROOT / "data" / "models" / "baseline" / "config.json").read_text())
    cfg = M.ModelConfig.from_hf(config)
    measured = MM.measure_step(cfg, batch, seq, peak=False)
    mem = T.training_memory(ledger_of(config), MM.ledger_setup(batch, seq))
    assert mem.exact
    assert measured["params"] == mem.params == 3_688_704
    assert measured["param_bytes"] == mem.part("states/weights")
    assert measured["grad_bytes"] == mem.part("states/grads")
    assert measured["optimizer_bytes"] == mem.part("states/optimizer")
    assert measured["activations"] == ledger_bytes_by_key(mem)          # every tensor, not only the sum
    assert measured["activation_bytes"] == mem.part("activations") + mem.part("loss")


def test_measured_peak_exceeds_the_ledger():
    config = json.loads((ROOT / "data" / "models" / "baseline" / "config.json").read_text())
    measured = MM.measure_step(M.ModelConfig.from_hf(config), 2, 32)
    mem = T.training_memory(ledger_of(config), MM.ledger_setup(2, 32))
    assert measured["peak_step_bytes"] > mem.total


@pytest.mark.parametrize(("s", "b", "t", "sp", "mode"), [
    (1024, 1, 1, False, "none"), (2048, 4, 4, False, "none"), (2048, 4, 4, True, "none"),
    (1024, 2, 1, False, "selective"), (1024, 2, 2, False, "selective"), (512, 3, 1, False, "full")])
def test_korthikanti_formula_reproduced_for_gpt2(s, b, t, sp, mode):
    mem = T.training_memory(ledger("gpt2"), T.KORTHIKANTI, seq_len=s, micro_batch=b, tp=t, sp=sp, recompute=mode)
    per_layer = sum(i.per_layer for i in mem.items if i.key.startswith("activations/") and i.layers)
    h, a = 768, 12
    assert per_layer == T.korthikanti_bytes(s, b, h, a, t, sp, mode)
    if not sp and mode == "none":
        assert 2 * per_layer == 2 * s * b * h * (10 + 24 // t) + 2 * 5 * a * s * s * b // t
    # the real GPT-2 block without dropout, with a fused kernel, keeps less
    plain = T.training_memory(ledger("gpt2"), seq_len=s, micro_batch=b, tp=t, sp=sp, recompute=mode)
    assert sum(i.per_layer for i in plain.items if i.layers) <= per_layer


def test_a_swiglu_gqa_layer_differs_from_the_formula():
    mem = T.training_memory(ledger("qwen3-8b"), T.KORTHIKANTI, seq_len=4096)
    per_layer = sum(i.per_layer for i in mem.items if i.layers)
    assert per_layer != T.korthikanti_bytes(4096, 1, 4096, 32, 1)


def test_zero_paper_example():
    psi, n = 7_500_000_000, 64
    got = [T.zero_model_states(psi, stage, n) / 1e9 for stage in (0, 1, 2, 3)]
    assert [round(g, 1) for g in got] == [120.0, 31.4, 16.6, 1.9]


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_zero_stages_on_a_real_config(stage):
    lg = ledger("llama-2-7b")
    mem = T.training_memory(lg, recipe="mixed_adamw", zero=stage, dp=8)
    assert mem.part("states") == T.zero_model_states(lg.total, stage, 8)


def test_subtotals_are_sums_of_children():
    mem = T.training_memory(ledger("qwen3.8-27b"), recompute="selective")

    def check(node):
        if node["children"]:
            assert node["bytes"] == sum(c["bytes"] for c in node["children"])
            for c in node["children"]:
                check(c)
    tree = mem.tree()
    check(tree)
    assert tree["bytes"] == mem.total
    assert not mem.exact      # Gated DeltaNet layers are an estimate, and the ledger says so


def test_bytes_per_parameter_by_recipe():
    assert {r: T.bytes_per_param(r) for r in T.RECIPES} == {
        "fp32_adamw": 16, "mixed_adamw": 16, "mixed_adamw_fp32_grads": 20, "adam_8bit": 10, "bf16_adamw": 8,
        "sgd_momentum": 12, "muon": 16}
    assert T.bytes_per_param("muon", "matrix") == 12


def test_chunked_cross_entropy_holds_one_chunk():
    lg = ledger("qwen3-8b")
    whole = T.training_memory(lg, seq_len=4096, micro_batch=2)
    chunked = T.training_memory(lg, seq_len=4096, micro_batch=2, ce_chunk=1024)
    v = lg.arch.vocab_size
    assert whole.part("loss/logits") + whole.part("loss/softmax_fp32") == 2 * 4096 * v * (2 + 4)
    assert chunked.part("loss/softmax_fp32") == 1024 * v * 4


def test_recomputation_trades_memory_for_flops():
    lg = ledger("llama-2-7b")
    runs = {m: T.training_memory(lg, recompute=m, kernel="eager") for m in T.RECOMPUTE}
    acts = [runs[m].part("activations") for m in ("none", "selective", "full")]
    flops = [runs[m].recompute_flops for m in ("none", "selective", "full")]
    assert acts[0] > acts[1] > acts[2]
    assert flops[0] == 0 < flops[1] < flops[2]


def test_moe_layer_keeps_each_routed_copy():
    lg = ledger("qwen3-30b-a3b")
    mem = T.training_memory(lg, seq_len=1024)
    per = {i.key.split("/", 2)[2]: i.per_layer for i in mem.items if i.layers}
    k, d = lg.arch.moe.top_k, lg.arch.d_model
    assert per["ffn/experts/in"] == 1024 * k * d * 2
    assert per["ffn/experts/gate"] == 1024 * k * lg.arch.moe.expert_d_ff * 2


def test_bad_setup_is_refused_by_name():
    with pytest.raises(ValueError, match="recipe"):
        T.training_memory(ledger("gpt2"), recipe="adam16")
    with pytest.raises(ValueError, match="seq_len"):
        T.training_memory(ledger("gpt2"), seq_len=0)


def test_the_recorded_measurement_is_the_trainers_current_one():
    """data/train_memory.json (what the page shows) holds what the trainer measures now, every byte but the peak
    (which depends on numpy's temporaries); remake it with python -m experiments.train.memory."""
    config = json.loads((ROOT / "data" / "models" / "baseline" / "config.json").read_text())
    recorded = json.loads((ROOT / "data" / "train_memory.json").read_text())["baseline"]
    fresh = MM.measure_step(M.ModelConfig.from_hf(config), recorded["batch_size"], recorded["seq_len"], peak=False)
    fresh["activations"] = {k.replace("/", "."): v for k, v in fresh["activations"].items()}
    keys = ("params", "param_bytes", "grad_bytes", "optimizer_bytes", "activations", "activation_bytes")
    assert {k: recorded[k] for k in keys} == {k: fresh[k] for k in keys}
