"""phi (Phi-1, Phi-1.5, Phi-2) and phi3 (Phi-3, Phi-3.5, Phi-4) (transformers PhiConfig / PhiModel, Phi3Config /
Phi3Model).

phi: a parallel block (one LayerNorm with bias feeds both attention and the MLP; both outputs are added to the
residual), q/k/v and the output projection ``dense`` with biases, optional per-head LayerNorms on q and k
(qk_layernorm, width hidden_size / heads as transformers builds them), a two-matrix GELU MLP fc1/fc2 with biases,
``final_layernorm`` with bias, an lm_head with a bias (kept when the weight is tied). Partial rotary
(partial_rotary_factor) has no parameters.
phi3: pre-norm RMSNorm blocks with q, k and v fused into one ``qkv_proj`` and gate and up fused into one
``gate_up_proj``; no biases. With ``sliding_window`` set, every layer attends to at most that many tokens
(transformers passes it to every layer's attention and builds a sliding-window mask).
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, decoder_layer, fused_attention, gated_fused, mlp2, norm
from ..config import Reader
from ..family import Family
from ..tree import group, leaf
from ._common import (
    BASE_SYMBOLS,
    embed_tokens,
    every_layer_windowed,
    gqa_arch,
    gqa_sizes,
    standard_text,
    text_tree,
    tied_context,
)


def build_phi(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    qk_norm = r.bool("qk_layernorm", default=False)
    tied, ctx = tied_context(r, False, 2048)
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=True, o_bias=True, o_name="dense", qk_norm=qk_norm,
                      qk_norm_names=("q_layernorm", "k_layernorm"), qk_norm_bias=True,
                      qk_norm_width=max(d // n_heads, 1))
    layer = decoder_layer(mixer, mlp2(d, d_ff, "fc1", "fc2", bias=True), [norm("input_layernorm", d, True)],
                          "full_attention", L, kind="parallel")
    # lm_head = Linear(d, V, bias=True): tying shares the weight only, the bias stays its own
    head = group("lm_head", ([] if tied else [leaf("weight", V, d)]) + [leaf("bias", V, matmul=False)],
                 kind="lm_head")
    text = text_tree([embed_tokens(V, d)], [layer], norm("final_layernorm", d, True),
                     head)
    arch = gqa_arch("phi", d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=2, layer_types=["full_attention"] * L, tied_embeddings=tied,
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size"))
    return Model(text, arch)


def build_phi3(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    tied, ctx = tied_context(r, False, 4096)
    window = r.int("sliding_window", default=None)
    kind = "sliding_attention" if window else "full_attention"
    mixer = fused_attention(d, n_heads * head_dim, n_kv * head_dim)
    layer = decoder_layer(mixer, gated_fused(d, d_ff),
                          [norm("input_layernorm", d), norm("post_attention_layernorm", d)], kind, L)
    text = standard_text([layer], V, d, tied)
    arch = gqa_arch("phi3", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3,
                    tied_embeddings=tied, **every_layer_windowed(kind, L, window, n_heads, n_kv, head_dim))
    return Model(text, arch)


# the model_types (and architectures classes) this module reads; discovered by experiments/ledger/registry.py
FAMILIES = (
    Family("phi", build_phi, ('PhiForCausalLM',)),
    Family("phi3", build_phi3, ('Phi3ForCausalLM',)),
)
