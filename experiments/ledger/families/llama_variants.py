"""Llama-shaped dense families with their own bias, norm and default conventions: granite (Granite 3.x dense),
ernie4_5 (ERNIE-4.5-0.3B) and hunyuan_v1_dense (Hunyuan-0.5B/1.8B/4B/7B, Hunyuan-MT) (transformers GraniteConfig,
Ernie4_5Config, HunYuanDenseV1Config and their models).

All three: RMSNorm before attention and MLP and at the end, a SwiGLU MLP (gate/up/down), GQA.
- granite: biases on q/k/v/o with attention_bias, on the MLP with mlp_bias; its embedding_multiplier,
  residual_multiplier, attention_multiplier and logits_scaling scale activations and have no parameters.
- ernie4_5: use_bias puts biases on q/k/v/o and the MLP; head_dim defaults to 128; the head is tied by default.
- hunyuan_v1_dense: biases on q/k/v/o with attention_bias, none in the MLP; every layer RMS-normalises q and k per
  head (``query_layernorm`` / ``key_layernorm``; transformers builds them whatever use_qk_norm says).
"""
from __future__ import annotations

from functools import partial

from ..arch import Model
from ..blocks import attention, decoder_layer, swiglu
from ..config import Reader
from ..family import Family
from ._common import BASE_SYMBOLS, gqa_arch, gqa_sizes, layer_norms, standard_text

# model_type: (bias key for q/k/v/o, bias key for the MLP or None, head_dim default, tied default, qk-norm names)
_VARIANTS = {
    "granite": ("attention_bias", "mlp_bias", None, False, None),
    "ernie4_5": ("use_bias", "use_bias", 128, True, None),
    "hunyuan_v1_dense": ("attention_bias", None, None, False, ("query_layernorm", "key_layernorm")),
}
_CONTEXT_DEFAULT = {"granite": 2048, "ernie4_5": 131072, "hunyuan_v1_dense": 2048}


def build_llama_variant(r: Reader, model_type: str) -> Model:
    attn_bias_key, mlp_bias_key, head_dim_default, tied_default, qk_norm_names = _VARIANTS[model_type]
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size", head_dim_default=head_dim_default)
    attn_bias = r.bool(attn_bias_key, default=False)
    mlp_bias = r.bool(mlp_bias_key, default=False) if mlp_bias_key else False
    tied = r.bool("tie_word_embeddings", default=tied_default)
    ctx = r.int("max_position_embeddings", default=_CONTEXT_DEFAULT[model_type])
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias,
                      qk_norm=qk_norm_names is not None, qk_norm_names=qk_norm_names or ("q_norm", "k_norm"))
    layer = decoder_layer(mixer, swiglu(d, d_ff, mlp_bias), layer_norms(d), "full_attention", L)
    text = standard_text([layer], V, d, tied)
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=["full_attention"] * L, tied_embeddings=tied,
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size"))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("granite", partial(build_llama_variant, model_type="granite"), ('GraniteForCausalLM',)),
    Family("ernie4_5", partial(build_llama_variant, model_type="ernie4_5"),
           ('Ernie4_5ForCausalLM', 'Ernie4_5_ForCausalLM')),
    Family("hunyuan_v1_dense", partial(build_llama_variant, model_type="hunyuan_v1_dense"),
           ('HunYuanDenseV1ForCausalLM',)),
)
