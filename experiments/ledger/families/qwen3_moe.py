"""qwen3_moe: Qwen3 attention (GQA, per-head q/k RMSNorm) with a routed-expert FFN, no shared expert
(transformers Qwen3MoeConfig).
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, moe, norm, swiglu
from ..config import Reader
from ..tree import leaf
from ._common import (BASE_SYMBOLS, build_layers, dense_d_ff, experts, group_names, heads, layer_norms, lm_head,
                      moe_info, qwen_moe_flags, text_tree)


# ---------------------------------------------------------------------------------------------------------------
# qwen3_moe: Qwen3 attention (GQA, per-head q/k RMSNorm) with a routed-expert FFN, no shared expert
def build_qwen3_moe(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim",
                                    "hidden_size")
    attn_bias = r.bool("attention_bias", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=32768)
    n_experts, top_k, expert_d_ff = experts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             allow_zero=True)
    flags = qwen_moe_flags(r, L, n_experts)
    d_ff = dense_d_ff(r, flags)
    # transformers: sliding_window applies (to every layer) only with use_sliding_window
    window = r.int("sliding_window", default=None) if r.bool("use_sliding_window", default=False) else None
    mixer_type = "sliding_attention" if window else "full_attention"
    mixers = [mixer_type] * L
    names = group_names(mixers, flags)

    def ffn(is_moe):
        return moe(d, n_experts, top_k, expert_d_ff) if is_moe else swiglu(d, d_ff)

    layers = build_layers(names, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                                               qk_norm=True),
                           ffn, lambda: layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))
    has_dense = not all(flags)
    arch = Arch(family="qwen3_moe", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff if has_dense else expert_d_ff, ffn_matrices=3,
                layer_types=mixers,
                tied_embeddings=tied, sliding_window=window, kv_elems_per_token=2 * n_kv * head_dim,
                score_width=2 * n_heads * head_dim,
                moe=moe_info(n_experts, top_k, expert_d_ff, 0, 0, flags),
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             E="num_experts", k="num_experts_per_tok", d_e="moe_intermediate_size"))
    return Model(text, arch)
