"""experiments/ledger/blocks.py on its own: every builder's tensors, shapes, kinds and counts for small sizes.

The sizes are tiny and every expected count is worked out by hand beside the assertion, tensor by tensor
(a Linear(in, out) weight is stored (out, in), a bias (out,)). ``n`` is a node's count over all copies, ``active``
what one token uses (only the top_k routed experts of a MoE layer).
"""
from __future__ import annotations

import pytest

from experiments.ledger.blocks import attention, decoder_layer, gated_deltanet, gelu_mlp, linear, mla, moe, norm, swiglu
from experiments.ledger.tree import Node


def shapes(node: Node) -> dict[str, tuple[int, ...]]:
    """Leaf key (relative to node) -> shape, in order."""
    keyed = node.with_keys()
    return {n.key.split("/", 1)[1]: n.shape for n in keyed.walk() if n.shape is not None}


def sum_kind(node: Node, kind: str, active: bool = False) -> int:
    return node.sum_where(lambda leaf, kinds: kind in kinds, active=active)


def matmul_weights(node: Node) -> int:
    return node.sum_where(lambda leaf, kinds: leaf.matmul)


# -- linear, norm ------------------------------------------------------------------------------------------------
def test_linear():
    (w,) = linear("up", 3, 5)
    assert (w.name, w.shape, w.count, w.matmul, w.kind) == ("up.weight", (5, 3), 15, True, "")
    w, b = linear("up", 3, 5, bias=True, kind="ffn")
    assert (b.name, b.shape, b.count, b.matmul) == ("up.bias", (5,), 5, False)
    assert w.kind == b.kind == "ffn"


@pytest.mark.parametrize("bias, parts, count", [(False, {"weight": (6,)}, 6),
                                                (True, {"weight": (6,), "bias": (6,)}, 12)])
def test_norm(bias, parts, count):
    n = norm("input_layernorm", 6, bias=bias)
    assert (n.name, n.kind, n.count) == ("input_layernorm", "norm", count)
    assert shapes(n) == parts
    assert matmul_weights(n) == 0


# -- FFNs --------------------------------------------------------------------------------------------------------
def test_swiglu():
    f = swiglu(4, 6)
    assert (f.name, f.kind) == ("mlp", "ffn")
    assert shapes(f) == {"gate_proj.weight": (6, 4), "up_proj.weight": (6, 4), "down_proj.weight": (4, 6)}
    assert f.count == f.active == 72                        # 3 · 24
    assert matmul_weights(f) == 72


def test_swiglu_with_bias_and_a_name():
    f = swiglu(4, 6, bias=True, name="shared_expert")
    assert f.name == "shared_expert"
    assert shapes(f) == {"gate_proj.weight": (6, 4), "gate_proj.bias": (6,), "up_proj.weight": (6, 4),
                         "up_proj.bias": (6,), "down_proj.weight": (4, 6), "down_proj.bias": (4,)}
    assert f.count == 88                                    # 72 + 6 + 6 + 4
    assert matmul_weights(f) == 72


def test_gelu_mlp():
    f = gelu_mlp(4, 6)
    assert (f.name, f.kind) == ("mlp", "ffn")
    assert shapes(f) == {"c_fc.weight": (4, 6), "c_fc.bias": (6,), "c_proj.weight": (6, 4), "c_proj.bias": (4,)}
    assert f.count == 58                                    # 24 + 6 + 24 + 4
    assert matmul_weights(f) == 48


# -- attention ---------------------------------------------------------------------------------------------------
# d = 8, 4 query heads, 2 KV heads (GQA), head_dim 2: q 8·8 = 64, k 4·8 = 32, v 32, o 8·8 = 64 -> 192
GQA = dict(d=8, n_heads=4, n_kv=2, head_dim=2)


def test_attention_gqa():
    a = attention(**GQA)
    assert (a.name, a.kind) == ("self_attn", "attention")
    assert shapes(a) == {"q_proj.weight": (8, 8), "k_proj.weight": (4, 8), "v_proj.weight": (4, 8),
                         "o_proj.weight": (8, 8)}
    assert a.count == a.active == 192
    assert matmul_weights(a) == 192


def test_attention_mha_is_gqa_with_every_head_its_own_kv():
    assert attention(d=8, n_heads=4, n_kv=4, head_dim=2).count == 256       # 4 · 64


