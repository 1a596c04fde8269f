"""glm4 (GLM-4-9B-0414, GLM-4-32B-0414, GLM-Z1) (transformers Glm4Config / Glm4Model).

GQA with biases on q, k and v (attention_bias, default true) but not on o_proj; head_dim defaults to 128 (the
config class's default); gate and up fused into one ``mlp.gate_up_proj``; FOUR RMSNorms per layer: before
attention (input_layernorm), on the attention output (post_self_attn_layernorm), before the MLP
(post_attention_layernorm) and on the MLP output (post_mlp_layernorm). Partial rotary has no parameters.
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, decoder_layer, gated_fused, norm
from ..config import Reader
from ..tree import leaf
from ._common import BASE_SYMBOLS, heads, lm_head, text_tree


def build_glm4(r: Reader) -> Model:
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    d_ff = r.int("intermediate_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                                     head_dim_default=128)   # Glm4Config default
    bias = r.bool("attention_bias", default=True)
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=131072)
    norms = [norm(name, d) for name in ("input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm",
                                        "post_mlp_layernorm")]
    layer = decoder_layer(attention(d, n_heads, n_kv, head_dim, qkv_bias=bias), gated_fused(d, d_ff), norms,
                          "full_attention", L)
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], [layer], norm("norm", d),
                     lm_head(V, d, tied))
    arch = Arch(family="glm4", d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=["full_attention"] * L,
                tied_embeddings=tied, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size"))
    return Model(text, arch)
