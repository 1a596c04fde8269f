"""qwen3_moe: Qwen3 attention (GQA, per-head q/k RMSNorm) with a routed-expert FFN, no shared expert
(transformers Qwen3MoeConfig).
"""
from __future__ import annotations

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
    moe_arch,
    qwen_moe_sizes,
    standard_text,
    tied_context,
)


# ---------------------------------------------------------------------------------------------------------------
# qwen3_moe: Qwen3 attention (GQA, per-head q/k RMSNorm) with a routed-expert FFN, no shared expert
def build_qwen3_moe(r: Reader) -> Model:
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r)
    attn_bias = r.bool("attention_bias", default=False)
    tied, ctx = tied_context(r, False, 32768)
    n_experts, top_k, expert_d_ff, _, flags, d_ff = qwen_moe_sizes(r, L, shared=False)
    # transformers: sliding_window applies (to every layer) only with use_sliding_window
    window = r.int("sliding_window", default=None) if r.bool("use_sliding_window", default=False) else None
    mixer_type = "sliding_attention" if window else "full_attention"
    mixers = [mixer_type] * L
    names = group_names(mixers, flags)

    def ffn(is_moe: bool) -> Node:
        if is_moe:
            return moe(d, n_experts, top_k, expert_d_ff)
        assert d_ff is not None   # (read whenever a layer is dense)
        return swiglu(d, d_ff)

    layers = build_layers(names, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                                               qk_norm=True),
                           ffn, lambda: layer_norms(d))
    text = standard_text(layers, V, d, tied)
    arch = gqa_arch("qwen3_moe", d, L, V, ctx, n_heads, n_kv, head_dim, layer_types=mixers, tied_embeddings=tied,
                    sliding_window=window, **moe_arch(flags, d_ff, expert_d_ff, n_experts, top_k, 0, 0,
                                                      E="num_experts", k="num_experts_per_tok",
                                                      d_e="moe_intermediate_size"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("qwen3_moe", build_qwen3_moe, ('Qwen3MoeForCausalLM',)),
)
