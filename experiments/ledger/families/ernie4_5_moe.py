"""ernie4_5_moe (ERNIE-4.5 MoE, e.g. 21B-A3B / 300B-A47B): GQA attention whose q/k/v/o (and the lm_head and every
MLP) carry biases when ``use_bias``; MoE layers are those i with (i + 1) a multiple of ``moe_layer_interval`` and
moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer), the others dense. An MoE block: a router
(``gate``, whose ``moe_statics.e_score_correction_bias`` of shape (1, experts) transformers keeps as a
parameter), ``moe_num_experts`` routed experts of ``moe_intermediate_size`` (no biases), and, when
``moe_num_shared_experts`` > 0, shared experts of that width (transformers Ernie4_5_MoeConfig /
Ernie4_5_MoeDecoderLayer; it stores them as one MLP of moe_num_shared_experts · moe_intermediate_size).

Not read: ``num_nextn_predict_layers``. Baidu's checkpoints carry an MTP block that transformers does not build,
but no published ERNIE-4.5 MoE config.json or weight map could be found to fix its layout, so the ledger has no
``mtp`` part for this family; it is checked against transformers on Ernie4_5_MoeConfig's defaults (which are
ERNIE-4.5-21B-A3B's sizes), tests/test_families_views_moe.py.
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, moe, norm, swiglu
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import (
    build_layers,
    dense_d_ff,
    embed_tokens,
    experts,
    gqa_arch,
    gqa_sizes,
    group_names,
    layer_norms,
    moe_arch,
    text_tree,
    tied_context,
)


# ---------------------------------------------------------------------------------------------------------------
# ernie4_5_moe: GQA (+ biases), MoE between start and end index every interval-th layer, shared experts
def ernie_moe_flags(r: Reader, L: int) -> list[bool]:
    start = r.int("moe_layer_start_index", default=1, minimum=0)
    end = r.int("moe_layer_end_index", default=-1, minimum=-1)
    end = L - 1 if end == -1 else end
    interval = r.int("moe_layer_interval", default=1)
    return [(i + 1) % interval == 0 and start <= i <= end for i in range(L)]

def build_ernie4_5_moe(r: Reader) -> Model:
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r)
    bias = r.bool("use_bias", default=False)
    tied, ctx = tied_context(r, True, 131072)
    n_experts, top_k, expert_d_ff = experts(r, "moe_num_experts", "moe_k", "moe_intermediate_size")
    n_shared = r.int("moe_num_shared_experts", default=2, minimum=0)
    flags = ernie_moe_flags(r, L)
    d_ff = dense_d_ff(r, flags)
    mixers = ["full_attention"] * L
    names = group_names(mixers, flags)

    def ffn(is_moe: bool) -> Node:
        if not is_moe:
            assert d_ff is not None   # (read whenever a layer is dense)
            return swiglu(d, d_ff, bias)
        statics = leaf("moe_statics.e_score_correction_bias", 1, n_experts, matmul=False)
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=n_shared, shared_d_ff=expert_d_ff,
                   shared_bias=bias, router_extra=(statics,))

    layers = build_layers(names, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=bias, o_bias=bias),
                           ffn, lambda: layer_norms(d))
    head = None if tied else group("lm_head", [leaf("weight", V, d)] + ([leaf("bias", V, matmul=False)]
                                                                       if bias else []), kind="lm_head")
    text = text_tree([embed_tokens(V, d)], layers, norm("norm", d), head)
    arch = gqa_arch("ernie4_5_moe", d, L, V, ctx, n_heads, n_kv, head_dim, layer_types=mixers, tied_embeddings=tied,
                    **moe_arch(flags, d_ff, expert_d_ff, n_experts, top_k, n_shared, expert_d_ff,
                               moe_keys={"shared_d_ff_key": "moe_intermediate_size"},   # shared experts: that width too
                               E="moe_num_experts", k="moe_k", d_e="moe_intermediate_size",
                               E_shared="moe_num_shared_experts", L_moe_start="moe_layer_start_index"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("ernie4_5_moe", build_ernie4_5_moe, ('Ernie4_5_MoeForCausalLM',)),
)
