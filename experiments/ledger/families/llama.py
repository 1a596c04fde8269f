"""The llama family (llama, mistral, qwen2, qwen3): RMSNorm, SwiGLU, GQA, with each model_type's bias, window and
qk-norm conventions as data (``VARIANTS``; transformers LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Model
from ..blocks import attention, decoder_layer, norm, swiglu
from ..config import Reader
from ..family import Family
from ._common import gqa_arch, gqa_heads, sizes, standard_text, tied_context


@dataclass(frozen=True)
class LlamaVariant:
    """What one model_type reads beyond the shared llama layout (its transformers config class and attention)."""
    attention_bias: bool = False    # reads attention_bias: biases on q/k/v and o_proj
    qkv_bias: bool = False          # q/k/v biases whatever the config says (Qwen2), o_proj without
    mlp_bias: bool = False          # reads mlp_bias: biases on the FFN's three matrices
    sliding_window: bool = False    # reads sliding_window: every layer attends to at most that many tokens
    qk_norm: bool = False           # per-head RMSNorm on q and k (Qwen3)
    architectures: tuple[str, ...] = ()   # the transformers classes a config names it by


VARIANTS = {
    "llama": LlamaVariant(attention_bias=True, mlp_bias=True, architectures=("LlamaForCausalLM",)),
    "mistral": LlamaVariant(sliding_window=True, architectures=("MistralForCausalLM",)),
    "qwen2": LlamaVariant(qkv_bias=True, architectures=("Qwen2ForCausalLM",)),
    "qwen3": LlamaVariant(attention_bias=True, qk_norm=True, architectures=("Qwen3ForCausalLM",)),
}


def build_llama_like(r: Reader, model_type: str, variant: LlamaVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    d, L, V, d_ff = sizes(r, "intermediate_size")
    n_heads, n_kv, head_dim = gqa_heads(r, d)
    attn_bias = r.bool("attention_bias", default=False) if v.attention_bias else False
    mlp_bias = r.bool("mlp_bias", default=False) if v.mlp_bias else False
    tied, ctx = tied_context(r, False, 4096)
    window = r.int("sliding_window", default=None) if v.sliding_window else None
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias or v.qkv_bias, o_bias=attn_bias,
                      qk_norm=v.qk_norm)
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


FAMILIES = tuple(Family(mt, partial(build_llama_like, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
