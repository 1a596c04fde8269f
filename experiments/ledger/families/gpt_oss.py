"""gpt_oss: GQA with q/k/v/o biases and one learned sink logit per head, alternating sliding / full attention,
every layer MoE with a router bias and per-expert biases (transformers GptOssConfig).
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, moe
from ..config import Reader
from ..family import Family
from ..tree import Node
from ._common import (  # shared helpers: a list alike another family's names the same ones, no repeated code
    BASE_SYMBOLS,
    build_layers,
    experts,
    gqa_arch,
    gqa_sizes,
    layer_norms,
    listed_types,
    moe_info,
    standard_text,
    tied_context,
)

# ---------------------------------------------------------------------------------------------------------------
# gpt_oss: GQA with q/k/v/o biases and one learned sink logit per head, alternating sliding / full attention
# (same shapes), every layer MoE with router bias and per-expert biases, no shared expert
_GPT_OSS_MIXERS = ("sliding_attention", "full_attention")

def build_gpt_oss(r: Reader) -> Model:
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r, head_dim_default=64)  # GptOssConfig default
    attn_bias = r.bool("attention_bias", default=True)
    tied, ctx = tied_context(r, False, 131072)
    experts_key = "num_local_experts" if r.has("num_local_experts") or not r.has("num_experts") else "num_experts"
    n_experts, top_k, expert_d_ff = experts(r, experts_key, "num_experts_per_tok", "intermediate_size")
    mixers = listed_types(r, L, _GPT_OSS_MIXERS, "full_attention")
    if mixers is None:                                  # GptOssConfig: even layers sliding, odd layers full
        mixers = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(L)]
    window = r.int("sliding_window", default=128) if "sliding_attention" in mixers else None
    flags = [True] * L

    def ffn(_: bool) -> Node:
        return moe(d, n_experts, top_k, expert_d_ff, router="router", router_bias=True, expert_bias=True)

    layers = build_layers(mixers, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                                               sinks=True),
                           ffn, lambda: layer_norms(d))
    text = standard_text(layers, V, d, tied)
    arch = gqa_arch("gpt_oss", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=expert_d_ff, ffn_matrices=3, layer_types=mixers, tied_embeddings=tied, sliding_window=window,
                    moe=moe_info(n_experts, top_k, expert_d_ff, 0, 0, flags),
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size", E=experts_key, k="num_experts_per_tok",
                                 d_e="intermediate_size", W="sliding_window", L_full="layer_types"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("gpt_oss", build_gpt_oss, ('GptOssForCausalLM',)),
)