def test_attention_head_dim_need_not_be_d_over_heads():
    a = attention(d=8, n_heads=4, n_kv=1, head_dim=3)
    # q 12·8 = 96, k 3·8 = 24, v 24, o (8, 12) = 96
    assert shapes(a)["o_proj.weight"] == (8, 12) and a.count == 240


@pytest.mark.parametrize("options, extra, count", [
    (dict(qkv_bias=True), {"q_proj.bias": (8,), "k_proj.bias": (4,), "v_proj.bias": (4,)}, 192 + 16),
    (dict(o_bias=True), {"o_proj.bias": (8,)}, 192 + 8),
    (dict(qkv_bias=True, o_bias=True), {"q_proj.bias": (8,), "k_proj.bias": (4,), "v_proj.bias": (4,),
                                        "o_proj.bias": (8,)}, 192 + 24),
    (dict(qk_norm=True), {"q_norm.weight": (2,), "k_norm.weight": (2,)}, 192 + 4),
    (dict(sinks=True), {"sinks": (4,)}, 192 + 4),
])
def test_attention_options(options, extra, count):
    a = attention(**GQA, **options)
    base = {"q_proj.weight": (8, 8), "k_proj.weight": (4, 8), "v_proj.weight": (4, 8), "o_proj.weight": (8, 8)}
    assert shapes(a) == {**base, **extra}
    assert a.count == count
    assert matmul_weights(a) == 192                         # biases, norms and sinks are no matmuls


def test_attention_tensor_order_with_every_option():
    a = attention(**GQA, qkv_bias=True, o_bias=True, qk_norm=True, sinks=True)
    assert list(shapes(a)) == ["q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias", "v_proj.weight",
                               "v_proj.bias", "o_proj.weight", "o_proj.bias", "q_norm.weight", "k_norm.weight",
                               "sinks"]
    assert a.count == 192 + 24 + 4 + 4


def test_attention_output_gate_doubles_q_only():
    a = attention(**GQA, output_gate=True)
    # q_proj produces 4 heads · 2 of query plus as many gate values: (16, 8) = 128; k, v, o unchanged
    assert shapes(a) == {"q_proj.weight": (16, 8), "k_proj.weight": (4, 8), "v_proj.weight": (4, 8),
                         "o_proj.weight": (8, 8)}
    assert a.count == 256                                   # 128 + 32 + 32 + 64
    gated_biased = attention(**GQA, output_gate=True, qkv_bias=True)
    assert shapes(gated_biased)["q_proj.bias"] == (16,) and gated_biased.count == 256 + 16 + 4 + 4


def test_qk_norm_is_kind_norm_inside_attention():
    a = attention(**GQA, qk_norm=True)
    assert sum_kind(a, "norm") == 4 and sum_kind(a, "attention") == 196


def test_attention_name_and_kind_can_be_chosen():
    a = attention(**GQA, name="cross_attn", kind="cross_attention")
    assert (a.name, a.kind) == ("cross_attn", "cross_attention") and a.count == 192


# -- gated DeltaNet ----------------------------------------------------------------------------------------------
def test_gated_deltanet():
    g = gated_deltanet(d=8, n_k_heads=2, n_v_heads=4, k_head_dim=3, v_head_dim=2, conv_kernel=4)
    # key_dim 2·3 = 6, value_dim 4·2 = 8, conv_dim 2·6 + 8 = 20
    assert (g.name, g.kind) == ("linear_attn", "linear_attention")
    assert shapes(g) == {"in_proj_qkv.weight": (20, 8), "in_proj_z.weight": (8, 8), "in_proj_b.weight": (4, 8),
                         "in_proj_a.weight": (4, 8), "conv1d.weight": (20, 1, 4), "dt_bias": (4,),
                         "A_log": (4,), "norm.weight": (2,), "out_proj.weight": (8, 8)}
    assert g.count == 442                                   # 160 + 64 + 32 + 32 + 80 + 4 + 4 + 2 + 64
    assert matmul_weights(g) == 432                         # the conv counts as one (160 + 64 + 32 + 32 + 80 + 64)
    assert sum_kind(g, "norm") == 2
    assert gated_deltanet(8, 2, 4, 3, 2, 4, name="mixer").name == "mixer"


