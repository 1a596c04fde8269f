"""glm4 (GLM-4-9B-0414, GLM-4-32B-0414, GLM-Z1) (transformers Glm4Config / Glm4Model).

GQA with biases on q, k and v (attention_bias, default true) but not on o_proj; head_dim defaults to 128 (the
config class's default); gate and up fused into one ``mlp.gate_up_proj``; FOUR RMSNorms per layer: before
attention (input_layernorm), on the attention output (post_self_attn_layernorm), before the MLP
(post_attention_layernorm) and on the MLP output (post_mlp_layernorm). Partial rotary has no parameters.
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, decoder_layer, gated_fused, norm
from ..config import Reader
from ..family import Family
from ._common import BASE_SYMBOLS, gqa_arch, gqa_heads, sizes, standard_text, tied_context


def build_glm4(r: Reader) -> Model:
    d, L, V, d_ff = sizes(r, "intermediate_size")
    n_heads, n_kv, head_dim = gqa_heads(r, d, head_dim_default=128)   # Glm4Config default
    bias = r.bool("attention_bias", default=True)
    tied, ctx = tied_context(r, False, 131072)
    norms = [norm(name, d) for name in ("input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm",
                                        "post_mlp_layernorm")]
    layer = decoder_layer(attention(d, n_heads, n_kv, head_dim, qkv_bias=bias), gated_fused(d, d_ff), norms,
                          "full_attention", L)
    text = standard_text([layer], V, d, tied)
    arch = gqa_arch("glm4", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=["full_attention"] * L, tied_embeddings=tied,
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("glm4", build_glm4, ('Glm4ForCausalLM',)),
)
