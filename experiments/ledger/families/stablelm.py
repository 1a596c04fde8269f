"""stablelm (StableLM-3B-4E1T, StableLM-2, StableCode) (transformers StableLmConfig / modeling_stablelm.py).

GQA (q/k/v biases with ``use_qkv_bias``, none on o_proj), a SwiGLU MLP, LayerNorms with biases before attention,
before the MLP and at the end. With ``qk_layernorm`` every query head and every key/value head has its own
LayerNorm without bias (``q_layernorm.norms.{i}``, ``k_layernorm.norms.{i}``); with ``use_parallel_residual``
attention and MLP read the same normalised input (a parallel block, no post_attention_layernorm). Partial rotary
(``partial_rotary_factor``) has no parameters.
"""
from __future__ import annotations

from ..arch import Model
from ..blocks import attention, decoder_layer, norm, swiglu, with_norms
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import BASE_SYMBOLS, embed_tokens, gqa_arch, gqa_sizes, lm_head, text_tree, tied_context


def per_head_norms(name: str, n: int, head_dim: int) -> Node:
    return group(name, [group("norms", [leaf("weight", head_dim, kind="norm")], n=n)], kind="norm")


def build_stablelm(r: Reader) -> Model:
    d, L, V, d_ff, n_heads, n_kv, head_dim = gqa_sizes(r, "intermediate_size")
    tied, ctx = tied_context(r, False, 4096)
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=r.bool("use_qkv_bias", default=False))
    if r.bool("qk_layernorm", default=False):
        mixer = with_norms(mixer, [per_head_norms("q_layernorm", n_heads, head_dim),
                                   per_head_norms("k_layernorm", n_kv, head_dim)])
    parallel = r.bool("use_parallel_residual", default=False)
    norms = [norm("input_layernorm", d, True)] + ([] if parallel else [norm("post_attention_layernorm", d, True)])
    layer = decoder_layer(mixer, swiglu(d, d_ff), norms, "full_attention", L, kind="parallel" if parallel else "")
    text = text_tree([embed_tokens(V, d)], [layer], norm("norm", d, True), lm_head(V, d, tied))
    arch = gqa_arch("stablelm", d, L, V, ctx, n_heads, n_kv, head_dim, d_ff=d_ff, ffn_matrices=3,
                    layer_types=["full_attention"] * L, tied_embeddings=tied,
                    symbols=dict(BASE_SYMBOLS, d_h="hidden_size ÷ num_attention_heads", d_ff="intermediate_size"))
    return Model(text, arch)


FAMILIES = (
    Family("stablelm", build_stablelm, ("StableLmForCausalLM",)),
)
