"""qwen2_moe: Qwen2 attention (GQA, q/k/v biases per ``qkv_bias``, no qk norm) with an MoE FFN of routed experts
plus ONE always-active shared expert of width ``shared_expert_intermediate_size`` whose output passes a sigmoid
gate (``shared_expert_gate``: hidden -> 1); dense layers by ``mlp_only_layers`` / ``decoder_sparse_step``
(transformers Qwen2MoeConfig / Qwen2MoeDecoderLayer). With ``use_sliding_window`` the even-numbered layers below
``max_window_layers`` use a sliding window (Qwen2MoeConfig.layer_types), unless ``layer_types`` is given.
"""
from __future__ import annotations

from typing import Any

from ..arch import Model
from ..blocks import attention, moe, swiglu
from ..config import Reader
from ..family import Family
from ..tree import Node
from ._common import (
    build_layers,
    gqa_arch,
    gqa_sizes,
    group_names,
    layer_norms,
    listed_types,
    moe_arch,
    qwen_moe_sizes,
    standard_text,
    tied_context,
)

# ---------------------------------------------------------------------------------------------------------------
# qwen2_moe: Qwen2 attention + routed experts + one gated shared expert
_QWEN2_MOE_MIXERS = ("full_attention", "sliding_attention")

def qwen2_moe_layer_types(r: Reader, L: int) -> list[str]:
    listed = listed_types(r, L, _QWEN2_MOE_MIXERS, "full_attention")
    if listed is not None:
        return listed
    if not r.bool("use_sliding_window", default=False):
        return ["full_attention"] * L
    below = r.int("max_window_layers", default=28, minimum=0)
    return ["sliding_attention" if i % 2 == 0 and i < below else "full_attention" for i in range(L)]

def build_qwen2_moe(r: Reader) -> Model:
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r)
    qkv_bias = r.bool("qkv_bias", default=True)
    tied, ctx = tied_context(r, False, 32768)
    n_experts, top_k, expert_d_ff, shared_d_ff, flags, d_ff = qwen_moe_sizes(r, L, shared=True)
    mixers = qwen2_moe_layer_types(r, L)
    window = r.int("sliding_window", default=4096) if "sliding_attention" in mixers else None
    names = group_names(mixers, flags)
    window_symbol: dict[str, Any] = {"W": "sliding_window"} if window else {}

    def ffn(is_moe: bool) -> Node:
        if not is_moe:
            assert d_ff is not None   # (read whenever a layer is dense)
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=1, shared_d_ff=shared_d_ff,
                   shared_name="shared_expert", shared_gate=True)

    layers = build_layers(names, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=qkv_bias),
                           ffn, lambda: layer_norms(d))
    text = standard_text(layers, V, d, tied)
    arch = gqa_arch("qwen2_moe", d, L, V, ctx, n_heads, n_kv, head_dim, layer_types=mixers, tied_embeddings=tied,
                    sliding_window=window,
                    **moe_arch(flags, d_ff, expert_d_ff, n_experts, top_k, 1, shared_d_ff, E="num_experts",
                               k="num_experts_per_tok", d_e="moe_intermediate_size",
                               d_s="shared_expert_intermediate_size", **window_symbol))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("qwen2_moe", build_qwen2_moe, ('Qwen2MoeForCausalLM',)),
)
