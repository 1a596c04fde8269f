"""The llama family (llama, mistral, qwen2, qwen3): RMSNorm, SwiGLU, GQA, with each model_type's bias and qk-norm
conventions (transformers LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config).
"""
from __future__ import annotations

from ..arch import Arch, Model
from ..blocks import attention, decoder_layer, norm, swiglu
from ..config import Reader
from ..tree import leaf
from ._common import heads, lm_head, text_tree


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
    d, L, V = r.int("hidden_size"), r.int("num_hidden_layers", maximum=10**4), r.int("vocab_size")
    d_ff = r.int("intermediate_size")
    n_heads, n_kv, head_dim = heads(r, d, "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size")
    attn_bias = r.bool("attention_bias", default=False) if model_type in ("llama", "qwen3") else False
    qkv_bias = attn_bias if qkv_rule == "attention_bias" else qkv_rule
    mlp_bias = r.bool("mlp_bias", default=False) if model_type == "llama" else False
    tied = r.bool("tie_word_embeddings", default=False)
    ctx = r.int("max_position_embeddings", default=4096)
    window = r.int("sliding_window", default=None) if model_type == "mistral" else None
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=qkv_bias, o_bias=attn_bias and o_follows,
                      qk_norm=qk_norm)
    kind = "sliding_attention" if window else "full_attention"
    layer = decoder_layer(mixer, swiglu(d, d_ff, mlp_bias),
                          [norm("input_layernorm", d), norm("post_attention_layernorm", d)], kind, L)
    text = text_tree([leaf("embed_tokens.weight", V, d, matmul=False)], [layer], norm("norm", d),
                     lm_head(V, d, tied))
    arch = Arch(family=model_type, d_model=d, n_layers=L, vocab_size=V, context_length=ctx, n_heads=n_heads,
                n_kv_heads=n_kv, head_dim=head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=[kind] * L,
                tied_embeddings=tied,
                sliding_window=window, kv_elems_per_token=2 * n_kv * head_dim, score_width=2 * n_heads * head_dim,
                symbols={"d": "hidden_size", "L": "num_hidden_layers", "V": "vocab_size",
                         "d_ff": "intermediate_size", "h": "num_attention_heads", "h_kv": "num_key_value_heads",
                         "d_h": "head_dim", "T_max": "max_position_embeddings"})
    return Model(text, arch)
