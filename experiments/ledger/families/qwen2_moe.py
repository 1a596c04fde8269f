"""qwen2_moe: Qwen2 attention (GQA, q/k/v biases per ``qkv_bias``, no qk norm) with an MoE FFN of routed experts
plus ONE always-active shared expert of width ``shared_expert_intermediate_size`` whose output passes a sigmoid
gate (``shared_expert_gate``: hidden -> 1); dense layers by ``mlp_only_layers`` / ``decoder_sparse_step``
(transformers Qwen2MoeConfig / Qwen2MoeDecoderLayer). With ``use_sliding_window`` the even-numbered layers below
``max_window_layers`` use a sliding window (Qwen2MoeConfig.layer_types), unless ``layer_types`` is given.
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, moe, norm, swiglu
from ..config import Reader
from ..tree import leaf
from ._common import (BASE_SYMBOLS, build_layers, dense_d_ff, experts, group_names, heads, layer_norms, lm_head,
                      moe_info, qwen_moe_flags, text_tree)


# ---------------------------------------------------------------------------------------------------------------
# qwen2_moe: Qwen2 attention + routed experts + one gated shared expert
_QWEN2_MOE_MIXERS = ("full_attention", "sliding_attention")

def qwen2_moe_layer_types(r: Reader, L: int) -> list[str]:
    if r.has("layer_types"):
        types = r.str_list("layer_types", choices=_QWEN2_MOE_MIXERS)
        if types and len(types) != L:
            r.fail("layer_types", f"a list of {L} entries (num_hidden_layers)", f"{len(types)} entries",
                   involves=("num_hidden_layers",))
        return types if len(types) == L else ["full_attention"] * L
    if not r.bool("use_sliding_window", default=False):
        return ["full_attention"] * L
    below = r.int("max_window_layers", default=28, minimum=0)
    return ["sliding_attention" if i % 2 == 0 and i < below else "full_attention" for i in range(L)]

def build_qwen2_moe(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim",
                                    "hidden_size")
    qkv_bias = r.bool("qkv_bias", default=True)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=32768)
    n_experts, top_k, expert_d_ff = experts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             allow_zero=True)
    shared_d_ff = r.int("shared_expert_intermediate_size") if n_experts else 0
    flags = qwen_moe_flags(r, L, n_experts)
    d_ff = dense_d_ff(r, flags)
    mixers = qwen2_moe_layer_types(r, L)
    window = r.int("sliding_window", default=4096) if "sliding_attention" in mixers else None
    names = group_names(mixers, flags)

    def ffn(is_moe):
        if not is_moe:
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, n_shared=1, shared_d_ff=shared_d_ff,
                   shared_name="shared_expert", shared_gate=True)

    layers = build_layers(names, mixers, flags,
                           lambda _: attention(d, n_heads, n_kv, head_dim, qkv_bias=qkv_bias),
                           ffn, lambda: layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))
    has_dense = not all(flags)
    arch = Arch(family="qwen2_moe", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff if has_dense else expert_d_ff, ffn_matrices=3,
                layer_types=mixers, tied_embeddings=tied, sliding_window=window,
                kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                moe=moe_info(n_experts, top_k, expert_d_ff, 1, shared_d_ff, flags),
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             E="num_experts", k="num_experts_per_tok", d_e="moe_intermediate_size",
                             d_s="shared_expert_intermediate_size",
                             **({"W": "sliding_window"} if window else {})))
    return Model(text, arch)
