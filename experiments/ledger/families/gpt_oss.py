"""gpt_oss: GQA with q/k/v/o biases and one learned sink logit per head, alternating sliding / full attention,
every layer MoE with a router bias and per-expert biases (transformers GptOssConfig).
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, moe, norm
from ..config import Reader
from ..tree import leaf
from ._common import BASE_SYMBOLS, build_layers, experts, heads, layer_norms, lm_head, moe_info, text_tree


# ---------------------------------------------------------------------------------------------------------------
# gpt_oss: GQA with q/k/v/o biases and one learned sink logit per head, alternating sliding / full attention
# (same shapes), every layer MoE with router bias and per-expert biases, no shared expert
_GPT_OSS_MIXERS = ("sliding_attention", "full_attention")

def build_gpt_oss(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                                     head_dim_default=64)  # GptOssConfig default
    attn_bias = r.bool("attention_bias", default=True)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=131072)
    experts_key = "num_local_experts" if r.has("num_local_experts") or not r.has("num_experts") else "num_experts"
    n_experts, top_k, expert_d_ff = experts(r, experts_key, "num_experts_per_tok", "intermediate_size")
    if r.has("layer_types"):
        mixers = r.str_list("layer_types", choices=_GPT_OSS_MIXERS)
        if mixers and len(mixers) != L:
            r.fail("layer_types", f"a list of {L} entries (num_hidden_layers)", f"{len(mixers)} entries",
                   involves=("num_hidden_layers",))
        mixers = mixers if len(mixers) == L else ["full_attention"] * L
    else:                                               # GptOssConfig: even layers sliding, odd layers full
        mixers = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(L)]
    window = r.int("sliding_window", default=128) if "sliding_attention" in mixers else None
    flags = [True] * L

    def ffn(_):
        return moe(d, n_experts, top_k, expert_d_ff, router="router", router_bias=True, expert_bias=True)

    layers = build_layers(mixers, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                                               sinks=True),
                           ffn, lambda: layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))
    arch = Arch(family="gpt_oss", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=expert_d_ff, ffn_matrices=3, layer_types=mixers,
                tied_embeddings=tied,
                sliding_window=window, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                moe=moe_info(n_experts, top_k, expert_d_ff, 0, 0, flags),
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size", E=experts_key, k="num_experts_per_tok",
                             d_e="intermediate_size", W="sliding_window", L_full="layer_types"))
    return Model(text, arch)
