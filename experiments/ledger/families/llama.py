"""The llama family (llama, mistral, qwen2, qwen3): RMSNorm, SwiGLU, GQA, with each model_type's bias and qk-norm
conventions (transformers LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config).
"""
from __future__ import annotations

from functools import partial

from ..family import Family
from ..arch import Model
from ..blocks import attention, decoder_layer, norm, swiglu
from ..config import Reader
from ._common import gqa_arch, gqa_heads, sizes, standard_text, tied_context


# ---------------------------------------------------------------------------------------------------------------
# llama family: RMSNorm, SwiGLU, GQA; per-family bias and qk-norm conventions
_LLAMA_LIKE = {
    # model_type: (q/k/v bias default, o bias follows attention_bias, qk_norm)
    "llama": ("attention_bias", True, False),
    "mistral": (False, False, False),
    "qwen2": (True, False, False),
    "qwen3": ("attention_bias", True, True),
}

def build_llama_like(r: Reader, model_type: str) -> Model:
    qkv_rule, o_follows, qk_norm = _LLAMA_LIKE[model_type]
    d, L, V, d_ff = sizes(r, "intermediate_size")
    n_heads, n_kv, head_dim = gqa_heads(r, d)
    attn_bias = r.bool("attention_bias", default=False) if model_type in ("llama", "qwen3") else False
    qkv_bias = attn_bias if qkv_rule == "attention_bias" else qkv_rule
    mlp_bias = r.bool("mlp_bias", default=False) if model_type == "llama" else False
    tied, ctx = tied_context(r, False, 4096)
    window = r.int("sliding_window", default=None) if model_type == "mistral" else None
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=qkv_bias, o_bias=attn_bias and o_follows,
                      qk_norm=qk_norm)
    kind = "sliding_attention" if window else "full_attention"
    layer = decoder_layer(mixer, swiglu(d, d_ff, mlp_bias),
                          [norm("input_layernorm", d), norm("post_attention_layernorm", d)], kind, L)
    text = standard_text([layer], V, d, tied)
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=[kind] * L, tied_embeddings=tied, sliding_window=window,
                    symbols={"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size",
                             "d_ff": "intermediate_size", "h": "num_attention_heads", "h_kv": "num_key_value_heads",
                             "d_h": "head_dim", "T_max": "max_position_embeddings"})
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("llama", partial(build_llama_like, model_type="llama"), ('LlamaForCausalLM',)),
    Family("mistral", partial(build_llama_like, model_type="mistral"), ('MistralForCausalLM',)),
    Family("qwen2", partial(build_llama_like, model_type="qwen2"), ('Qwen2ForCausalLM',)),
    Family("qwen3", partial(build_llama_like, model_type="qwen3"), ('Qwen3ForCausalLM',)),
)
