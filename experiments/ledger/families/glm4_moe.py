"""glm4_moe (GLM-4.5 / 4.6 / 4.7): GQA attention with q/k/v biases (``attention_bias``; o_proj never has one)
and optional per-head q/k RMSNorm (``use_qk_norm``); the first ``first_k_dense_replace`` layers dense, the others
MoE with routed experts, ``n_shared_experts`` always-active shared experts and a sigmoid router whose
``e_score_correction_bias`` transformers keeps as a buffer (transformers Glm4MoeConfig / Glm4MoeDecoderLayer).

``num_nextn_predict_layers`` (transformers' ``num_mtp_layers``, default 1) MTP modules follow the last layer
in the checkpoint (model.layers.{num_hidden_layers}: embed_tokens, enorm, hnorm, eh_proj, a MoE decoder layer,
shared_head.norm / head, DeepSeek-V3's layout); transformers does not build them, so they are the ``mtp`` part.
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, moe, norm, swiglu
from ..config import Reader
from ..tree import leaf
from ._common import (BASE_SYMBOLS, build_layers, dense_d_ff, experts, group_names, heads, layer_norms, lm_head,
                      moe_info, text_tree)
from .deepseek_v2 import first_dense_flags, nextn_mtp


# ---------------------------------------------------------------------------------------------------------------
# glm4_moe: GQA (+ qk norm), dense first layers, routed + shared experts with a correction-bias buffer, nextn MTP
def build_glm4_moe(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size")
    attn_bias = r.bool("attention_bias", default=False)
    qk_norm = r.bool("use_qk_norm", default=False)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=131072)
    n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    n_shared = r.int("n_shared_experts", default=1, minimum=0)
    flags, _ = first_dense_flags(r, L, default=1)
    d_ff = dense_d_ff(r, flags)
    n_mtp = r.int("num_nextn_predict_layers", default=1, minimum=0)
    mixers = ["full_attention"] * L
    names = group_names(mixers, flags)

    def mixer(_=None):
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, qk_norm=qk_norm)

    def ffn(moe_layer):
        if not moe_layer:
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias", n_shared=n_shared,
                   shared_d_ff=expert_d_ff)

    layers = build_layers(names, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], layers, norm("norm", d),
                     lm_head(V, d, tied))
    mtp = nextn_mtp(n_mtp, True, flags, V, d, mixer, ffn)
    has_dense = not all(flags)
    arch = Arch(family="glm4_moe", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff if has_dense else expert_d_ff, ffn_matrices=3,
                layer_types=mixers, tied_embeddings=tied, kv_elems_per_token=2 * n_kv * head_dim,
                score_width=2 * n_heads * head_dim,
                moe=moe_info(n_experts, top_k, expert_d_ff, n_shared, expert_d_ff, flags),
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size" if has_dense else "moe_intermediate_size",
                             E="n_routed_experts", k="num_experts_per_tok", d_e="moe_intermediate_size",
                             E_shared="n_shared_experts", L_dense="first_k_dense_replace",
                             L_mtp="num_nextn_predict_layers"))
    return Model(text, arch, mtp)
