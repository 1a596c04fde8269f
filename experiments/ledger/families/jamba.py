"""jamba: Mamba (selective SSM, Mamba-1) layers with one GQA attention layer every attn_layer_period layers (at
attn_layer_offset), and an MoE FFN (num_experts gated experts, top num_experts_per_tok, no shared expert) every
expert_layer_period layers (at expert_layer_offset), a dense SwiGLU elsewhere (transformers JambaConfig /
modeling_jamba.py: JambaMambaDecoderLayer, JambaAttentionDecoderLayer).

Jamba's Mamba mixer normalises dt, B and C with RMSNorms (dt_layernorm, b_layernorm, c_layernorm). Layer groups:
``mamba1`` (Mamba-1: a fixed state d_inner × d_state plus the conv buffer, no KV cache) and ``full_attention``,
suffixed _dense / _moe.
"""
from __future__ import annotations

from math import ceil

from ..arch import Mixer, Model
from ..blocks import attention, mamba1, mamba1_state, moe, norm, swiglu
from ..config import Reader
from ..family import Family
from ..tree import Node
from ._common import (
    BASE_SYMBOLS,
    build_layers,
    embed_tokens,
    experts,
    gqa_arch,
    group_names,
    heads,
    lm_head,
    moe_info,
    sizes,
    text_tree,
    tied_context,
)


def _every(r: Reader, period_key: str, offset_key: str, period_default: int, offset_default: int,
           L: int) -> list[bool]:
    """Layers i with i % period == offset (JambaConfig.layers_block_type / layers_num_experts)."""
    period = r.int(period_key, default=period_default)
    offset = r.int(offset_key, default=offset_default, minimum=0)
    if offset >= period:
        r.fail(offset_key, f"an integer < {period_key} ({period})", offset, involves=(period_key,))
    return [i % period == offset for i in range(L)]


def build_jamba(r: Reader) -> Model:
    d, L, V = sizes(r)
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", None, "hidden_size")
    tied, ctx = tied_context(r, False, 262144)
    d_ff = r.int("intermediate_size")
    n_experts, top_k, _ = experts(r, "num_experts", "num_experts_per_tok", "intermediate_size")
    attn = _every(r, "attn_layer_period", "attn_layer_offset", 8, 4, L)
    flags = [f and n_experts > 1 for f in _every(r, "expert_layer_period", "expert_layer_offset", 2, 1, L)]
    d_state, kernel = r.int("mamba_d_state", default=16), r.int("mamba_d_conv", default=4)
    expand = r.int("mamba_expand", default=2)
    if r.config.get("mamba_dt_rank", "auto") == "auto":      # JambaConfig: "auto" = ceil(hidden_size / 16)
        dt_rank = ceil(d / 16)
    else:
        dt_rank = r.int("mamba_dt_rank")
    conv_bias, proj_bias = r.bool("mamba_conv_bias", default=True), r.bool("mamba_proj_bias", default=False)
    d_inner = expand * d
    mixers = ["full_attention" if a else "mamba1" for a in attn]
    names = group_names(mixers, flags)

    def mixer(kind: str) -> Node:
        if kind == "full_attention":
            return attention(d, n_heads, n_kv, head_dim)
        return mamba1(d, d_inner, d_state, dt_rank, kernel, conv_bias=conv_bias, proj_bias=proj_bias,
                      inner_norms=True)

    def ffn(is_moe: bool) -> Node:
        if is_moe:
            return moe(d, n_experts, top_k, d_ff, router="router", name="feed_forward")
        return swiglu(d, d_ff, name="feed_forward")

    layers = build_layers(names, mixers, flags, mixer, ffn,
                          lambda: [norm("input_layernorm", d), norm("pre_ff_layernorm", d)])
    text = text_tree([embed_tokens(V, d)], layers, norm("final_layernorm", d),
                     lm_head(V, d, tied))
    state = mamba1_state(d_inner, d_state, kernel)
    arch = gqa_arch("jamba", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=mixers,
                    tied_embeddings=tied,
                    linear_state_elems=state, mixers={"mamba1": Mixer(state_elems=state)},
                    moe=moe_info(n_experts, top_k, d_ff, 0, 0, flags),
                    symbols=dict(BASE_SYMBOLS, d_h="hidden_size ÷ num_attention_heads", d_ff="intermediate_size",
                                 E="num_experts", k="num_experts_per_tok", d_e="intermediate_size",
                                 N="mamba_d_state", K_conv="mamba_d_conv", expand="mamba_expand", R_dt="mamba_dt_rank",
                                 L_full="attn_layer_period / attn_layer_offset",
                                 L_moe="expert_layer_period / expert_layer_offset"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("jamba", build_jamba, ('JambaForCausalLM',)),
)
