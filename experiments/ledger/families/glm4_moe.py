"""glm4_moe (GLM-4.5 / 4.6 / 4.7): GQA attention with q/k/v biases (``attention_bias``; o_proj never has one)
and optional per-head q/k RMSNorm (``use_qk_norm``); the first ``first_k_dense_replace`` layers dense, the others
MoE with routed experts, ``n_shared_experts`` always-active shared experts and a sigmoid router whose
``e_score_correction_bias`` transformers keeps as a buffer (transformers Glm4MoeConfig / Glm4MoeDecoderLayer).

``num_nextn_predict_layers`` (transformers' ``num_mtp_layers``, default 1) MTP modules follow the last layer
in the checkpoint (model.layers.{num_hidden_layers}: embed_tokens, enorm, hnorm, eh_proj, a MoE decoder layer,
shared_head.norm / head, DeepSeek-V3's layout); transformers does not build them, so they are the ``mtp`` part.
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, moe, swiglu
from ..config import MAX_LAYERS, Reader
from ..family import Family
from ..tree import Node
from ._common import (  # shared helpers: a list alike another family's names the same ones, no repeated code
    build_layers,
    dense_d_ff,
    experts,
    gqa_arch,
    gqa_sizes,
    group_names,
    layer_norms,
    moe_arch,
    standard_text,
    tied_context,
)
from .deepseek_v2 import first_dense_flags, nextn_mtp


# ---------------------------------------------------------------------------------------------------------------
# glm4_moe: GQA (+ qk norm), dense first layers, routed + shared experts with a correction-bias buffer, nextn MTP
def build_glm4_moe(r: Reader) -> Model:
    d, L, V, n_heads, n_kv, head_dim = gqa_sizes(r)
    attn_bias = r.bool("attention_bias", default=False)
    qk_norm = r.bool("use_qk_norm", default=False)
    tied, ctx = tied_context(r, False, 131072)
    n_experts, top_k, expert_d_ff = experts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size")
    n_shared = r.int("n_shared_experts", default=1, minimum=0)
    flags, _ = first_dense_flags(r, L, default=1)
    d_ff = dense_d_ff(r, flags)
    n_mtp = r.int("num_nextn_predict_layers", default=1, minimum=0, maximum=MAX_LAYERS)
    mixers = ["full_attention"] * L
    names = group_names(mixers, flags)

    def mixer(_: str | None = None) -> Node:
        return attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, qk_norm=qk_norm)

    def ffn(moe_layer: bool) -> Node:
        if not moe_layer:
            assert d_ff is not None   # (read whenever a layer is dense)
            return swiglu(d, d_ff)
        return moe(d, n_experts, top_k, expert_d_ff, router_buffer="e_score_correction_bias", n_shared=n_shared,
                   shared_d_ff=expert_d_ff)

    layers = build_layers(names, mixers, flags, mixer, ffn, lambda: layer_norms(d))
    text = standard_text(layers, V, d, tied)
    mtp = nextn_mtp([True] * n_mtp, len(set(flags)) > 1, V, d, mixer, ffn)
    arch = gqa_arch("glm4_moe", d, L, V, ctx, n_heads, n_kv, head_dim, layer_types=mixers, tied_embeddings=tied,
                    **moe_arch(flags, d_ff, expert_d_ff, n_experts, top_k, n_shared, expert_d_ff,
                               moe_keys={"shared_d_ff_key": "moe_intermediate_size"},   # shared experts: that width too
                               E="n_routed_experts", k="num_experts_per_tok", d_e="moe_intermediate_size",
                               E_shared="n_shared_experts", L_dense="first_k_dense_replace",
                               L_mtp="num_nextn_predict_layers"))
    return Model(text, arch, mtp)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("glm4_moe", build_glm4_moe, ('Glm4MoeForCausalLM',)),
)
