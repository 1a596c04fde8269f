"""Cohere's Command models: cohere (Command R / R+) and cohere2 (Command R7B / Command A), as transformers 5's
CohereConfig / Cohere2Config and modeling_cohere*.py build them.

A *parallel* block: one input_layernorm feeds attention and the SwiGLU FFN side by side, and both outputs are
added to the residual (x + attn(norm(x)) + mlp(norm(x))); so each layer has ONE norm, a LayerNorm with a weight
and no bias. The layer group is tagged kind "parallel" (blocks.parallel_decoder_layer); the tensors, FLOPs and
cache are those of a sequential layer. Input embeddings are tied to the output head by default (logit_scale
multiplies the logits and has no parameters).
- cohere: ``use_qk_norm`` (Command R+) adds per-head LayerNorm weights q_norm (heads x head_dim) and
  k_norm (KV heads x head_dim) to attention; head_dim is the config's or hidden_size / heads.
- cohere2: three sliding-window layers (``sliding_window``, default 4096) then one global layer without
  positional encoding (``sliding_window_pattern`` 4, or ``layer_types``); head_dim is always
  hidden_size / heads (Cohere2Config sets it so, whatever the file says).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Model, layer_runs
from ..blocks import attention, norm, parallel_decoder_layer, swiglu, with_norms
from ..config import Reader
from ..family import Family
from ..tree import Node, leaf
from ._common import BASE_SYMBOLS, gqa_arch, gqa_sizes, standard_text, tied_context
from ._windows import pattern_layer_types, window_of


@dataclass(frozen=True)
class CohereVariant:
    """What one model_type reads beyond the shared parallel-block layout."""
    head_dim_key: bool              # reads head_dim (else hidden_size / heads, whatever the file says)
    qk_norm_key: bool               # reads use_qk_norm (per-head q_norm / k_norm LayerNorm weights)
    window_pattern: int | None      # every n-th layer global, the others sliding (None: every layer global)
    architectures: tuple[str, ...] = ()


VARIANTS = {
    "cohere": CohereVariant(head_dim_key=True, qk_norm_key=True, window_pattern=None,
                            architectures=("CohereForCausalLM",)),
    "cohere2": CohereVariant(head_dim_key=False, qk_norm_key=False, window_pattern=4,
                             architectures=("Cohere2ForCausalLM",)),
}


def build_cohere(r: Reader, model_type: str, variant: CohereVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size",
                                                       head_dim_key="head_dim" if v.head_dim_key else None)
    attn_bias = r.bool("attention_bias", default=False)
    qk_norm = v.qk_norm_key and r.bool("use_qk_norm", default=False)
    tied, ctx = tied_context(r, True, 8192)
    types = pattern_layer_types(r, L, v.window_pattern) if v.window_pattern else ["full_attention"] * L
    window = window_of(r, types, 4096)

    def mixer() -> Node:
        attn = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias)
        if qk_norm:
            attn = with_norms(attn, [leaf("q_norm.weight", n_heads, head_dim, kind="norm", matmul=False),
                                     leaf("k_norm.weight", n_kv, head_dim, kind="norm", matmul=False)])
        return attn

    layers = [parallel_decoder_layer(mixer(), swiglu(d, d_ff), [norm("input_layernorm", d)], kind, n)
              for kind, n in layer_runs(types)]
    text = standard_text(layers, V, d, tied)
    symbols = dict(BASE_SYMBOLS, d_ff="intermediate_size")
    if not v.head_dim_key:
        symbols["d_h"] = "hidden_size ÷ num_attention_heads"
    if window:
        symbols.update(W="sliding_window", L_full="layer_types")
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                    tied_embeddings=tied, sliding_window=window, symbols=symbols)
    return Model(text, arch)


FAMILIES = tuple(Family(mt, partial(build_cohere, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
