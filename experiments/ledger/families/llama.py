"""The llama family (llama, mistral, qwen2, qwen3, seed_oss): RMSNorm, SwiGLU, GQA, with each model_type's bias,
window and qk-norm conventions as data (``VARIANTS``; transformers LlamaConfig, MistralConfig, Qwen2Config,
Qwen3Config, SeedOssConfig). Seed-OSS (ByteDance Seed) puts biases on q/k/v with ``attention_bias`` (default true)
and on o_proj only with ``attention_out_bias``; its defaults are SeedOssConfig's.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Model
from ..blocks import attention, decoder_layer, norm, swiglu
from ..config import Reader
from ..family import Family
from ._common import gqa_arch, gqa_sizes, standard_text, tied_context
from ._parts import with_defaults


@dataclass(frozen=True)
class LlamaVariant:
    """What one model_type reads beyond the shared llama layout (its transformers config class and attention)."""
    attention_bias: bool = False    # reads attention_bias: biases on q/k/v and o_proj
    qkv_bias: bool = False          # q/k/v biases whatever the config says (Qwen2), o_proj without
    mlp_bias: bool = False          # reads mlp_bias: biases on the FFN's three matrices
    sliding_window: bool = False    # reads sliding_window: every layer attends to at most that many tokens
    qk_norm: bool = False           # per-head RMSNorm on q and k (Qwen3)
    o_bias_key: str | None = None   # o_proj's bias has its own key (Seed-OSS: attention_out_bias)
    attention_bias_default: bool = False
    defaults: tuple[tuple[str, int], ...] = ()   # the config class's defaults for keys a config may leave out
    architectures: tuple[str, ...] = ()   # the transformers classes a config names it by


VARIANTS = {
    "llama": LlamaVariant(attention_bias=True, mlp_bias=True, architectures=("LlamaForCausalLM",)),
    "mistral": LlamaVariant(sliding_window=True, architectures=("MistralForCausalLM",)),
    "qwen2": LlamaVariant(qkv_bias=True, architectures=("Qwen2ForCausalLM",)),
    "qwen3": LlamaVariant(attention_bias=True, qk_norm=True, architectures=("Qwen3ForCausalLM",)),
    "seed_oss": LlamaVariant(attention_bias=True, mlp_bias=True, o_bias_key="attention_out_bias",
                             attention_bias_default=True,
                             defaults=(("vocab_size", 155136), ("hidden_size", 4096), ("intermediate_size", 27648),
                                       ("num_hidden_layers", 64), ("num_attention_heads", 80),
                                       ("num_key_value_heads", 8), ("head_dim", 128),
                                       ("max_position_embeddings", 524288)),
                             architectures=("SeedOssForCausalLM",)),
}


def build_llama_like(r: Reader, model_type: str, variant: LlamaVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    r = with_defaults(r, dict(v.defaults)) if v.defaults else r
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    attn_bias = r.bool("attention_bias", default=v.attention_bias_default) if v.attention_bias else False
    o_bias = r.bool(v.o_bias_key, default=False) if v.o_bias_key else attn_bias
    mlp_bias = r.bool("mlp_bias", default=False) if v.mlp_bias else False
    tied, ctx = tied_context(r, False, 4096)
    window = r.int("sliding_window", default=None) if v.sliding_window else None
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias or v.qkv_bias, o_bias=o_bias,
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