# -- MLA -----------------------------------------------------------------------------------------------------------
# d 16, 2 heads, q_lora_rank 6, kv_lora_rank 4, qk_nope 3 + qk_rope 2 = qk 5 per head, v_head_dim 5
MLA = dict(d=16, n_heads=2, kv_lora_rank=4, qk_nope_dim=3, qk_rope_dim=2, v_head_dim=5)
KV_AND_O = {"kv_a_proj_with_mqa.weight": (6, 16),      # 4 latent + 2 rotary = 6 rows: 96
            "kv_a_layernorm.weight": (4,),              # 4
            "kv_b_proj.weight": (16, 4),                # 2 · (3 + 5) = 16 rows: 64
            "o_proj.weight": (16, 10)}                  # 2 · 5 = 10 in: 160            -> 324


def test_mla_with_q_lora():
    m = mla(q_lora_rank=6, **MLA)
    assert (m.name, m.kind) == ("self_attn", "attention")
    assert shapes(m) == {"q_a_proj.weight": (6, 16), "q_a_layernorm.weight": (6,), "q_b_proj.weight": (10, 6),
                         **KV_AND_O}
    assert m.count == 486                                   # 96 + 6 + 60 + 324
    assert sum_kind(m, "norm") == 10                        # 6 + 4
    assert matmul_weights(m) == 476                         # 96 + 60 + 96 + 64 + 160


def test_mla_with_q_lora_and_bias():
    m = mla(q_lora_rank=6, bias=True, **MLA)
    s = shapes(m)
    assert (s["q_a_proj.bias"], s["kv_a_proj_with_mqa.bias"], s["o_proj.bias"]) == ((6,), (6,), (16,))
    assert "q_b_proj.bias" not in s and "kv_b_proj.bias" not in s
    assert m.count == 486 + 28                              # 6 + 6 + 16


@pytest.mark.parametrize("no_lora", [None, 0])
def test_mla_without_q_lora(no_lora):
    m = mla(q_lora_rank=no_lora, **MLA)
    assert shapes(m) == {"q_proj.weight": (10, 16), **KV_AND_O}
    assert m.count == 484                                   # 160 + 324
    biased = mla(q_lora_rank=no_lora, bias=True, **MLA)
    assert "q_proj.bias" not in shapes(biased)
    assert biased.count == 484 + 22                         # kv_a 6 + o 16


# -- MoE -----------------------------------------------------------------------------------------------------------
# d 4, 8 experts, top-2, expert width 3: router (8, 4) = 32; one expert 12 + 12 + 12 = 36; all 288, active 72
MOE = dict(d=4, n_experts=8, top_k=2, expert_d_ff=3)


def test_moe_plain():
    m = moe(**MOE)
    assert (m.name, m.kind) == ("mlp", "ffn")
    assert shapes(m) == {"gate/weight": (8, 4), "experts/gate_proj.weight": (3, 4),
                         "experts/up_proj.weight": (3, 4), "experts/down_proj.weight": (4, 3)}
    experts = m.with_keys().find("mlp/experts")
    assert (experts.n, experts.n_active, experts.per_copy, experts.count, experts.active) == (8, 2, 36, 288, 72)
    assert (m.count, m.active) == (320, 104)                # 32 + 288, 32 + 72
    assert sum_kind(m, "router") == 32 and m.with_keys().find("mlp/gate").kind == "router"
    assert m.with_keys().multiplicity("mlp/experts/up_proj.weight") == 8


def test_moe_router_bias_and_name():
    m = moe(**MOE, router="router", router_bias=True)
    s = shapes(m)
    assert (s["router/weight"], s["router/bias"]) == ((8, 4), (8,))
    assert (m.count, m.active) == (328, 112)                # + 8 on both
    assert sum_kind(m, "router") == 40


def test_moe_router_buffer_is_counted_and_tagged():
    m = moe(**MOE, router_buffer="e_score_correction_bias")
    assert shapes(m)["gate/e_score_correction_bias"] == (8,)
    assert (m.count, m.active) == (328, 112)
    assert sum_kind(m, "hf_buffer") == 8                    # what hf_count leaves out
    assert sum_kind(m, "router") == 40                      # weight 32 + buffer 8


def test_moe_expert_bias():
    m = moe(**MOE, expert_bias=True)
    # one expert: 36 + 3 + 3 + 4 = 46; all 368, active 92
    assert shapes(m)["experts/down_proj.bias"] == (4,)
    assert (m.count, m.active) == (400, 124)                # 32 + 368, 32 + 92


