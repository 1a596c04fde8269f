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

from functools import partial

from ..family import Family
from ..arch import Model
from ..blocks import attention, norm, parallel_decoder_layer, swiglu, with_norms
from ..config import Reader
from ..tree import leaf
from ._common import BASE_SYMBOLS, gqa_arch, gqa_heads, layer_runs, sizes, standard_text, tied_context
from ._windows import pattern_layer_types, window_of


def build_cohere(r: Reader, model_type: str) -> Model:
    d, L, V, d_ff = sizes(r, "intermediate_size")
    head_dim_key = "head_dim" if model_type == "cohere" else None
    n_heads, n_kv, head_dim = gqa_heads(r, d, head_dim_key=head_dim_key)
    attn_bias = r.bool("attention_bias", default=False)
    qk_norm = model_type == "cohere" and r.bool("use_qk_norm", default=False)
    tied, ctx = tied_context(r, True, 8192)
    types = pattern_layer_types(r, L, 4) if model_type == "cohere2" else ["full_attention"] * L
    window = window_of(r, types, 4096)

    def mixer():
        attn = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias)
        if qk_norm:
            attn = with_norms(attn, [leaf("q_norm.weight", n_heads, head_dim, kind="norm", matmul=False),
                                     leaf("k_norm.weight", n_kv, head_dim, kind="norm", matmul=False)])
        return attn

    layers = [parallel_decoder_layer(mixer(), swiglu(d, d_ff), [norm("input_layernorm", d)], kind, n)
              for kind, n in layer_runs(types)]
    text = standard_text(layers, V, d, tied)
    symbols = dict(BASE_SYMBOLS, d_ff="intermediate_size")
    if model_type == "cohere2":
        symbols["d_h"] = "hidden_size ÷ num_attention_heads"
    if window:
        symbols.update(W="sliding_window", L_full="layer_types")
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3, layer_types=types,
                    tied_embeddings=tied, sliding_window=window, symbols=symbols)
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("cohere", partial(build_cohere, model_type="cohere"), ('CohereForCausalLM',)),
    Family("cohere2", partial(build_cohere, model_type="cohere2"), ('Cohere2ForCausalLM',)),
)
