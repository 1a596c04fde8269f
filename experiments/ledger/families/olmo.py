"""AI2's OLMo models: olmo (OLMo-1B/7B, transformers OlmoConfig) and olmo2 (OLMo-2, Olmo2Config).

- olmo: pre-norm layers whose LayerNorms are *non-parametric* (OlmoLayerNorm: F.layer_norm with no weight and
  no bias), so input_layernorm, post_attention_layernorm and the final norm hold 0 parameters; they are listed
  with 0 so the ledger shows where they sit. SwiGLU FFN; q/k/v/o biases with ``attention_bias``; clip_qkv only
  clamps activations.
- olmo2: RMSNorm *after* each sub-block (post_attention_layernorm, post_feedforward_layernorm; no
  input_layernorm) and q_norm / k_norm over all heads at once (widths heads x head_dim and KV heads x head_dim,
  not per head).
Neither ties embeddings by default.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..arch import Model
from ..blocks import attention, decoder_layer, norm, swiglu, with_norms
from ..config import Reader
from ..family import Family
from ..tree import Node, group, leaf
from ._common import BASE_SYMBOLS, embed_tokens, gqa_arch, gqa_heads, lm_head, sizes, text_tree, tied_context


def parameterless_norm(name: str) -> Node:
    """A LayerNorm without affine parameters: present in the model, 0 parameters."""
    return group(name, [], kind="norm")


@dataclass(frozen=True)
class OlmoVariant:
    """Where one model_type puts its norms and whether they hold weights."""
    layer_norms: tuple[str, ...]    # a layer's norms, in order
    parametric: bool                # RMSNorm weights (olmo2), or LayerNorms without parameters (olmo)
    whole_qk_norm: bool             # q_norm / k_norm over all heads at once
    architectures: tuple[str, ...] = ()


VARIANTS = {
    "olmo": OlmoVariant(("input_layernorm", "post_attention_layernorm"), parametric=False, whole_qk_norm=False,
                        architectures=("OlmoForCausalLM",)),
    "olmo2": OlmoVariant(("post_attention_layernorm", "post_feedforward_layernorm"), parametric=True,
                         whole_qk_norm=True, architectures=("Olmo2ForCausalLM",)),
}


def build_olmo(r: Reader, model_type: str, variant: OlmoVariant | None = None) -> Model:
    v = variant or VARIANTS[model_type]
    d, L, V, d_ff = sizes(r, "intermediate_size")
    n_heads, n_kv, head_dim = gqa_heads(r, d)
    attn_bias = r.bool("attention_bias", default=False)
    tied, ctx = tied_context(r, False, 2048)
    mixer = attention(d, n_heads, n_kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias)
    if v.whole_qk_norm:
        mixer = with_norms(mixer, [leaf("q_norm.weight", n_heads * head_dim, kind="norm"),
                                   leaf("k_norm.weight", n_kv * head_dim, kind="norm")])

    def a_norm(name):
        return norm(name, d) if v.parametric else parameterless_norm(name)
    norms = [a_norm(name) for name in v.layer_norms]
    final_norm = a_norm("norm")
    layer = decoder_layer(mixer, swiglu(d, d_ff), norms, "full_attention", L)
    text = text_tree([embed_tokens(V, d)], [layer], final_norm, lm_head(V, d, tied))
    arch = gqa_arch(model_type, d, L, V, ctx, n_heads, n_kv, head_dim,
                    d_ff=d_ff, ffn_matrices=3, layer_types=["full_attention"] * L, tied_embeddings=tied,
                    symbols=dict(BASE_SYMBOLS, d_ff="intermediate_size"))
    return Model(text, arch)


FAMILIES = tuple(Family(mt, partial(build_olmo, model_type=mt), v.architectures) for mt, v in VARIANTS.items())