@pytest.mark.parametrize("n_shared, total, active", [
    (1, 320 + 72, 104 + 72),                                # one shared expert of width 6: 24 + 24 + 24
    (2, 320 + 144, 104 + 144),                              # two of them, both always active
])
def test_moe_shared_experts(n_shared, total, active):
    m = moe(**MOE, n_shared=n_shared, shared_d_ff=6)
    shared = m.with_keys().find("mlp/shared_experts")
    assert (shared.n, shared.per_copy, shared.count, shared.active) == (n_shared, 72, 72 * n_shared, 72 * n_shared)
    assert shapes(m)["shared_experts/down_proj.weight"] == (4, 6)
    assert (m.count, m.active) == (total, active)


def test_moe_shared_gate_takes_the_shared_name():
    m = moe(**MOE, n_shared=1, shared_d_ff=6, shared_name="shared_expert", shared_gate=True)
    s = shapes(m)
    assert s["shared_expert_gate/weight"] == (1, 4)
    assert list(s)[-1] == "shared_expert_gate/weight"
    assert (m.count, m.active) == (320 + 72 + 4, 104 + 72 + 4)


def test_moe_with_everything():
    m = moe(**MOE, router_bias=True, router_buffer="e_score_correction_bias", expert_bias=True, n_shared=2,
            shared_d_ff=6, shared_gate=True)
    # router 32 + 8 + 8 = 48; experts 368 (active 92); shared 144; shared gate 4
    assert (m.count, m.active) == (564, 288)
    assert [c.name for c in m.children] == ["gate", "experts", "shared_experts", "shared_experts_gate"]


def test_moe_without_shared_experts_has_no_shared_nodes():
    m = moe(**MOE, shared_d_ff=6)                           # a width alone adds nothing
    assert [c.name for c in m.children] == ["gate", "experts"]


# -- decoder layer ---------------------------------------------------------------------------------------------------
def test_decoder_layer():
    layer = decoder_layer(attention(**GQA), swiglu(8, 6),
                          [norm("input_layernorm", 8), norm("post_attention_layernorm", 8)], "layers", n=3)
    # one copy: attention 192 + swiglu 3 · 48 = 144 + norms 16 = 352
    assert (layer.name, layer.n, layer.per_copy, layer.count) == ("layers", 3, 352, 1056)
    assert [c.name for c in layer.children] == ["self_attn", "mlp", "input_layernorm", "post_attention_layernorm"]


def test_decoder_layer_with_moe_active():
    layer = decoder_layer(attention(d=4, n_heads=2, n_kv=1, head_dim=2), moe(**MOE), [norm("n", 4)], "layers", n=2)
    # attention: q (4, 4) 16, k (2, 4) 8, v 8, o (4, 4) 16 = 48; moe 320 (active 104); norm 4
    assert (layer.count, layer.active) == (2 * (48 + 320 + 4), 2 * (48 + 104 + 4))
    assert layer.with_keys().multiplicity("layers/mlp/experts/gate_proj.weight") == 16     # 2 layers · 8


# -- keys given in place (build_ledger): to a fresh tree's nodes, never to a node already keyed ------------------
def test_keyed_in_place_fresh_shared_and_already_keyed_nodes():
    from experiments.ledger.tree import group, leaf
    shared = leaf("w", 2, 3)
    tree = group("root", [group("a", [shared]), group("b", [shared])])
    keyed = tree.keyed_in_place()
    assert keyed is tree                                               # fresh: keyed in place
    assert [n.key for n in keyed.walk()] == ["root", "root/a", "root/a/w", "root/b", "root/b/w"]
    assert keyed.count == 12 and keyed.find("root/b/w").count == 6
    again = group("top", [keyed]).keyed_in_place()                     # reused under another root: copied
    assert [n.key for n in again.walk()][:3] == ["top", "top/root", "top/root/a"]
    assert [n.key for n in keyed.walk()] == ["root", "root/a", "root/a/w", "root/b", "root/b/w"]   # unchanged
    assert keyed.keyed_in_place() is keyed                             # keying a keyed tree again: the same tree
    fresh = group("m", [leaf("x", 2)])
    assert fresh.with_keys().key == "m" and fresh.key == ""            # with_keys still copies
