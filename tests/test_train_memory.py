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
    assert mem.exact          # Gated DeltaNet layers too, by the kernels' saved tensors
    assert not T.training_memory(ledger("jamba-v0.1")).exact      # Jamba's own Mamba sequence: an estimate, said


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


def per_layer_of(mem: T.TrainMemory, prefix: str) -> dict[str, int]:
    """{tensor key under prefix: bytes in one layer}"""
    return {i.key.removeprefix(prefix): i.per_layer for i in mem.items if i.key.startswith(prefix)}


@pytest.mark.parametrize(("model_id", "group"), [("jamba-v0.1", "full_attention_dense"),
                                                 ("mimo-v2-flash", "sliding_attention_moe"),
                                                 ("mimo-v2-flash", "full_attention_moe")])
def test_a_layer_group_named_for_its_ffn_keeps_its_attentions_tensors(model_id, group):
    """A group named <layer type>_dense / _moe (a model with both kinds of FFN) reads its layer type's widths and
    window: q, k, v and o_proj's input as wide as the config's heads say (MiMo-V2: keys 192, values 128 per head;
    its sliding layers have their own head counts), scores over the config's window."""
    c = config_of(f"data/models/{model_id}")
    sliding = group.startswith("sliding")
    pre = "swa_" if sliding else ""
    heads, kv = c[f"{pre}num_attention_heads"], c[f"{pre}num_key_value_heads"]
    qk_dim = c.get(f"{pre}head_dim", c["hidden_size"] // c["num_attention_heads"])
    v_dim = c.get(f"{pre}v_head_dim", qk_dim)
    s = 1024
    mem = T.training_memory(ledger(model_id), seq_len=s, kernel="eager")
    per = per_layer_of(mem, f"activations/{group}/attn/")
    assert per["q"] == s * heads * qk_dim * 2
    assert per["k"] == s * kv * qk_dim * 2
    assert per["v"] == s * kv * v_dim * 2
    assert per["o_in"] == s * heads * v_dim * 2
    window = c["sliding_window"] if sliding else s
    assert per["scores"] == s * heads * min(window, s) * 2


def test_an_indexers_projections_do_not_stand_in_for_the_attentions():
    """MiniMax-M3's sparse layers have an indexer with a k_proj of its own (128 wide): K is the attention's (4 KV
    heads of 128), and the indexer's outputs are a marked estimate beside it."""
    lg = fixture_ledger("tests/fixtures/models/minimax-m3-nvfp4")
    c = config_of("tests/fixtures/models/minimax-m3-nvfp4")
    s = 512
    mem = T.training_memory(lg, seq_len=s)
    group = next(t for t in lg.layer_types if any(c2.name == "indexer" for a in lg.layer(t).children
                                                    for c2 in a.children))
    per = per_layer_of(mem, f"activations/{group}/attn/")
    assert per["k"] == per["v"] == s * c["num_key_value_heads"] * c["head_dim"] * 2
    rough = {i.key for i in mem.items if not i.exact}
    assert rough and all(f"{group}/attn/indexer/" in k for k in rough)


def test_fewer_kv_heads_than_ranks_keep_one_whole_head_per_rank():
    """Qwen3-Next's full attention has 2 KV heads of 256: at tp = 8 each rank keeps one (Megatron-LM replicates),
    not a quarter of one; q (16 heads) is split 8 ways."""
    lg = ledger("qwen3-next-80b-a3b")
    s = 1024
    per = {tp: per_layer_of(T.training_memory(lg, seq_len=s, tp=tp), "activations/full_attention/attn/")
           for tp in (1, 2, 8)}
    assert per[1]["k"] == s * 2 * 256 * 2 and per[2]["k"] == s * 256 * 2 and per[8]["k"] == s * 256 * 2
    assert per[8]["q"] == per[1]["q"] // 8


def test_mtp_module_is_counted_like_a_backbone_layer_plus_its_own_loss():
    """DeepSeek-V3's MTP module: its decoder layer keeps what a backbone MoE layer keeps, tensor for tensor, plus the
    two norms, the projection's 2·d input and the head's norm; and one more head input, logits and softmax."""
    lg = ledger("deepseek-v3")
    s, d = 2048, lg.arch.d_model
    mem = T.training_memory(lg, seq_len=s)
    without = T.training_memory(lg, seq_len=s, mtp=False)
    backbone = per_layer_of(mem, "activations/full_attention_moe/")
    mtp = per_layer_of(mem, "activations/mtp/full_attention_moe/")
    renamed = {"norm1": "input_layernorm", "norm2": "post_attention_layernorm"}
    for key, b in backbone.items():
        head, _, rest = key.partition("/")
        assert mtp[f"{renamed.get(head, head)}/{rest}"] == b
    extra = {k: v for k, v in mtp.items() if not k.startswith(("attn/", "ffn/", "input_layernorm/",
                                                                "post_attention_layernorm/"))}
    # the hidden state hnorm is given is the backbone's head input, kept already (loss/head_in): only its 1/rms
    assert extra == {"enorm/input": s * d * 2, "enorm/rstd": s * 4, "hnorm/rstd": s * 4,
                     "eh_proj_in": s * 2 * d * 2, "shared_head/norm/input": s * d * 2, "shared_head/norm/rstd": s * 4}
    assert mem.part("loss/mtp/logits") == mem.part("loss/logits") == s * lg.arch.vocab_size * 2
    assert mem.part("loss/mtp/softmax_fp32") == mem.part("loss/softmax_fp32")
    states = mem.part("states") - without.part("states")
    assert states == lg.mtp * 16 > 0               # mixed-precision AdamW: 16 bytes per MTP parameter
    assert mem.total - without.total == states + mem.part("activations/mtp") + mem.part("loss/mtp")
    assert not without.part("activations/mtp") and not without.part("loss/mtp")
    assert without.params == lg.total - lg.mtp


def test_mtp_under_tensor_parallelism():
    """Qwen3.8-27B's MTP: fc's 2·d input is replicated across tensor-parallel ranks unless sequence parallelism
    splits it; its attention's q is split with the heads."""
    lg = ledger("qwen3.8-27b")
    s, d = 1024, lg.arch.d_model
    one, tp4, sp4 = (per_layer_of(T.training_memory(lg, seq_len=s, tp=t, sp=sp), "activations/mtp/")
                     for t, sp in ((1, False), (4, False), (4, True)))
    assert one["module/fc/in"] == tp4["module/fc/in"] == s * 2 * d * 2 == 4 * sp4["module/fc/in"]
    assert tp4["full_attention/attn/q"] == one["full_attention/attn/q"] // 4


def test_mtp_under_full_recomputation_keeps_each_modules_inputs():
    lg = ledger("qwen3.8-27b")
    s, d = 4096, lg.arch.d_model
    mem = T.training_memory(lg, seq_len=s, recompute="full")
    none = T.training_memory(lg, seq_len=s)
    assert mem.part("activations/mtp") == s * d * 2          # the next tokens' embeddings, its one new input
    rebuilt = next(i.bytes for i in mem.items if i.key == "activations/recomputed_layer")
    assert rebuilt == max(none.part("activations/mtp"), max(
        sum(i.per_layer for i in none.items if i.key.startswith(f"activations/{t}/")) for t in lg.layer_types))


def config_of(path: str) -> dict:
    c = json.loads((ROOT / path / "config.json").read_text())
    return c.get("text_config", c)


def mixer_bytes_per_token(mem: T.TrainMemory, group: str, s: int) -> tuple[int, int]:
    """(bytes per token, bytes per sequence) one mixer of a layer group keeps, from the ledger's items."""
    items = [i for i in mem.items if i.key.startswith(f"activations/{group}/mixer/")]
    per_seq = sum(i.per_layer for i in items if i.key.endswith("/scan_chunks"))
    return (sum(i.per_layer for i in items) - per_seq) // s, per_seq


@pytest.mark.parametrize("path", ["data/models/qwen3-next-80b-a3b", "data/models/qwen3.8-27b"])
def test_gated_deltanet_keeps_what_its_kernels_save(path):
    """Gated DeltaNet per token, from the config's keys (the kernels' save_for_backward lists, training.py): bf16
    d + conv input (2·Hk·K + Hv·V) + beta Hv + normalised q, k 2·Hk·K + v, norm input, gate, out_proj input 4·Hv·V +
    the WY matrix 64·Hv; fp32 softplus in/out 2·Hv, decay cumsum Hv, q/k 1/norm 2·Hk, norm 1/rms Hv."""
    c = config_of(path)
    d, hk, hv = c["hidden_size"], c["linear_num_key_heads"], c["linear_num_value_heads"]
    k, v = c["linear_key_head_dim"], c["linear_value_head_dim"]
    bf16 = d + (2 * hk * k + hv * v) + hv + 2 * hk * k + 4 * hv * v + 64 * hv
    fp32 = 2 * hv + hv + 2 * hk + hv
    s = 2048
    mem = T.training_memory(ledger(path.rsplit("/", 1)[1]), seq_len=s)
    assert mixer_bytes_per_token(mem, "linear_attention", s) == (2 * bf16 + 4 * fp32, 0)
    assert mem.exact
    # the chunk states are recomputed in the backward, so the mixer's bytes grow linearly with the sequence
    longer = T.training_memory(ledger(path.rsplit("/", 1)[1]), seq_len=4 * s)
    assert mixer_bytes_per_token(longer, "linear_attention", 4 * s) == (2 * bf16 + 4 * fp32, 0)


def fixture_ledger(path: str):
    return ledger_of(json.loads((ROOT / path / "config.json").read_text()))


@pytest.mark.parametrize(("path", "group", "keys"), [
    ("tests/fixtures/models/nemotron-3-nano-30b-a3b", "mamba",
     ("mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups")),
    ("tests/fixtures/models/mamba-codestral-7b", "mamba", ("num_heads", "head_dim", "state_size", "n_groups")),
    ("tests/fixtures/models/falcon-h1-0.5b-instruct", "hybrid",
     ("mamba_n_heads", "mamba_d_head", "mamba_d_state", "mamba_n_groups"))])
def test_mamba2_keeps_what_the_fused_scan_saves(path, group, keys):
    """Mamba-2 per token: bf16 in_proj's input d, its output (2·d_inner + 2·G·N + heads) and the scan's output
    d_inner; fp32 the gated norm's 1/rms per group G (none without the norm: Falcon-H1). No conv width, no chunk
    size."""
    c = config_of(path)
    heads, p, n, g = (c[k] for k in keys)
    d, d_inner = c["hidden_size"], heads * p
    bf16 = d + (2 * d_inner + 2 * g * n + heads) + d_inner
    normed = c.get("mamba_rms_norm", True)
    s = 1024
    mem = T.training_memory(fixture_ledger(path), seq_len=s)
    assert mixer_bytes_per_token(mem, group, s) == (2 * bf16 + (4 * g if normed else 0), 0)


@pytest.mark.parametrize("path", ["tests/fixtures/models/mamba-2.8b-hf", "tests/fixtures/models/falcon-mamba-7b"])
@pytest.mark.parametrize("s", [2048, 5000])
def test_mamba1_keeps_what_mamba_inner_fn_saves(path, s):
    """Mamba-1 per token: bf16 d + x and z 2·d_inner + x_proj's output R + 2N + B, C copies 2N + the scan's output
    d_inner; per sequence the scan's fp32 intermediates d_inner · 2N per started 2,048-token chunk."""
    c = config_of(path)
    d, d_inner, n, r = c["hidden_size"], c["intermediate_size"], c["state_size"], c["time_step_rank"]
    bf16 = d + 2 * d_inner + (r + 2 * n) + 2 * n + d_inner
    chunks = -(-s // 2048)
    mem = T.training_memory(fixture_ledger(path), seq_len=s, micro_batch=3)
    per_token, per_seq = mixer_bytes_per_token(mem, "mamba1", 3 * s)
    assert (per_token, per_seq) == (2 * bf16, 3 * d_inner * 2 * n * chunks * 4)


def test_what_no_rule_itemises_is_marked_and_the_rest_is_exact():
    """A DSA indexer's tensors (DeepSeek-V3.2) and Jamba's own Mamba ops are the ledger's estimates: their items
    say so, and the model's other items stay exact."""
    for model_id, where in (("deepseek-v3.2", "/attn/"), ("jamba-v0.1", "/mixer/")):
        mem = T.training_memory(ledger(model_id), seq_len=512)
        rough = {i.key for i in mem.items if not i.exact}
        assert rough and all(where in k for k in rough if "/checkpoint" not in k), model_id
        assert any(i.exact for i in mem.items if i.key.startswith("activations/") and "/ffn/" in i.key), model_id
    assert T.training_memory(ledger("deepseek-v3"), seq_len=512).exact
